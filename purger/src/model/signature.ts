// Standard Webhooks signature verification (https://www.standardwebhooks.com/):
// HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed with the base64 part of
// a `whsec_` secret, compared in constant time against every `v1,` entry of webhook-signature.
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface WebhookSecret {
  key: Buffer;
  /** when set, this secret may only sign events for this site */
  site?: string;
}

const MSG_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Parses `whsec_<base64>`; returns an error text (never containing the secret) on failure. */
export function parseSecret(value: string): WebhookSecret | string {
  const m = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(value.trim());
  if (!m) return 'expected whsec_ followed by base64';
  const key = Buffer.from(m[1]!, 'base64');
  if (key.length < 16) return 'the decoded key is shorter than 16 bytes';
  return { key };
}

export interface SignatureHeaders {
  id: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
}

export type VerifyResult = { ok: true; matched: WebhookSecret[] } | { ok: false; message: string };

export function verifySignature(
  headers: SignatureHeaders,
  body: Buffer,
  secrets: readonly WebhookSecret[],
  nowSeconds: number,
  toleranceSeconds: number,
): VerifyResult {
  const { id, timestamp, signature } = headers;
  if (!id) return { ok: false, message: 'missing webhook-id header' };
  if (!MSG_ID.test(id)) return { ok: false, message: 'webhook-id must match ^[A-Za-z0-9_.:-]{1,128}$' };
  if (!timestamp) return { ok: false, message: 'missing webhook-timestamp header' };
  if (!/^[0-9]{1,12}$/.test(timestamp)) return { ok: false, message: 'webhook-timestamp must be Unix seconds' };
  const skew = nowSeconds - Number(timestamp);
  if (Math.abs(skew) > toleranceSeconds) {
    const which = skew > 0 ? 'too old' : 'in the future';
    return {
      ok: false,
      message: `webhook-timestamp is ${which}: ${Math.abs(skew)} s from the receiver's clock (tolerance ${toleranceSeconds} s); check the sender's clock`,
    };
  }
  if (!signature) return { ok: false, message: 'missing webhook-signature header' };
  const candidates: Buffer[] = [];
  for (const part of signature.split(' ')) {
    const comma = part.indexOf(',');
    if (comma < 0 || part.slice(0, comma) !== 'v1') continue;
    candidates.push(Buffer.from(part.slice(comma + 1), 'base64'));
  }
  if (candidates.length === 0) {
    return { ok: false, message: 'webhook-signature has no v1,<base64> entry' };
  }
  const matched: WebhookSecret[] = [];
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret.key).update(`${id}.${timestamp}.`).update(body).digest();
    let hit = false;
    for (const c of candidates) {
      // Constant-time compare; lengths are public (SHA-256 is always 32 bytes).
      if (c.length === expected.length && timingSafeEqual(c, expected)) hit = true;
    }
    if (hit) matched.push(secret);
  }
  if (matched.length === 0) {
    return { ok: false, message: 'no webhook-signature entry matches any configured secret (wrong secret, or the body/id/timestamp changed after signing)' };
  }
  return { ok: true, matched };
}

/** May a request signed by these secrets invalidate `site`? (unscoped secrets may sign any site) */
export function secretAllowsSite(matched: readonly WebhookSecret[], site: string): boolean {
  return matched.some((s) => s.site === undefined || s.site === site);
}
