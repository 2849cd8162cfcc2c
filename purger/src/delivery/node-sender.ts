// Sends a batch's requests to one Varnish node, bounded in concurrency: retries what failed
// transiently, and sends what the node refused as built in another shape at once (reshape.ts).
import type { Logger } from 'pino';
import type { Invalidation } from './coalesce.js';
import { eventRef } from '../model/event-model.js';
import type { Metrics } from '../metrics.js';
import type { NodeHealth } from './node-health.js';
import { reshape, strongerVia, type Via } from './reshape.js';
import { backoffMs, type Sleeper } from './retry.js';
import { SendError, type SendResult, type VarnishClient } from './varnish-client.js';

export interface SenderOptions {
  nodeConcurrency: number;
  retryBaseMs: number;
  retryMaxMs: number;
}

/** What the node did for one event: the objects its requests removed, or why it did not apply it. */
export interface EventOutcome {
  invalidated: number;
  /** set when one of its requests went out reshaped (the strongest fallback) */
  via?: Via;
  /** the node refused every shape of one of its requests */
  error?: string;
}

export interface Sent {
  /** eventRef(site, id) → outcome, for every event the requests name */
  events: Map<string, EventOutcome>;
  /** when the node last refused a connection during these attempts (it was not running) */
  lastRefusedAt: number | undefined;
}

/** One request on the wire: a batch's own, or a reshaped form of one. */
interface Job {
  req: Invalidation;
  /** the fallback that made it */
  how?: Via;
  /** answered: its result (a reshaped site ban is shared by every refused request of that site) */
  done?: SendResult | SendError;
}

export class NodeSender {
  constructor(
    private readonly node: string,
    private readonly client: VarnishClient,
    private readonly opts: SenderOptions,
    private readonly health: NodeHealth,
    private readonly sleeper: Sleeper,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
  ) {}

  /**
   * Every request answered or given up as refused in every shape; undefined when stopping.
   * `lane` labels the metrics. A refused shape never waits for a retry: its next shape goes out
   * in the same round, so a request no node accepts cannot hold up the batch or what follows.
   */
  async sendAll(requests: Invalidation[], lane: string): Promise<Sent | undefined> {
    const events = new Map<string, EventOutcome>();
    for (const req of requests) for (const id of req.eventIds) events.set(eventRef(req.site, id), { invalidated: 0 });
    /** site bans made by reshaping in this batch, one per site */
    const siteBans = new Map<string, Job>();
    let pending: Job[] = requests.map((req) => ({ req }));
    let attempt = 0;
    let lastRefusedAt: number | undefined;

    const settle = (job: Job, result: SendResult | SendError, eventIds: readonly string[] = job.req.eventIds): void => {
      job.done = result;
      for (const id of eventIds) {
        const e = events.get(eventRef(job.req.site, id))!;
        if (result instanceof SendError) {
          e.error ??= result.message;
          continue;
        }
        e.invalidated += result.invalidated;
        const via = strongerVia(e.via, job.how);
        if (via) e.via = via;
      }
    };

    while (pending.length > 0) {
      if (this.sleeper.stopped) return undefined;
      const retry: Job[] = [];
      let lastError: SendError | undefined;
      let next = 0;
      let active = 0;
      const running: Promise<void>[] = [];
      const enqueue = (job: Job): void => {
        pending.push(job);
        spawn();
      };
      const refused = (job: Job, e: SendError): void => {
        const { how, requests: shapes } = reshape(job.req);
        this.metrics.reshaped.inc({ node: this.node, kind: job.req.kind, how });
        const log = { node: this.node, lane, kind: job.req.kind, site: job.req.site, events: job.req.eventIds.slice(0, 20), err: e.message };
        if (how === 'failed') {
          this.logger.error(log, 'node refused a site-wide ban too: these events are not applied on this node; going on');
          settle(job, new SendError(`${e.message} (no smaller or wider form left to send)`, 'refused'));
          return;
        }
        this.logger.warn({ ...log, how }, how === 'split' ? 'node refused an invalidation as built: sending it in two halves' : 'node refused an invalidation as built: sending a site-wide ban instead');
        if (how === 'split') {
          for (const req of shapes) enqueue({ req, how });
          return;
        }
        const ban = siteBans.get(job.req.site);
        if (!ban) {
          const fresh: Job = { req: shapes[0]!, how };
          siteBans.set(job.req.site, fresh);
          enqueue(fresh);
        } else if (ban.done) {
          settle(ban, ban.done, job.req.eventIds);
        } else {
          // (in flight or waiting for a retry: its answer settles these events too)
          ban.req = { ...ban.req, eventIds: [...new Set([...ban.req.eventIds, ...job.req.eventIds])] };
        }
      };
      const worker = async (): Promise<void> => {
        while (next < pending.length) {
          const job = pending[next++]!;
          const req = job.req;
          const started = process.hrtime.bigint();
          try {
            settle(job, await this.client.send(req));
            this.metrics.invalidationsSent.inc({ node: this.node, kind: req.kind, outcome: 'ok', lane });
          } catch (err) {
            const e = err instanceof SendError ? err : new SendError(String(err), 'transient');
            if (e.verdict === 'refused') {
              this.metrics.invalidationsSent.inc({ node: this.node, kind: req.kind, outcome: 'refused', lane });
              refused(job, e);
            } else {
              retry.push(job);
              lastError = e;
              if (e.connRefused) lastRefusedAt = Date.now();
              this.metrics.invalidationsSent.inc({ node: this.node, kind: req.kind, outcome: 'retry', lane });
            }
          } finally {
            this.metrics.varnishDuration.observe({ node: this.node }, Number(process.hrtime.bigint() - started) / 1e9);
          }
        }
      };
      const spawn = (): void => {
        while (active < this.opts.nodeConcurrency && next < pending.length) {
          active++;
          running.push(worker().finally(() => active--));
        }
      };
      spawn();
      while (running.length > 0) await Promise.all(running.splice(0));
      pending = retry;
      if (pending.length > 0) {
        attempt++;
        this.health.set(false, lastError?.message);
        const delay = backoffMs(attempt, this.opts.retryBaseMs, this.opts.retryMaxMs);
        this.logger.warn({ node: this.node, failing: pending.length, attempt, retryInMs: delay, err: lastError?.message }, 'node failing; retrying with backoff');
        await this.sleeper.sleep(delay);
      }
    }
    this.health.set(true);
    return { events, lastRefusedAt };
  }
}
