// JSON errors a person can act on: {error, message, field?}.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { IngestRejection, type RejectionReason } from '../ingest/rejection.js';

export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly error: string,
    message: string,
    readonly field?: string,
    /** extra response headers, e.g. Retry-After on 429 and 503 */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

/** The status each refusal of ingest answers with; its reason is the answer's `error`. */
const REJECTION_STATUS: Record<RejectionReason, number> = {
  invalid: 400,
  forbidden_site: 403,
  event_too_large: 413,
  rate_limited: 429,
  storage_unreplicated: 503,
  storage_full: 503,
  storage_unavailable: 503,
};

/** An ingest refusal as the HTTP error it answers with (`Retry-After` when a retry can pass). */
export function rejectionAsHttp(r: IngestRejection): HttpError {
  const headers = r.retryAfterS === undefined ? undefined : { 'retry-after': String(r.retryAfterS) };
  return new HttpError(REJECTION_STATUS[r.reason], r.reason, r.message, r.field, headers);
}

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Turns the first schema violation into a field path and a sentence. */
export function describeValidation(v: ValidationIssue): { field: string; message: string } {
  const field = v.instancePath || '/';
  const p = v.params;
  switch (v.keyword) {
    case 'required':
      return { field: `${v.instancePath}/${String(p.missingProperty)}`, message: `missing required field "${String(p.missingProperty)}"` };
    case 'additionalProperties':
      return { field: `${v.instancePath}/${String(p.additionalProperty)}`, message: `unknown field "${String(p.additionalProperty)}"` };
    case 'pattern':
      if (/\/urls\/\d+$/.test(field)) return { field, message: 'URL must be printable ASCII without spaces (percent-encode anything else)' };
      if (/\/tags\/\d+$/.test(field)) return { field, message: `tag must match ${String(p.pattern)} (letters, digits and _.:- only)` };
      if (field === '/id') return { field, message: 'event id must be 1 to 128 characters: letters, digits and _.:- only' };
      if (field === '/site') return { field, message: 'site must be a normalized host[:port]: lower-case, no trailing dot, no :80/:443' };
      if (/\/time$/.test(field)) return { field, message: 'not an RFC 3339 date-time (e.g. 2026-11-22T10:00:00Z)' };
      return { field, message: `must match ${String(p.pattern)}` };
    case 'maxItems':
      if (/\/refresh$/.test(field)) return { field, message: `too many refresh URLs: at most ${String(p.limit)} per event, most important first` };
      return { field, message: `too many items: at most ${String(p.limit)}` };
    case 'minItems':
      return { field, message: `needs at least ${String(p.limit)} item(s)` };
    case 'maxLength':
      return { field, message: `too long: at most ${String(p.limit)} characters` };
    default:
      return { field, message: v.message ?? 'invalid' };
  }
}

export function errorHandler(this: unknown, err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const known = err instanceof IngestRejection ? rejectionAsHttp(err) : err;
  if (known instanceof HttpError) {
    if (known.headers) void reply.headers(known.headers);
    void reply.code(known.statusCode).send({ error: known.error, message: known.message, ...(known.field ? { field: known.field } : {}) });
    return;
  }
  if (err.validation && err.validation.length > 0) {
    const d = describeValidation(err.validation[0] as unknown as ValidationIssue);
    void reply.code(400).send({ error: 'invalid', field: d.field, message: d.message });
    return;
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      void reply.code(413).send({
        error: 'too_large',
        message: `request body is larger than the limit: at most ${(request.routeOptions.bodyLimit ?? 1_048_576).toLocaleString('en-US')} bytes (PURGER_BODY_LIMIT); nothing was stored, split the batch`,
      });
      return;
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      void reply.code(415).send({ error: 'unsupported_media_type', message: 'Content-Type must be application/json' });
      return;
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      void reply.code(400).send({ error: 'invalid', message: err.message });
      return;
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    void reply.code(err.statusCode).send({ error: 'bad_request', message: err.message });
    return;
  }
  request.log.error({ err }, 'unhandled error');
  void reply.code(500).send({ error: 'internal', message: 'internal error; see the purger log' });
}
