// Do the per-site caps fit Redis? The worst case every allowed site can store within the
// retention windows, with the measured Redis cost of log entries, receipts and dedupe keys,
// against maxmemory. The purger refuses to start when it does not fit: at maxmemory every
// tenant would get 503.
import type { NodeAddress } from './parse-values.js';

/** Redis cost of one log entry besides its event's JSON (stream node share, ids, the `site`/`acceptedAt` fields the ingest adds), measured with MEMORY USAGE. */
export const ENTRY_OVERHEAD_BYTES = 256;
/** allocator rounding of large entries (a 20 KB entry costs ~4 % more), measured */
export const ENTRY_SIZE_FACTOR = 1.05;
/** one receipt (`evt:<site>/<id>`, fields s, n, m, with its TTL) without node results, measured ~560 B */
export const RECEIPT_BYTES = 560;
/** one node's result in a receipt (`n:<host:port>` → {s,t,i}), measured ~80 B */
export const RECEIPT_NODE_BYTES = 90;
/** one webhook-id dedupe key (`msg:<site>/<id>` with its TTL), measured ~120 B; counted per event (a webhook carries ≥ 1) */
export const MESSAGE_KEY_BYTES = 128;
/** share of maxmemory the purger's data may use (the rest: Redis itself, cursors, client buffers) */
export const MAXMEMORY_SHARE = 0.9;
/** receipts are sized for at least this many Varnish nodes (DNS discovery can add nodes later) */
export const MIN_NODES = 2;

/** One per-site cap: refill per second (0 = no cap) and burst. */
interface Cap {
  perS: number;
  burst: number;
}

/** What the fit depends on: load.ts's Config has it all, but naming only this keeps memory-fit.ts out of a circle with load.ts, which calls it. */
export interface FitConfig {
  sites: readonly string[];
  tenantLimits: { events: Cap; bytes: Cap };
  streamMaxAgeS: number;
  dedupeTtlS: number;
  streamMaxLen: number;
  maxEventBytes: number;
  varnishNodes: readonly NodeAddress[];
}

export interface MemoryEstimate {
  /** the log: bodies and per-entry cost within PURGER_STREAM_MAX_AGE_S, or the length cap × the largest entry when lower */
  logBytes: number;
  /** receipts and webhook-id keys within PURGER_DEDUPE_TTL_S */
  keyBytes: number;
  totalBytes: number;
}

/** The most every allowed site together can make Redis hold (Infinity when a cap is off). */
export function worstCase(c: FitConfig): MemoryEstimate {
  const sites = c.sites.length;
  const { events, bytes } = c.tenantLimits;
  const eventsIn = (s: number): number => (events.perS === 0 ? Infinity : events.perS * s + events.burst);
  const bodiesIn = (s: number): number => (bytes.perS === 0 ? Infinity : bytes.perS * s + bytes.burst);
  const byRate = sites * (bodiesIn(c.streamMaxAgeS) * ENTRY_SIZE_FACTOR + eventsIn(c.streamMaxAgeS) * ENTRY_OVERHEAD_BYTES);
  // The length cap bounds the log too, whatever the rates (the operator route has no rate cap).
  const byLength = c.streamMaxLen * (c.maxEventBytes * ENTRY_SIZE_FACTOR + ENTRY_OVERHEAD_BYTES);
  const logBytes = Math.min(byRate, byLength);
  const perEvent = RECEIPT_BYTES + Math.max(MIN_NODES, c.varnishNodes.length) * RECEIPT_NODE_BYTES + MESSAGE_KEY_BYTES;
  const keyBytes = sites * eventsIn(c.dedupeTtlS) * perEvent;
  return { logBytes, keyBytes, totalBytes: logBytes + keyBytes };
}

const mb = (n: number): string => (Number.isFinite(n) ? `${(n / 1_048_576).toFixed(1)} MiB` : 'unbounded');

/**
 * A sentence naming the settings when the worst case does not fit `maxmemory` (its source named
 * by `source`), else undefined.
 */
export function memoryFitProblem(c: FitConfig, maxmemory: number, source: string): string | undefined {
  const est = worstCase(c);
  const budget = maxmemory * MAXMEMORY_SHARE;
  if (est.totalBytes <= budget) return undefined;
  const { events, bytes } = c.tenantLimits;
  const off = [events.perS === 0 ? 'PURGER_TENANT_EVENTS_PER_S=0' : '', bytes.perS === 0 ? 'PURGER_TENANT_BYTES_PER_S=0' : ''].filter((s) => s !== '');
  return (
    `Redis memory: ${c.sites.length} site(s) (PURGER_SITES) may store ${mb(est.totalBytes)} in the worst case, more than ${MAXMEMORY_SHARE * 100} % of maxmemory ` +
    `${mb(maxmemory)} (${source}), so one site could fill Redis and every site would get 503: ` +
    `log ${mb(est.logBytes)} = per site PURGER_TENANT_BYTES_PER_S=${bytes.perS} × PURGER_STREAM_MAX_AGE_S=${c.streamMaxAgeS} + PURGER_TENANT_BYTES_BURST=${bytes.burst} bytes ` +
    `(+${ENTRY_OVERHEAD_BYTES} B per event), at most the length cap × PURGER_MAX_EVENT_BYTES=${c.maxEventBytes}; ` +
    `receipts and dedupe keys ${mb(est.keyBytes)} = per site (PURGER_TENANT_EVENTS_PER_S=${events.perS} × PURGER_DEDUPE_TTL_S=${c.dedupeTtlS} + PURGER_TENANT_EVENTS_BURST=${events.burst}) events × ` +
    `${RECEIPT_BYTES + Math.max(MIN_NODES, c.varnishNodes.length) * RECEIPT_NODE_BYTES + MESSAGE_KEY_BYTES} B` +
    `${off.length > 0 ? `; ${off.join(' and ')} means no cap` : ''}. ` +
    'Lower those caps or retentions, allow fewer sites per purger, or raise Redis maxmemory'
  );
}
