// Invalidation events for tests (docs/protocol.md §1) and posting them signed by the test kit's
// independent signer.
import { request } from './http.mjs';
import { signHeaders } from './sign.mjs';

let seq = 0;
/** A unique event id. */
export const eventId = (prefix = 'evt') => `${prefix}-${process.pid}-${Date.now().toString(36)}-${seq++}`;

const event = (fields, extra) => ({ id: eventId(), soft: false, reason: 'test', time: new Date().toISOString(), ...fields, ...extra });

/** A hard invalidation of surrogate keys. */
export const tagEvent = (tags, extra = {}) => event({ kind: 'tags', tags }, extra);

/** A hard invalidation of paths on `site` (host[:port]). */
export const urlEvent = (site, paths, extra = {}) => event({ kind: 'urls', urls: paths.map((p) => `http://${site}${p}`) }, extra);

/**
 * POST /v1/events at base, signed with secret (id and timestamp may be forced); returns
 * {status, json (null when the answer is not JSON), body}.
 */
export async function postEvents(base, body, { secret, id, timestamp, timeoutMs = 30_000 }) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const r = await request(base, '/v1/events', { method: 'POST', headers: signHeaders(secret, text, { id, timestamp }), body: text, timeoutMs });
  let json = null;
  try { json = JSON.parse(r.body); } catch { /* not JSON */ }
  return { status: r.status, json, body: r.body };
}

let mixSeq = 0;
/**
 * n events shaped as the plugin sends them under load: tag events on post and term keys, every
 * fifth an exact-URL event on `site`; ids `${prefix}-<n>` (n counts across calls).
 */
export function eventMix(site, n, prefix) {
  const now = new Date().toISOString();
  return Array.from({ length: n }, () => {
    const i = mixSeq++;
    const fields = i % 5 === 0 ? { kind: 'urls', urls: [`http://${site}/post-${i % 5000}/`] } : { kind: 'tags', tags: [`p-post-${i % 5000}`, `wp1-t-${i % 50}`] };
    return { id: `${prefix}-${i}`, ...fields, soft: false, reason: 'bench', time: now };
  });
}
