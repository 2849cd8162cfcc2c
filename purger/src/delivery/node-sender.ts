// Sends a batch's requests to one Varnish node, bounded in concurrency, retrying until each is answered.
import type { Logger } from 'pino';
import type { Invalidation } from './coalesce.js';
import type { Metrics } from '../metrics.js';
import type { NodeHealth } from './node-health.js';
import { backoffMs, type Sleeper } from './retry.js';
import { SendError, type SendResult, type VarnishClient } from './varnish-client.js';

export interface SenderOptions {
  nodeConcurrency: number;
  retryBaseMs: number;
  retryMaxMs: number;
}

export interface Sent {
  /** per request, in order: its result or a permanent SendError */
  results: (SendResult | SendError)[];
  /** when the node last refused a connection during these attempts (it was not running) */
  lastRefusedAt: number | undefined;
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

  /** Every request answered; undefined when stopping. `lane` labels the metrics. */
  async sendAll(requests: Invalidation[], lane: string): Promise<Sent | undefined> {
    const results: (SendResult | SendError | undefined)[] = new Array(requests.length);
    let pending = requests.map((_, i) => i);
    let attempt = 0;
    let lastRefusedAt: number | undefined;
    while (pending.length > 0) {
      if (this.sleeper.stopped) return undefined;
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
        this.health.set(false, lastError?.message);
        const delay = backoffMs(attempt, this.opts.retryBaseMs, this.opts.retryMaxMs);
        this.logger.warn({ node: this.node, failing: pending.length, attempt, retryInMs: delay, err: lastError?.message }, 'node failing; retrying with backoff');
        await this.sleeper.sleep(delay);
      }
    }
    this.health.set(true);
    return { results: results as (SendResult | SendError)[], lastRefusedAt };
  }
}
