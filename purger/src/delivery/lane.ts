// A delivery lane: its position in the log and its wake-up signal; a node's lanes load from Redis together.
import { repurgeField, type StreamLog } from '../store/stream-log.js';

export class Lane {
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

/** A repurge lane: sends what the main lane applied again once it is `delayMs` old (docs/protocol.md §2). */
export class RepurgeLane extends Lane {
  /** `repurge-<delay>` (the lane label of purger_invalidations_sent_total) */
  readonly name: string;
  /** the lane's cursor field in the node's Redis hash */
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

/** A node's lanes: `main` applies every event and owns the node's cursor; `repurges` send it again later. */
export class NodeLanes {
  readonly main = new Lane();
  readonly repurges: RepurgeLane[];

  constructor(
    private readonly node: string,
    private readonly delaysMs: readonly number[],
    /** a node new to Redis starts this far back in the log (0: at its end) */
    private readonly catchupMs = 0,
  ) {
    this.repurges = delaysMs.map((d) => new RepurgeLane(d));
  }

  get all(): Lane[] {
    return [this.main, ...this.repurges];
  }

  /**
   * every lane's cursor as Redis has it; for a node Redis had no cursors of, what it catches up
   * on (undefined otherwise, and with no catch-up window)
   */
  async load(log: StreamLog): Promise<{ entries: number; first?: string } | undefined> {
    const c = await log.cursors(this.node, this.delaysMs, this.catchupMs);
    this.main.cursor = c.cursor;
    this.main.seq = c.seq;
    this.main.seqKnown = true;
    this.repurges.forEach((lane, i) => {
      lane.cursor = c.repurge[i]!;
    });
    return c.catchup;
  }
}
