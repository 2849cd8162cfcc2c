// Applies one batch of log entries on one node: plan, send, and the per-event receipts of the answers.
import type { Logger } from 'pino';
import type { CoalesceOptions } from './coalesce.js';
import { planBatch } from './delivery-plan.js';
import { eventRef } from '../ingest/event-model.js';
import type { Metrics } from '../metrics.js';
import type { NodeSender } from './node-sender.js';
import type { LogEntry } from '../store/stream-log.js';
import { SendError } from './varnish-client.js';
import { PREFETCH_BUDGET_MS, refreshTargets, type PageRefresher } from './page-refresher.js';
import { randomBytes } from 'node:crypto';
import type { Invalidation } from './coalesce.js';

export interface Applied {
  /** eventRef(site, id) → receipt JSON (main lane only; repeat lanes write no receipts) */
  results: Map<string, string>;
  /** when the node last refused a connection while this batch was retried */
  lastRefusedAt: number | undefined;
  /** eventRef(site, id) of the events the node did not apply */
  failed: ReadonlySet<string>;
  /** targetKey()s of the pages the node answered a refresh for before the purge (the refresh queue leaves them out) */
  prefetched: ReadonlySet<string>;
}

export interface BatchContext {
  node: string;
  opts: CoalesceOptions;
  sender: NodeSender;
  metrics: Metrics;
  logger: Logger;
  /** refreshes pages before a hard purge (undefined: refresh off) */
  refresher?: PageRefresher | undefined;
}

/** undefined when stopping (nothing is recorded; the batch is replayed). */
export async function applyBatch(ctx: BatchContext, entries: LogEntry[], lane: string): Promise<Applied | undefined> {
  const { node, metrics, logger } = ctx;
  const { plan, unplannable } = planBatch(entries, ctx.opts);
  if (unplannable.size > 0) {
    if (lane === 'main') metrics.deadLettered.inc({ node, reason: 'unplannable' }, unplannable.size);
    logger.error({ node, lane, events: [...unplannable.keys()].slice(0, 20), err: [...unplannable.values()][0] }, 'events that cannot be sent to Varnish: marked failed, skipped');
  }
  for (const esc of plan.escalations) {
    metrics.escalations.inc({ reason: esc.reason });
    logger.warn({ node, lane, site: esc.site, urls: esc.urls }, 'URL burst escalated to a site-wide ban');
  }
  const { requests, prefetched } = await refreshFirst(ctx, entries, plan.requests, unplannable, lane);
  const sent = await ctx.sender.sendAll(requests, lane);
  if (!sent) return undefined;
  const invalidated = new Map<string, number>();
  const failed = new Map<string, string>();
  // (keyed by site and id: two sites may use the same event id)
  for (const [ref, reason] of unplannable) failed.set(ref, reason);
  plan.requests.forEach((req, i) => {
    const r = sent.results[i]!;
    for (const id of req.eventIds) {
      const ref = eventRef(req.site, id);
      if (r instanceof SendError) failed.set(ref, r.message);
      else invalidated.set(ref, (invalidated.get(ref) ?? 0) + r.invalidated);
    }
  });
  const results = new Map<string, string>();
  const at = new Date().toISOString();
  if (lane === 'main') {
    for (const e of entries) {
      const id = eventRef(e.event.site, e.event.id);
      const err = failed.get(id);
      results.set(id, JSON.stringify(err ? { s: 'failed', t: at, e: err } : { s: 'applied', t: at, i: invalidated.get(id) ?? 0 }));
    }
  }
  logger.debug(
    { node, lane, events: entries.length, requests: plan.requests.length, ids: entries.slice(0, 20).map((e) => e.event.id) },
    'batch applied',
  );
  return { results, lastRefusedAt: sent.lastRefusedAt, failed: new Set(failed.keys()), prefetched };
}

/**
 * A hard purge, key purge or ban in the main lane with pages to refresh: the node fetches the
 * first of those pages before it (about one render's worth: PageRefresher.prefetch; the batch's
 * events are all committed, so the new copies show them), serving its cached copies meanwhile,
 * and the hard requests then name the generation so they leave the new copies: readers of those
 * pages wait on no render. Soft requests are unchanged: they leave a stale copy to serve.
 */
async function refreshFirst(
  ctx: BatchContext,
  entries: LogEntry[],
  requests: Invalidation[],
  unplannable: ReadonlyMap<string, string>,
  lane: string,
): Promise<{ requests: Invalidation[]; prefetched: ReadonlySet<string> }> {
  const none = { requests, prefetched: new Set<string>() };
  const hard = (r: Invalidation): boolean => r.kind === 'ban' || !r.soft;
  if (lane !== 'main' || !ctx.refresher || !requests.some(hard)) return none;
  const targets = refreshTargets(entries.filter((e) => !unplannable.has(eventRef(e.event.site, e.event.id))));
  if (targets.length === 0) return none;
  const gen = randomBytes(8).toString('hex');
  const { used, answered } = await ctx.refresher.prefetch(targets, gen, PREFETCH_BUDGET_MS);
  return { requests: used ? requests.map((r) => (hard(r) ? { ...r, keepGen: gen } : r)) : requests, prefetched: answered };
}
