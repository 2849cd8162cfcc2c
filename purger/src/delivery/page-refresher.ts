// Re-fetches the pages a node just invalidated (docs/protocol.md §2, refresh), so the next reader
// gets them from the cache. Per node: a bounded queue, each page queued once, at most
// `concurrency` requests at a time. Pages of soft invalidations wait in a background queue
// refreshed one at a time (see enqueue). Best effort: nothing durable, a failure is counted and
// logged, never retried, and never holds up delivery or receipts.
import type { Logger } from 'pino';
import type { Metrics } from '../metrics.js';
import type { LogEntry } from '../store/stream-log.js';
import type { RefreshCopy, VarnishClient } from './varnish-client.js';

const REFRESH_COPIES: readonly RefreshCopy[] = ['gzip', 'plain'];

export interface RefreshTarget {
  site: string;
  /** path + query */
  path: string;
  /** fill the https copy (X-Refresh: https) rather than the http one */
  https: boolean;
}

/** most pages waiting on one node; past it new ones are dropped (counted): a refresh is worth it right after its edit only */
export const REFRESH_QUEUE_MAX = 1000;

/** background refreshes (pages of soft invalidations) in flight at a time per node */
export const BACKGROUND_CONCURRENCY = 1;

/**
 * The pages the entries name, deduplicated, by rank: every event's first page, then every
 * event's second…, so one event's long list does not push another's most important page back.
 */
export function refreshTargets(entries: readonly LogEntry[]): RefreshTarget[] {
  const lists = entries.map((e) => e.event).filter((e) => e.refresh && e.refresh.length > 0);
  const seen = new Set<string>();
  const out: RefreshTarget[] = [];
  const longest = Math.max(0, ...lists.map((e) => e.refresh!.length));
  for (let rank = 0; rank < longest; rank++) {
    for (const e of lists) {
      const path = e.refresh![rank];
      if (path === undefined) continue;
      const target = { site: e.site, path, https: e.refreshHttps === true };
      const key = targetKey(target);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(target);
    }
  }
  return out;
}

/** (a site has no space, a path is printable ASCII without one) */
export const targetKey = (t: RefreshTarget): string => `${t.https ? 'https' : 'http'} ${t.site} ${t.path}`;

export class PageRefresher {
  private queue: RefreshTarget[] = [];
  private background: RefreshTarget[] = [];
  private readonly queued = new Set<string>();
  private readonly queuedBackground = new Set<string>();
  private backgroundInFlight = 0;
  private readonly running = new Set<string>();
  /**
   * In flight when the page was invalidated again: that fetch began before the invalidation, so
   * the node does not keep it (docs/protocol.md §2); the page is queued once more when it ends,
   * to the background queue if every request for it since was a background one (the value).
   */
  private readonly again = new Map<string, boolean>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private stopped = false;

  constructor(
    private readonly node: string,
    private readonly client: Pick<VarnishClient, 'refresh'>,
    private readonly concurrency: number,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
  ) {}

  /**
   * Queues the pages (in priority order) that are not queued yet; one in flight is queued again
   * once it ends. `background`: pages of soft invalidations only. The node still serves their
   * stale copy, so no reader waits for them, and readers' own requests already fetch the pages
   * they read, most read first; refreshing the rest at full concurrency would only take the
   * origin's CPU from those. They are refreshed one at a time, when no other page waits. A page
   * queued in the background and named again without `background` moves to the front queue.
   */
  enqueue(targets: readonly RefreshTarget[], background = false): void {
    if (this.stopped) return;
    let dropped = 0;
    for (const t of targets) {
      const key = targetKey(t);
      if (this.queued.has(key)) continue;
      if (this.running.has(key)) {
        this.again.set(key, (this.again.get(key) ?? true) && background);
        continue;
      }
      if (background && this.queuedBackground.has(key)) continue;
      if (this.queue.length + this.background.length >= REFRESH_QUEUE_MAX) {
        dropped++;
        continue;
      }
      if (background) {
        this.queuedBackground.add(key);
        this.background.push(t);
        continue;
      }
      if (this.queuedBackground.delete(key)) this.background = this.background.filter((b) => targetKey(b) !== key);
      this.queued.add(key);
      this.queue.push(t);
    }
    if (dropped > 0) {
      this.metrics.refreshes.inc({ node: this.node, outcome: 'dropped' }, dropped);
      this.logger.warn({ node: this.node, dropped, queued: this.queue.length }, 'refresh queue full: pages dropped (readers fetch them)');
    }
    this.pump();
  }

  /** Drops what is queued and waits for the requests in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.queue = [];
    this.background = [];
    this.queued.clear();
    this.queuedBackground.clear();
    this.again.clear();
    await Promise.allSettled([...this.inFlight]);
  }

  private pump(): void {
    while (!this.stopped && this.inFlight.size < this.concurrency) {
      let t: RefreshTarget;
      let background = false;
      if (this.queue.length > 0) {
        t = this.queue.shift()!;
        this.queued.delete(targetKey(t));
      } else if (this.background.length > 0 && this.backgroundInFlight < BACKGROUND_CONCURRENCY) {
        t = this.background.shift()!;
        this.queuedBackground.delete(targetKey(t));
        background = true;
        this.backgroundInFlight++;
      } else {
        return;
      }
      const key = targetKey(t);
      this.running.add(key);
      const p: Promise<void> = this.refreshOne(t).finally(() => {
        this.running.delete(key);
        this.inFlight.delete(p);
        if (background) this.backgroundInFlight--;
        const again = this.again.get(key);
        this.again.delete(key);
        if (again !== undefined) this.enqueue([t], again);
        else this.pump();
      });
      this.inFlight.add(p);
    }
  }

  /** Both copies, one after the other: the plain one costs a render only where plain readers read. */
  private async refreshOne(t: RefreshTarget): Promise<void> {
    for (const copy of REFRESH_COPIES) {
      if (this.stopped) return;
      try {
        const outcome = await this.client.refresh(t, copy);
        this.metrics.refreshes.inc({ node: this.node, outcome });
      } catch (err) {
        this.metrics.refreshes.inc({ node: this.node, outcome: 'failed' });
        this.logger.warn({ node: this.node, site: t.site, path: t.path, copy, err: (err as Error).message }, 'page refresh failed (not retried)');
      }
    }
  }
}
