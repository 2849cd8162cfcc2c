// Delivery to one Varnish node. Lanes read the durable log from their own cursor:
//  - main: applies every event, then advances the node's cursor (only after the node answered 2xx);
//  - one repeat lane per delay of `repurgeDelaysMs` (300 ms and 2 s by default): repeats every
//    invalidation (soft ones soft) once it is that old (closes the in-flight-fetch race,
//    docs/protocol.md §2), durably, because each has a cursor too. A repeat lane batches
//    whatever became due together, at most once per `gapMs`, so bursts stay a few requests.
// A failing request is retried with exponential backoff and full jitter until it succeeds; each
// node has its own loops and connection pool, so a slow or dead node delays no other node.
import type { Logger } from 'pino';
import { coalesce, type Invalidation, type Plan } from './coalesce.js';
import type { Config } from './config.js';
import type { Metrics } from './metrics.js';
import { compareIds, repurgeField, type LogEntry, type StreamLog } from './stream-log.js';
import { SendError, type SendResult, type VarnishClient } from './varnish-client.js';

/** Delivery settings as config.ts parsed them; `sites` are banned when a node's cursor fell off
 * the log (besides every site the log has seen). */
export type DeliveryOptions = Pick<
  Config,
  | 'coalesceMs' | 'batchMax' | 'headerBudget' | 'urlEscalateThreshold' | 'urlBanMin' | 'nodeConcurrency'
  | 'retryBaseMs' | 'retryMaxMs' | 'repurgeDelaysMs' | 'pollMs' | 'sites'
>;

export interface DeliveryHooks {
  /** main lane applied these entries on this node */
  onApplied(node: string, entries: LogEntry[]): void;
}

/** `main` or `repurge-<delay>` (the lane label of purger_invalidations_sent_total) */
type LaneName = string;

class Lane {
  cursor = '0-0';
  seq = 0;
  /** false after a jump to a position that is not an entry (restart skip): no gap check then */
  seqKnown = true;
  private wakeResolve: (() => void) | undefined;
  private woken = false;
  private timer: NodeJS.Timeout | undefined;

  wake(): void {
    this.woken = true;
    const r = this.wakeResolve;
    this.wakeResolve = undefined;
    r?.();
  }

  wakeAfter(ms: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wake();
    }, Math.max(0, ms));
  }

  /** resolves on wake() or after `pollMs` */
  wait(pollMs: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wakeResolve = undefined;
        resolve();
      }, pollMs);
      this.wakeResolve = () => {
        clearTimeout(t);
        this.woken = false;
        resolve();
      };
    });
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

class RepurgeLane extends Lane {
  readonly name: LaneName;
  readonly field: string;
  /** least time between two batches of this lane: what becomes due meanwhile goes out together */
  readonly gapMs: number;

  constructor(readonly delayMs: number) {
    super();
    this.name = `repurge-${delayMs}`;
    this.field = repurgeField(delayMs);
    this.gapMs = Math.max(20, Math.min(100, Math.round(delayMs / 10)));
  }
}

interface Applied {
  results: Map<string, string>;
  lastRefusedAt: number | undefined;
}

const RESTART_MARGIN_MS = 1000;

/**
 * Plans by batch: nodes that read the same range get the same (shared) entries array, and the
 * plan depends only on it and the coalescing settings, so it is computed once for all of them.
 */
const plans = new WeakMap<readonly LogEntry[], { key: string; result: { plan: Plan; unplannable: Map<string, string> } }>();

export class NodeDelivery {
  private readonly main = new Lane();
  private readonly repurges: RepurgeLane[];
  private stopped = false;
  private readonly sleepers = new Set<() => void>();
  private loops: Promise<void>[] = [];
  private up: boolean | undefined;
  private downSince: string | undefined;
  private resyncRequested = false;

  constructor(
    readonly node: string,
    private readonly client: VarnishClient,
    private readonly log: StreamLog,
    private readonly opts: DeliveryOptions,
    private readonly logger: Logger,
    private readonly metrics: Metrics,
    private readonly hooks: DeliveryHooks,
  ) {
    this.repurges = opts.repurgeDelaysMs.map((d) => new RepurgeLane(d));
  }

  get appliedSeq(): number {
    return this.main.seq;
  }

  async start(): Promise<void> {
    // Cursors come from Redis; until Redis answers, keep trying (the loops below do the same).
    for (;;) {
      try {
        const c = await this.log.cursors(this.node, this.opts.repurgeDelaysMs);
        this.main.cursor = c.cursor;
        this.main.seq = c.seq;
        this.repurges.forEach((lane, i) => {
      lane.cursor = c.repurge[i]!;
    });
        break;
      } catch (err) {
        if (this.stopped) return;
        this.logger.warn({ node: this.node, err: String(err) }, 'cannot load node cursors yet; retrying');
        await this.sleep(1000);
        if (this.stopped) return;
      }
    }
    this.logger.info({ node: this.node, cursor: this.main.cursor }, 'node delivery started; replaying from cursor');
    this.main.wake();
    this.loops = [this.loop(this.main, 'main'), ...this.repurges.map((lane) => this.loop(lane, lane.name))];
  }

  wake(): void {
    this.main.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const lane of [this.main, ...this.repurges]) {
      lane.wake();
      lane.clear();
    }
    for (const wakeUp of [...this.sleepers]) wakeUp();
    // In-flight requests finish (bounded by the node timeout); retries stop. Unapplied events
    // stay in the log and are replayed from the cursor by the next worker.
    await Promise.allSettled(this.loops);
    await this.client.close();
  }

  private async loop(lane: Lane, name: LaneName): Promise<void> {
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
        await this.sleep(this.backoff(failures));
        lane.wake();
      }
    }
  }

  /**
   * After Redis reconnected (perhaps to a new primary): reload the cursors from Redis before the
   * next read, so commits the old primary took with it are redone rather than left unrecorded.
   */
  resync(): void {
    this.resyncRequested = true;
    this.main.wake();
  }

  private async reloadCursors(): Promise<void> {
    const c = await this.log.cursors(this.node, this.opts.repurgeDelaysMs);
    this.main.cursor = c.cursor;
    this.main.seq = c.seq;
    this.main.seqKnown = true;
    this.repurges.forEach((lane, i) => {
      lane.cursor = c.repurge[i]!;
    });
  }

  private async drainMain(): Promise<void> {
    if (this.opts.coalesceMs > 0) await this.sleep(this.opts.coalesceMs);
    while (!this.stopped) {
      if (this.resyncRequested) {
        this.resyncRequested = false;
        try {
          await this.reloadCursors();
        } catch (err) {
          this.resyncRequested = true;
          throw err;
        }
      }
      const { entries, overrun, last, malformed } = await this.log.read(this.main.cursor, this.main.seqKnown ? this.main.seq : undefined, this.opts.batchMax);
      if (overrun) {
        await this.recoverOverrun();
        continue;
      }
      if (!last) return;
      if (malformed.length > 0) {
        // An entry no version of the ingest writes (not JSON): retrying cannot help. Skip it.
        this.metrics.deadLettered.inc({ node: this.node, reason: 'malformed' }, malformed.length);
        this.logger.error({ node: this.node, entries: malformed.slice(0, 20) }, 'log entries without a readable event: skipped');
      }
      const applied = entries.length > 0 ? await this.apply(entries, 'main') : { results: new Map<string, string>(), lastRefusedAt: undefined };
      if (!applied) return; // stopping: the cursor stays, the entries are replayed on restart
      if (!(await this.log.commitBatch(this.node, applied.results, last.streamId, last.seq, this.main.cursor))) {
        // The cursor in Redis is not where this worker read from: Redis failed over (or restarted)
        // and lost the last commits, or another worker moved it. Re-read from Redis's cursor:
        // what was sent is sent again (idempotent) and this time recorded.
        this.logger.warn({ node: this.node, cursor: this.main.cursor }, 'node cursor in Redis moved under this worker (Redis failover?): re-reading from it');
        await this.reloadCursors();
        continue;
      }
      this.main.cursor = last.streamId;
      this.main.seq = last.seq;
      this.main.seqKnown = last.seq > 0;
      this.hooks.onApplied(this.node, entries);
      for (const lane of this.repurges) lane.wakeAfter(lane.delayMs);
      if (applied.lastRefusedAt !== undefined) await this.skipAfterRestart(applied.lastRefusedAt);
    }
  }

  private async drainRepurge(lane: RepurgeLane): Promise<void> {
    while (!this.stopped) {
      const due = `${Date.now() - lane.delayMs}`;
      const end = compareIds(this.main.cursor, due) < 0 ? this.main.cursor : due;
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
      const applied = entries.length > 0 ? await this.apply(entries, lane.name) : { results: new Map<string, string>(), lastRefusedAt: undefined };
      if (!applied) return;
      const last = lastRead.streamId;
      await this.log.saveCursor(this.node, lane.field, last);
      lane.cursor = last;
    }
    // Entries applied by the main lane but not yet due: come back when the oldest is due (and
    // not sooner than the lane's gap, so a stream of small batches is repeated in a few).
    if (compareIds(lane.cursor, this.main.cursor) < 0) {
      const oldestMs = Number(lane.cursor.split('-')[0]);
      lane.wakeAfter(Math.max(lane.gapMs, oldestMs + lane.delayMs - Date.now()));
    }
  }

  /** The node's cursor points at entries the log no longer has: ban every site, jump to the end. */
  private async recoverOverrun(): Promise<void> {
    const { id: last, seq } = await this.log.lastPosition();
    const sites = [...new Set([...this.opts.sites, ...(await this.log.sites())])].sort();
    this.metrics.logOverruns.inc({ node: this.node });
    this.logger.error(
      { node: this.node, cursor: this.main.cursor, sites },
      'node cursor fell off the end of the log (events were trimmed before this node got them): banning everything for every site on this node',
    );
    const requests: Invalidation[] = sites.map((site) => ({ kind: 'ban', site, eventIds: [] }));
    const done = await this.sendAll(requests, 'main');
    if (!done) return;
    await this.log.saveCursor(this.node, 'cursor', last, seq);
    for (const lane of this.repurges) {
      await this.log.saveCursor(this.node, lane.field, last);
      lane.cursor = last;
    }
    this.main.cursor = last;
    this.main.seq = seq;
    this.main.seqKnown = true;
  }

  /**
   * The node refused connections while we retried, so its varnishd was not running: it came back
   * with an empty cache, and what was accepted before it stopped refusing cannot be in it.
   */
  private async skipAfterRestart(lastRefusedAt: number): Promise<void> {
    const boundary = `${lastRefusedAt - RESTART_MARGIN_MS}-0`;
    if (compareIds(boundary, this.main.cursor) <= 0) return;
    this.metrics.backlogSkips.inc({ node: this.node });
    this.logger.warn(
      { node: this.node, from: this.main.cursor, to: boundary },
      'node was down (connection refused) and restarted with an empty cache: skipping its stale backlog',
    );
    await this.log.saveCursor(this.node, 'cursor', boundary);
    this.main.cursor = boundary;
    this.main.seqKnown = false;
    for (const lane of this.repurges) {
      if (compareIds(lane.cursor, boundary) < 0) {
        await this.log.saveCursor(this.node, lane.field, boundary);
        lane.cursor = boundary;
      }
    }
  }

  /**
   * The fewest requests for a batch. An event that cannot be planned (a ban regex that would be
   * unsafe: only an entry the current ingest never writes can cause it) is left out with its
   * reason instead of failing the batch, which would stall the node on it for ever.
   */
  private plan(entries: LogEntry[]): { plan: Plan; unplannable: Map<string, string> } {
    const key = `${this.opts.headerBudget}|${this.opts.urlEscalateThreshold}|${this.opts.urlBanMin}`;
    const cached = plans.get(entries);
    if (cached?.key === key) return cached.result;
    const result = this.planUncached(entries);
    plans.set(entries, { key, result });
    return result;
  }

  private planUncached(entries: LogEntry[]): { plan: Plan; unplannable: Map<string, string> } {
    const opts = { headerBudget: this.opts.headerBudget, urlEscalateThreshold: this.opts.urlEscalateThreshold, urlBanMin: this.opts.urlBanMin };
    const events = entries.map((e) => e.event);
    try {
      return { plan: coalesce(events, opts), unplannable: new Map() };
    } catch {
      const unplannable = new Map<string, string>();
      const ok = events.filter((e) => {
        try {
          coalesce([e], opts);
          return true;
        } catch (err) {
          unplannable.set(e.id, `cannot be sent to Varnish: ${err instanceof Error ? err.message : String(err)}`);
          return false;
        }
      });
      try {
        return { plan: coalesce(ok, opts), unplannable };
      } catch (err) {
        for (const e of ok) unplannable.set(e.id, `cannot be sent to Varnish: ${err instanceof Error ? err.message : String(err)}`);
        return { plan: { requests: [], escalations: [] }, unplannable };
      }
    }
  }

  private async apply(entries: LogEntry[], lane: LaneName): Promise<Applied | undefined> {
    const { plan, unplannable } = this.plan(entries);
    if (unplannable.size > 0) {
      if (lane === 'main') this.metrics.deadLettered.inc({ node: this.node, reason: 'unplannable' }, unplannable.size);
      this.logger.error({ node: this.node, lane, events: [...unplannable.keys()].slice(0, 20), err: [...unplannable.values()][0] }, 'events that cannot be sent to Varnish: marked failed, skipped');
    }
    for (const esc of plan.escalations) {
      this.metrics.escalations.inc({ reason: esc.reason });
      this.logger.warn({ node: this.node, lane, site: esc.site, urls: esc.urls }, 'URL burst escalated to a site-wide ban');
    }
    const sent = await this.sendAll(plan.requests, lane);
    if (!sent) return undefined;
    const invalidated = new Map<string, number>();
    const failed = new Map<string, string>();
    for (const [id, reason] of unplannable) failed.set(id, reason);
    plan.requests.forEach((req, i) => {
      const r = sent.results[i]!;
      for (const id of req.eventIds) {
        if (r instanceof SendError) failed.set(id, r.message);
        else invalidated.set(id, (invalidated.get(id) ?? 0) + r.invalidated);
      }
    });
    const results = new Map<string, string>();
    const at = new Date().toISOString();
    if (lane === 'main') {
      for (const e of entries) {
        const id = e.event.id;
        const err = failed.get(id);
        results.set(id, JSON.stringify(err ? { s: 'failed', t: at, e: err } : { s: 'applied', t: at, i: invalidated.get(id) ?? 0 }));
      }
    }
    this.logger.debug(
      { node: this.node, lane, events: entries.length, requests: plan.requests.length, ids: entries.slice(0, 20).map((e) => e.event.id) },
      'batch applied',
    );
    return { results, lastRefusedAt: sent.lastRefusedAt };
  }

  /**
   * Sends every request (bounded concurrency), retrying transient failures with backoff until
   * all have an answer. Results are SendResult or a permanent SendError. undefined = stopping.
   */
  private async sendAll(
    requests: Invalidation[],
    lane: LaneName,
  ): Promise<{ results: (SendResult | SendError)[]; lastRefusedAt: number | undefined } | undefined> {
    const results: (SendResult | SendError | undefined)[] = new Array(requests.length);
    let pending = requests.map((_, i) => i);
    let attempt = 0;
    let lastRefusedAt: number | undefined;
    while (pending.length > 0) {
      if (this.stopped) return undefined;
      const retry: number[] = [];
      let lastError: SendError | undefined;
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < pending.length) {
          const i = pending[next++]!;
          const req = requests[i]!;
          const started = process.hrtime.bigint();
          try {
            results[i] = await this.client.send(req);
            this.metrics.invalidationsSent.inc({ node: this.node, kind: req.kind, outcome: 'ok', lane });
          } catch (err) {
            const e = err instanceof SendError ? err : new SendError(String(err), false, false);
            if (e.permanent) {
              results[i] = e;
              this.metrics.invalidationsSent.inc({ node: this.node, kind: req.kind, outcome: 'failed', lane });
              this.logger.error({ node: this.node, kind: req.kind, site: req.site, events: req.eventIds.slice(0, 20), err: e.message }, 'node rejected an invalidation; not retrying');
            } else {
              retry.push(i);
              lastError = e;
              if (e.refused) lastRefusedAt = Date.now();
              this.metrics.invalidationsSent.inc({ node: this.node, kind: req.kind, outcome: 'retry', lane });
            }
          } finally {
            this.metrics.varnishDuration.observe({ node: this.node }, Number(process.hrtime.bigint() - started) / 1e9);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.opts.nodeConcurrency, pending.length) }, worker));
      pending = retry.sort((a, b) => a - b);
      if (pending.length > 0) {
        attempt++;
        this.setUp(false, lastError?.message);
        const delay = this.backoff(attempt);
        this.logger.warn({ node: this.node, failing: pending.length, attempt, retryInMs: delay, err: lastError?.message }, 'node failing; retrying with backoff');
        await this.sleep(delay);
      }
    }
    this.setUp(true);
    return { results: results as (SendResult | SendError)[], lastRefusedAt };
  }

  private setUp(up: boolean, reason?: string): void {
    this.metrics.nodeUp.set({ node: this.node }, up ? 1 : 0);
    if (!up) {
      this.downSince ??= new Date().toISOString();
      void this.log.setNodeDown(this.node, { since: this.downSince, error: reason ?? 'failing' }).catch(() => undefined);
    }
    if (this.up !== up) {
      if (up && this.up === false) this.logger.info({ node: this.node, downSince: this.downSince }, 'node is back');
      // (also on a worker's first success: a previous worker may have left the node marked down)
      if (up) void this.log.setNodeDown(this.node, undefined).catch(() => undefined);
      if (!up) this.logger.warn({ node: this.node, err: reason }, 'node is down');
      if (up) this.downSince = undefined;
      this.up = up;
    }
  }

  /** exponential backoff (base · 2^attempt, capped) with jitter over the upper half */
  private backoff(attempt: number): number {
    const cap = Math.min(this.opts.retryMaxMs, this.opts.retryBaseMs * 2 ** Math.min(attempt - 1, 20));
    return Math.round(cap / 2 + Math.random() * (cap / 2));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.stopped) return resolve();
      const done = (): void => {
        clearTimeout(t);
        this.sleepers.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.sleepers.add(done);
    });
  }
}
