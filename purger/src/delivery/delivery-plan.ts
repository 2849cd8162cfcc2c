// Plans a batch of log entries into requests once per batch, setting aside events that cannot be planned.
import { coalesce, type CoalesceOptions, type Plan } from './coalesce.js';
import { eventRef } from '../model/event-model.js';
import type { LogEntry } from '../store/stream-log.js';

export interface DeliveryPlan {
  plan: Plan;
  /** eventRef(site, id) → why it cannot be sent (its receipt says failed) */
  unplannable: Map<string, string>;
}

/**
 * Plans by batch: nodes that read the same range get the same (shared) entries array, and the
 * plan depends only on it and the coalescing settings, so it is computed once for all of them.
 */
const plans = new WeakMap<readonly LogEntry[], { key: string; result: DeliveryPlan }>();

/**
 * The fewest requests for a batch. An event that cannot be planned (a ban regex that would be
 * unsafe: only an entry the current ingest never writes can cause it) is left out with its
 * reason instead of failing the batch, which would stall the node on it for ever.
 */
export function planBatch(entries: LogEntry[], opts: CoalesceOptions): DeliveryPlan {
  const key = `${opts.headerBudget}|${opts.urlEscalateThreshold}|${opts.urlBanMin}`;
  const cached = plans.get(entries);
  if (cached?.key === key) return cached.result;
  const result = planUncached(entries, opts);
  plans.set(entries, { key, result });
  return result;
}

function planUncached(entries: LogEntry[], options: CoalesceOptions): DeliveryPlan {
  const opts = { headerBudget: options.headerBudget, urlEscalateThreshold: options.urlEscalateThreshold, urlBanMin: options.urlBanMin };
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
        unplannable.set(eventRef(e.site, e.id), `cannot be sent to Varnish: ${err instanceof Error ? err.message : String(err)}`);
        return false;
      }
    });
    try {
      return { plan: coalesce(ok, opts), unplannable };
    } catch (err) {
      for (const e of ok) unplannable.set(eventRef(e.site, e.id), `cannot be sent to Varnish: ${err instanceof Error ? err.message : String(err)}`);
      return { plan: { requests: [], escalations: [] }, unplannable };
    }
  }
}
