// Hostile requests to the purger's API (a real ingest process on its own Redis prefix):
// unsigned, badly signed, wrong secret, expired, from the future, tampered, replayed, wrong
// site, wrong content type, no or wrong operator token, oversized bodies (with and without a
// Content-Length) and bodies or headers trickled slowly. Each is refused with the right 4xx (or,
// for a replay, acknowledged as a duplicate), and none stores an event: the log's sequence
// counter moves only for the one valid request.
import net from 'node:net';
import { eventId, tagEvent } from '../../testkit/events.mjs';
import { request } from '../../testkit/http.mjs';
import { signHeaders } from '../../testkit/sign.mjs';
import { assert, postEvents, storedCount } from '../lib/common.mjs';
import { newPrefix, startPurger } from '../lib/cluster.mjs';

export const title = 'hostile: unsigned, expired, replayed, wrong-site, oversized and slow requests refused';

export async function run({ env, log }) {
  const prefix = newPrefix('auth');
  const purger = await startPurger(env, { prefix, role: 'ingest' });
  try {
    const secret = env.secrets.WEBHOOK_SECRET;
    const body = (events = [tagEvent(['rel-auth'])], site = env.site) => JSON.stringify({ site, events });
    const post = (text, headers) => request(purger.url, '/v1/events', { method: 'POST', headers, body: text });
    const now = Math.floor(Date.now() / 1000);
    const checks = [];
    const expect = async (name, want, res) => {
      const r = await res;
      checks.push({ name, status: r.status });
      assert(r.status === want, `${name}: ${r.status}, want ${want} (${String(r.body).slice(0, 160)})`);
      assert((await storedCount(env, prefix)) === stored, `${name}: an event was stored`);
    };
    let stored = 0;
    const wrongSecret = `whsec_${Buffer.from('not-the-configured-secret-0123456789').toString('base64')}`;
    const t1 = body();
    await expect('unsigned', 401, post(t1, { 'content-type': 'application/json' }));
    await expect('signature of another body', 401, post(t1, signHeaders(secret, body())));
    await expect('wrong secret', 401, post(t1, signHeaders(wrongSecret, t1)));
    // Stamped when signed, a few seconds past the 300 s tolerance: `now` is seconds old by here.
    const nowS = () => Math.floor(Date.now() / 1000);
    await expect('expired (305 s old)', 401, post(t1, signHeaders(secret, t1, { timestamp: nowS() - 305 })));
    await expect('from the future (+305 s)', 401, post(t1, signHeaders(secret, t1, { timestamp: nowS() + 305 })));
    const h = signHeaders(secret, t1);
    await expect('tampered after signing', 401, post(t1.replace('rel-auth', 'rel-auth2'), h));
    await expect('signature header without v1', 401, post(t1, { ...h, 'webhook-signature': h['webhook-signature'].replace('v1,', 'v2,') }));
    await expect('webhook-id with a space', 401, post(t1, { ...h, 'webhook-id': 'a b' }));
    const evil = body(undefined, 'evil.example');
    await expect('wrong site', 403, post(evil, signHeaders(secret, evil)));
    await expect('text/plain', 415, post(t1, { ...signHeaders(secret, t1), 'content-type': 'text/plain' }));
    await expect('operator route without token', 401, request(purger.url, '/v1/purge', { method: 'POST', body: { site: env.site, events: [{ kind: 'all' }] } }));
    await expect('operator route with a wrong token', 401, request(purger.url, '/v1/purge', { method: 'POST', headers: { authorization: 'Bearer not-the-operator-token-000' }, body: { site: env.site, events: [{ kind: 'all' }] } }));

    // Oversized: 1 MiB + 1 with a Content-Length, and 2 MiB chunked (no length up front).
    const big = JSON.stringify({ site: env.site, events: [tagEvent(['rel-big'], { reason: 'x'.repeat(1024 * 1024) })] });
    await expect('body over 1 MiB', 413, post(big, signHeaders(secret, big)));
    // Chunked: Node answers 413 and drops the connection while the client is still sending, so
    // the client sees the 413 or a reset; either way the body is cut off and nothing is stored.
    const ch = await chunked(purger.port, signHeaders(secret, big), Buffer.from(big + ' '.repeat(1024 * 1024)));
    checks.push({ name: 'chunked body over 1 MiB', status: ch.status || 'cut off' });
    assert(ch.status === 413 || ch.status === 0, `chunked body over 1 MiB: ${ch.status}, want 413 or cut off`);
    assert((await storedCount(env, prefix)) === stored, 'chunked body over 1 MiB: an event was stored');

    // The one valid request, then replays of it.
    const events = [tagEvent(['rel-auth-ok'], { id: eventId('ok') })];
    const valid = JSON.stringify({ site: env.site, events });
    const vh = signHeaders(secret, valid);
    const first = await post(valid, vh);
    assert(first.status === 202 && JSON.parse(first.body).accepted.length === 1, `the valid request: ${first.status} ${first.body}`);
    stored = 1;
    assert((await storedCount(env, prefix)) === 1, 'the valid request stored no event');
    const replay = await post(valid, vh);
    checks.push({ name: 'replay (same id, within tolerance)', status: replay.status });
    assert(replay.status === 202 && JSON.parse(replay.body).duplicates.length === 1, `replay: ${replay.status} ${replay.body}`);
    assert((await storedCount(env, prefix)) === 1, 'a replay stored the event again');
    const again = await postEvents(env, purger.url, valid);
    checks.push({ name: 'replay (new message id, same event ids)', status: again.status });
    assert(again.status === 202 && again.json.duplicates.length === 1, `re-signed replay: ${again.status} ${again.body}`);
    assert((await storedCount(env, prefix)) === 1, 'a re-signed replay stored the event again');
    await expect('replay after the tolerance', 401, post(valid, signHeaders(secret, valid, { id: vh['webhook-id'], timestamp: now - 400 })));

    // Slow clients: the purger cuts off a trickled body and trickled headers.
    const [slowBody, slowHeaders] = await Promise.all([trickle(purger.port, 'body'), trickle(purger.port, 'headers')]);
    checks.push({ name: 'slow body', closedAfterS: slowBody }, { name: 'slow headers', closedAfterS: slowHeaders });
    assert(slowBody !== null, 'a body sent one byte a second was never cut off (waited 45 s)');
    assert(slowHeaders !== null, 'headers sent one line a second were never cut off (waited 45 s)');
    assert((await storedCount(env, prefix)) === 1, 'a hostile request stored an event');
    log(`${checks.length} hostile requests: ${checks.map((c) => `${c.name} → ${c.status ?? `closed after ${c.closedAfterS} s`}`).join('; ')}`);
    return { hostileRequests: checks.length, eventsStored: 1, slowBodyCutAfterS: slowBody, slowHeadersCutAfterS: slowHeaders, checks };
  } finally {
    await purger.kill('SIGTERM');
  }
}

/**
 * POST with Transfer-Encoding: chunked (no length up front), written with backpressure until the
 * server answers or hangs up. Resolves {status, body}; status 0 = cut off without an answer.
 */
function chunked(port, headers, payload) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let data = '';
    let closed = false;
    s.on('connect', async () => {
      s.write(`POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`);
      for (let i = 0; i < payload.length && !closed && data === ''; i += 65536) {
        const c = payload.subarray(i, i + 65536);
        const more = s.write(Buffer.concat([Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n')]));
        if (!more) await new Promise((r) => { s.once('drain', r); s.once('close', r); });
      }
      if (!closed && data === '') s.write('0\r\n\r\n');
    });
    s.on('data', (d) => { data += d.toString(); });
    s.on('error', () => {});
    s.on('close', () => { closed = true; resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(data)?.[1] ?? 0), body: data.split('\r\n\r\n')[1] ?? '' }); });
    s.setTimeout(30_000, () => s.destroy());
  });
}

/** Sends headers (mode "headers") or a body (mode "body") one piece a second; seconds until the server closed, or null. */
function trickle(port, mode) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    const t0 = Date.now();
    let iv;
    const done = (v) => { clearInterval(iv); clearTimeout(limit); s.destroy(); resolve(v); };
    const limit = setTimeout(() => done(null), 45_000);
    s.on('connect', () => {
      s.write(mode === 'body'
        ? 'POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{'
        : 'POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      iv = setInterval(() => { if (!s.destroyed) s.write(mode === 'body' ? ' ' : 'X-Slow: 1\r\n'); }, 1000);
    });
    s.on('error', () => {});
    s.on('close', () => done(Math.round((Date.now() - t0) / 100) / 10));
  });
}
