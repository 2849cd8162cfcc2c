// Applies one batch of log entries on one node: plan, send, and the per-event receipts of the answers.
import type { Logger } from 'pino';
import type { CoalesceOptions } from './coalesce.js';
import { planBatch } from './delivery-plan.js';
import { eventRef } from '../model/event-model.js';
import type { Metrics } from '../metrics.js';
import type { NodeSender } from './node-sender.js';
import type { LogEntry } from '../store/stream-log.js';

export interface Applied {
  /** eventRef(site, id) → receipt JSON (main lane only; repurge lanes write no receipts) */
  results: Map<string, string>;
  /** when the node last refused a connection while this batch was retried */
  lastRefusedAt: number | undefined;
  /** eventRef(site, id) of the events the node did not apply */
  failed: ReadonlySet<string>;
}

export interface BatchContext {
  node: string;
  opts: CoalesceOptions;
  sender: NodeSender;
  metrics: Metrics;
  logger: Logger;
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
  // Every invalidation first; the pages to refresh are queued once the batch is recorded (node-delivery.ts).
  const sent = await ctx.sender.sendAll(plan.requests, lane);
  if (!sent) return undefined;
  const failed = new Map<string, string>();
  // (keyed by site and id: two sites may use the same event id)
  for (const [ref, o] of sent.events) if (o.error) failed.set(ref, o.error);
  // the node refused every shape of their requests (node-sender.ts): never sendable there
  if (lane === 'main' && failed.size > 0) metrics.deadLettered.inc({ node, reason: 'refused' }, failed.size);
  for (const [ref, reason] of unplannable) failed.set(ref, reason);
  const results = new Map<string, string>();
  const at = new Date().toISOString();
  if (lane === 'main') {
    for (const e of entries) {
      const id = eventRef(e.event.site, e.event.id);
      const err = failed.get(id);
      const o = sent.events.get(id);
      results.set(id, JSON.stringify(err ? { s: 'failed', t: at, e: err } : { s: 'applied', t: at, i: o?.invalidated ?? 0, ...(o?.via ? { v: o.via } : {}) }));
    }
  }
  logger.debug(
    { node, lane, events: entries.length, requests: plan.requests.length, ids: entries.slice(0, 20).map((e) => e.event.id) },
    'batch applied',
  );
  return { results, lastRefusedAt: sent.lastRefusedAt, failed: new Set(failed.keys()) };
}
