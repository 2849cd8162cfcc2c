// Delivery to one Varnish node: its main and repurge lanes' loops (read, apply, commit) over the log.
import type { Logger } from 'pino';
import { applyBatch, type Applied, type BatchContext } from './apply-batch.js';
import type { Config } from '../config/load.js';
import { recoverOverrun, skipAfterRestart, type JumpContext } from './cursor-jumps.js';
import { type Lane, NodeLanes, RepurgeLane } from './lane.js';
import type { Metrics } from '../metrics.js';
import { NodeHealth } from './node-health.js';
import { NodeSender } from './node-sender.js';
import { refreshTargets, type PageRefresher } from './page-refresher.js';
import { backoffMs, Sleeper } from './retry.js';
import { eventRef } from '../model/event-model.js';
import { compareIds, type LogEntry, type StreamLog } from '../store/stream-log.js';
import type { VarnishClient } from './varnish-client.js';

/** Delivery settings as config.ts parsed them; `sites` are banned when a node's cursor fell off
 * the log (besides every site the log has seen). */
export type DeliveryOptions = Pick<
  Config,
  | 'coalesceMs' | 'batchMax' | 'headerBudget' | 'urlEscalateThreshold' | 'urlBanMin' | 'nodeConcurrency'
  | 'retryBaseMs' | 'retryMaxMs' | 'repurgeDelaysMs' | 'pollMs' | 'sites' | 'newNodeCatchupMs'
>;

export interface DeliveryHooks {
  /** main lane applied these entries on this node */
  onApplied(node: string, entries: LogEntry[]): void;
}

const nothingApplied = (): Applied => ({ results: new Map<string, string>(), lastRefusedAt: undefined, failed: new Set() });

/**
 * Lanes read the durable log from their own cursor:
 *  - main: applies every event, then advances the node's cursor (only after the node answered 2xx,
 *    or refused a request in every shape);
 *  - one repurge lane per delay of `repurgeDelaysMs` (none by default; e.g. 300 ms and 2 s for
 *    nodes running other VCL than the shipped one): sends every invalidation again (soft ones
 *    soft) once it is that old (closes the in-flight-fetch race, docs/protocol.md §2), durably,
 *    because each has a cursor too. A repurge lane batches whatever became due together, at
 *    most once per `gapMs`, so bursts stay a few requests.
 * A request that failed transiently is retried with backoff until it succeeds, one the node
 * refused as built goes out in another shape at once (node-sender.ts); each node has its own
 * loops and connection pool, so a slow or dead node delays no other node.
 */
export class NodeDelivery {
  private readonly lanes: NodeLanes;
  private readonly sleeper = new Sleeper();
  private readonly batch: BatchContext;
  private readonly jumps: JumpContext;
  private loops: Promise<void>[] = [];
  private resyncRequested = false;

  constructor(
    readonly node: string,
    private readonly client: VarnishClient,
    private readonly log: StreamLog,
    private readonly opts: DeliveryOptions,
    private readonly logger: Logger,
    private readonly metrics: Metrics,
    private readonly hooks: DeliveryHooks,
    /** re-fetches the pages of what the main lane applied (undefined: refresh off) */
    private readonly refresher?: PageRefresher,
  ) {
    this.lanes = new NodeLanes(node, opts.repurgeDelaysMs, opts.newNodeCatchupMs);
    const health = new NodeHealth(node, log, metrics, logger);
    const sender = new NodeSender(node, client, opts, health, this.sleeper, metrics, logger);
    this.batch = { node, opts, sender, metrics, logger };
    this.jumps = { node, lanes: this.lanes, log, sender, metrics, logger };
  }

  get appliedSeq(): number {
    return this.lanes.main.seq;
  }

  private get stopped(): boolean {
    return this.sleeper.stopped;
  }

  async start(): Promise<void> {
    // Cursors come from Redis; until Redis answers, keep trying (the loops below do the same).
    for (;;) {
      try {
        await this.loadLanes();
        break;
      } catch (err) {
        if (this.stopped) return;
        this.logger.warn({ node: this.node, err: String(err) }, 'cannot load node cursors yet; retrying');
        await this.sleeper.sleep(1000);
        if (this.stopped) return;
      }
    }
    const { main, repurges } = this.lanes;
    this.logger.info({ node: this.node, cursor: main.cursor }, 'node delivery started; replaying from cursor');
    main.wake();
    this.loops = [this.loop(main, 'main'), ...repurges.map((lane) => this.loop(lane, lane.name))];
  }

  wake(): void {
    this.lanes.main.wake();
  }

  /** Loads the lanes' cursors from Redis; says so when the node is new to Redis and catches up. */
  private async loadLanes(): Promise<void> {
    const catchup = await this.lanes.load(this.log);
    if (!catchup) return;
    this.logger.info(
      { node: this.node, catchupMs: this.opts.newNodeCatchupMs, entries: catchup.entries, ...(catchup.first !== undefined ? { from: catchup.first } : {}) },
      catchup.entries > 0
        ? 'new node: replaying the events logged in the catch-up window before it was found'
        : 'new node: nothing logged in the catch-up window before it was found; starting at the end of the log',
    );
  }

  async stop(): Promise<void> {
    this.sleeper.stop();
    for (const lane of this.lanes.all) {
      lane.wake();
      lane.clear();
    }
    // In-flight requests finish (bounded by the node timeout); retries stop. Unapplied events
    // stay in the log and are replayed from the cursor by the next worker. Queued refreshes are
    // dropped: they are best effort.
    await Promise.allSettled([...this.loops, this.refresher?.stop()]);
    await this.client.close();
  }

  /**
   * After Redis reconnected (perhaps to a new primary): reload the cursors from Redis before the
   * next read, so commits the old primary took with it are redone rather than left unrecorded.
   */
  resync(): void {
    this.resyncRequested = true;
    this.lanes.main.wake();
  }

  private async loop(lane: Lane, name: string): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      await lane.wait(this.opts.pollMs);
      if (this.stopped) break;
      try {
        if (lane instanceof RepurgeLane) await this.drainRepurge(lane);
        else await this.drainMain();
        failures = 0;
      } catch (err) {
        failures++;
        this.logger.warn({ node: this.node, lane: name, err: String(err) }, 'delivery loop error (Redis?); will retry');
        await this.sleeper.sleep(backoffMs(failures, this.opts.retryBaseMs, this.opts.retryMaxMs));
        lane.wake();
      }
    }
  }

  private async drainMain(): Promise<void> {
    const main = this.lanes.main;
    if (this.opts.coalesceMs > 0) await this.sleeper.sleep(this.opts.coalesceMs);
    while (!this.stopped) {
      if (this.resyncRequested) {
        this.resyncRequested = false;
        try {
          await this.loadLanes();
        } catch (err) {
          this.resyncRequested = true;
          throw err;
        }
      }
      const { entries, overrun, last, malformed } = await this.log.read(main.cursor, main.seqKnown ? main.seq : undefined, this.opts.batchMax);
      if (overrun) {
        await recoverOverrun(this.jumps, this.opts.sites);
        continue;
      }
      if (!last) return;
      if (malformed.length > 0) {
        // An entry no version of the ingest writes (not JSON): retrying cannot help. Skip it.
        this.metrics.deadLettered.inc({ node: this.node, reason: 'malformed' }, malformed.length);
        this.logger.error({ node: this.node, entries: malformed.slice(0, 20) }, 'log entries without a readable event: skipped');
      }
      const applied = entries.length > 0 ? await applyBatch(this.batch, entries, 'main') : nothingApplied();
      if (!applied) return; // stopping: the cursor stays, the entries are replayed on restart
      if (!(await this.log.commitBatch(this.node, applied.results, last.streamId, last.seq, main.cursor))) {
        // The cursor in Redis is not where this worker read from: Redis failed over (or restarted)
        // and lost the last commits, or another worker moved it. Re-read from Redis's cursor:
        // what was sent is sent again (idempotent) and this time recorded.
        this.logger.warn({ node: this.node, cursor: main.cursor }, 'node cursor in Redis moved under this worker (Redis failover?): re-reading from it');
        await this.loadLanes();
        continue;
      }
      main.cursor = last.streamId;
      main.seq = last.seq;
      main.seqKnown = last.seq > 0;
      this.hooks.onApplied(this.node, entries);
      // After the invalidations: pages of hard ones first (their readers wait on the origin), then
      // those of soft ones in the background (their readers get the stale copy meanwhile).
      const done = entries.filter((e) => !applied.failed.has(eventRef(e.event.site, e.event.id)));
      this.refresher?.enqueue(refreshTargets(done.filter((e) => !e.event.soft)));
      this.refresher?.enqueue(refreshTargets(done.filter((e) => e.event.soft)), true);
      for (const lane of this.lanes.repurges) lane.wakeAfter(lane.delayMs);
      if (applied.lastRefusedAt !== undefined) await skipAfterRestart(this.jumps, applied.lastRefusedAt);
    }
  }

  private async drainRepurge(lane: RepurgeLane): Promise<void> {
    const main = this.lanes.main;
    while (!this.stopped) {
      const due = `${Date.now() - lane.delayMs}`;
      const end = compareIds(main.cursor, due) < 0 ? main.cursor : due;
      if (compareIds(lane.cursor, end) >= 0) break;
      const { entries, last: lastRead } = await this.log.read(lane.cursor, undefined, this.opts.batchMax, end);
      if (!lastRead) {
        // nothing between the cursors (trimmed or skipped): catch up
        lane.cursor = end.includes('-') ? end : `${end}-0`;
        await this.log.saveCursor(this.node, lane.field, lane.cursor);
        break;
      }
      // Soft invalidations too: a grace refresh that read the database before the edit and
      // finished after the soft purge would otherwise keep the old page for its whole TTL.
      const applied = entries.length > 0 ? await applyBatch(this.batch, entries, lane.name) : nothingApplied();
      if (!applied) return;
      const last = lastRead.streamId;
      await this.log.saveCursor(this.node, lane.field, last);
      lane.cursor = last;
    }
    // Entries applied by the main lane but not yet due: come back when the oldest is due (and
    // not sooner than the lane's gap, so a stream of small batches is repurged in a few).
    if (compareIds(lane.cursor, main.cursor) < 0) {
      const oldestMs = Number(lane.cursor.split('-')[0]);
      lane.wakeAfter(Math.max(lane.gapMs, oldestMs + lane.delayMs - Date.now()));
    }
  }
}
