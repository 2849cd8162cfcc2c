// The log's length cap, from its memory budget and the measured cost of an entry.

/** Measured Redis cost of one log entry (a typical event; docs: purger/README.md). */
export const LOG_ENTRY_BYTES = 300;
/**
 * Default memory budget of the log: 64 MiB ≈ 220,000 typical entries. What bounds Redis memory
 * is the per-site caps, checked against maxmemory at start (memory-fit.ts).
 */
export const DEFAULT_LOG_MAX_BYTES = 64 * 1024 * 1024;

/** The log's MAXLEN cap: the memory budget over the cost of an entry, or PURGER_STREAM_MAXLEN if lower. */
export function logMaxLen(maxBytes: number, explicitMaxLen: number | undefined): number {
  const fromBudget = Math.max(100, Math.floor(maxBytes / LOG_ENTRY_BYTES));
  return explicitMaxLen === undefined ? fromBudget : Math.min(explicitMaxLen, fromBudget);
}
