// Whether a Varnish node answers: the purger_node_up gauge, its down marker in Redis, a log line per change.
import type { Logger } from 'pino';
import type { Metrics } from '../metrics.js';
import type { StreamLog } from '../store/stream-log.js';

export class NodeHealth {
  private up: boolean | undefined;
  private downSince: string | undefined;

  constructor(
    private readonly node: string,
    private readonly log: StreamLog,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
  ) {}

  set(up: boolean, reason?: string): void {
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
}
