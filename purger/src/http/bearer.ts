// Bearer tokens: constant-time comparison against the configured tokens (hashing first makes the
// lengths equal, so nothing about a token's length leaks either).
import { createHash, timingSafeEqual } from 'node:crypto';

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
