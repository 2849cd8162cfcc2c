// Trims the log on a timer (PURGER_TRIM_INTERVAL_MS), besides the trim in every append: at
// Redis's maxmemory appends are refused, so entries past their retention must be removed by
// something else for the store to recover by itself. Receipts and dedupe keys carry
// their own TTL and expire without help.
import type { Logger } from 'pino';
import type { StreamLog } from './stream-log.js';

export class LogTrimmer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly log: StreamLog,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  /** One trim (ticks never overlap); errors are logged, the next tick tries again. */
  tick(): Promise<void> {
    this.running ??= this.log
      .trim()
      .then((removed) => {
        if (removed > 0) this.logger.debug({ removed }, 'log trimmed by age and length');
      })
      .catch((err: unknown) => this.logger.warn({ err: String(err) }, 'could not trim the log; retrying at the next interval'))
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
