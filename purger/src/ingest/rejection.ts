// Why ingest refused a batch, in ingest's own terms: a reason, a sentence a person can act on, the
// field at fault and when a retry can pass. Ingest builds no HTTP answer: http/errors.ts maps each
// reason to its status code and writes the JSON error.

/** Every reason ingest refuses a batch for (nothing of the batch is stored, except as noted). */
export type RejectionReason =
  /** the site is not in PURGER_SITES */
  | 'forbidden_site'
  /** an event carries more URLs/keys or JSON bytes than PURGER_MAX_URLS_PER_EVENT / PURGER_MAX_EVENT_BYTES */
  | 'event_too_large'
  /** an event breaks a per-event rule (model/event-model.ts) */
  | 'invalid'
  /** the site is over its ingest cap (PURGER_TENANT_*) */
  | 'rate_limited'
  /** stored on the primary, but fewer replicas than PURGER_REDIS_MIN_REPLICAS confirmed it in time */
  | 'storage_unreplicated'
  /** Redis is at maxmemory */
  | 'storage_full'
  /** Redis is unreachable */
  | 'storage_unavailable';

export class IngestRejection extends Error {
  constructor(
    readonly reason: RejectionReason,
    message: string,
    /** the JSON pointer of the field at fault (`/events/0/urls/3`) */
    readonly field?: string,
    /** seconds after which the same request may pass */
    readonly retryAfterS?: number,
  ) {
    super(message);
  }
}
