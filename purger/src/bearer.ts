// Bearer tokens: constant-time comparison against the configured tokens (hashing first makes the
// lengths equal, so nothing about a token's length leaks either).
import { createHash, timingSafeEqual } from 'node:crypto';
import { HttpError } from './http-errors.js';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerOf(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(header ?? '')?.[1];
}

/** True when the header carries one of `tokens` (every token is compared, whatever matches). */
export function bearerMatches(header: string | undefined, tokens: readonly string[]): boolean {
  const given = bearerOf(header);
  if (given === undefined) return false;
  const d = digest(given);
  let ok = false;
  for (const t of tokens) if (timingSafeEqual(d, digest(t))) ok = true;
  return ok;
}

/**
 * Read access (receipts, /metrics, /openapi.json): the read token or the operator token. With
 * neither configured these routes are closed, and the answer says how to open them.
 */
export function checkReadAccess(header: string | undefined, tokens: readonly string[]): void {
  if (tokens.length === 0) {
    throw new HttpError(401, 'unauthorized', 'reading receipts, metrics and the API document needs a token: set PURGER_READ_TOKEN (or PURGER_OPERATOR_TOKEN) on the purger');
  }
  if (bearerOf(header) === undefined) throw new HttpError(401, 'unauthorized', 'missing "Authorization: Bearer <read token>" header (PURGER_READ_TOKEN or PURGER_OPERATOR_TOKEN)');
  if (!bearerMatches(header, tokens)) throw new HttpError(401, 'unauthorized', 'the bearer token matches neither PURGER_READ_TOKEN nor PURGER_OPERATOR_TOKEN');
}
