// The HTTP API against a real redis-server (ingest role; no Varnish needed here).
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../testkit/wait.mjs';
import { READ_AUTH, SITE, Stack, TEST_READ_TOKEN, TEST_TOKEN, eventId, signedHeaders, tagEvent, urlEvent } from './support/stack.js';
import type { Service } from '../src/service.js';

const ROTATED = 'whsec_cHVyZ2VyLXRlc3Qtc2VjcmV0LUItcm90YXRlZC05ODc2';

let stack: Stack;
let svc: Service;
let redis: Redis;

beforeAll(async () => {
  stack = await Stack.start({ nodes: 0 });
  svc = await stack.service({ PURGER_ROLE: 'ingest', PURGER_WEBHOOK_SECRETS: `${stack.baseEnv.PURGER_WEBHOOK_SECRETS},${ROTATED}` });
  redis = new Redis(stack.redis.url);
});

afterAll(async () => {
  redis.disconnect();
  await stack.close();
});

function inject(body: unknown, opts: Parameters<typeof signedHeaders>[1] & { headers?: Record<string, string> } = {}) {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  return svc.app.inject({ method: 'POST', url: '/v1/events', headers: { ...signedHeaders(payload, opts), ...opts.headers }, payload });
}

describe('POST /v1/events authentication', () => {
  const body = { site: SITE, events: [urlEvent(['/a/'])] };

  it('accepts a valid signature and a signature made with the rotated secret', async () => {
    const r1 = await inject({ site: SITE, events: [urlEvent(['/a/'])] });
    expect(r1.statusCode).toBe(202);
    const r2 = await inject({ site: SITE, events: [urlEvent(['/a/'])] }, { secret: ROTATED });
    expect(r2.statusCode).toBe(202);
  });

  it('rejects a wrong secret, an expired timestamp and a tampered body with 401 saying which check failed', async () => {
    const wrong = await inject(body, { secret: 'whsec_d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldA==' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toMatchObject({ error: 'signature', message: expect.stringContaining('no webhook-signature entry matches') });

    const old = await inject(body, { timestamp: Math.floor(Date.now() / 1000) - 301 });
    expect(old.statusCode).toBe(401);
    expect(old.json().message).toMatch(/too old/);

    const text = JSON.stringify(body);
    const headers = signedHeaders(text);
    const tampered = await svc.app.inject({ method: 'POST', url: '/v1/events', headers, payload: text.replace('/a/', '/b/') });
    expect(tampered.statusCode).toBe(401);
    expect(JSON.stringify(tampered.json())).not.toContain('whsec_');

    const missing = await svc.app.inject({ method: 'POST', url: '/v1/events', headers: { 'content-type': 'application/json' }, payload: text });
    expect(missing.statusCode).toBe(401);
    expect(missing.json().message).toBe('missing webhook-id header');
  });
});

describe('secrets bound to one site', () => {
  it('refuses a secret scoped to one site for another site (403), accepts it for its own', async () => {
    const scoped = await stack.service({
      PURGER_ROLE: 'ingest',
      PURGER_SITES: `${SITE},other.test`,
      PURGER_WEBHOOK_SECRETS: `${SITE}=${stack.baseEnv.PURGER_WEBHOOK_SECRETS},other.test=${ROTATED}`,
      PURGER_TAG_PREFIXES: `${SITE}=wp1,other.test=wp10`,
    });
    const send = (site: string, secret?: string) => {
      const payload = JSON.stringify({ site, events: [tagEvent([site === SITE ? 'wp1-k' : 'wp10-k'])] });
      return scoped.app.inject({ method: 'POST', url: '/v1/events', headers: signedHeaders(payload, { secret }), payload });
    };
    const cross = await send('other.test');
    expect(cross.statusCode).toBe(403);
    expect(cross.json()).toMatchObject({ error: 'forbidden_site', field: '/site', message: expect.stringContaining('not allowed to invalidate site "other.test"') });
    expect((await send(SITE)).statusCode).toBe(202);
    expect((await send('other.test', ROTATED)).statusCode).toBe(202);
    expect((await send(SITE, ROTATED)).statusCode).toBe(403);
    // wp1's secret cannot reach wp10's keys (the namespace ends at the separator).
    const payload = JSON.stringify({ site: SITE, events: [tagEvent(['wp1-p-1', 'wp10-p-1'])] });
    const sneaky = await scoped.app.inject({ method: 'POST', url: '/v1/events', headers: signedHeaders(payload), payload });
    expect(sneaky.statusCode).toBe(400);
    expect(sneaky.json()).toMatchObject({ error: 'invalid', field: '/events/0/tags/1', message: expect.stringContaining('namespace "wp1-"') });
    await stack.stopService(scoped);
  });
});

describe('POST /v1/events validation', () => {
  it.each([
    ['a tag with a space', { site: SITE, events: [tagEvent(['ok', 'bad tag'])] }, '/events/0/tags/1', /tag must match/],
    ['a URL on another host', { site: SITE, events: [urlEvent(['/ok/']), { ...urlEvent([]), urls: ['https://evil.test/x'] }] }, '/events/1/urls/0', /not the site/],
    ['a URL with a space', { site: SITE, events: [{ ...urlEvent([]), urls: [`http://${SITE}/a b`] }] }, '/events/0/urls/0', /printable ASCII/],
    ['an unknown field', { site: SITE, events: [{ ...urlEvent(['/a/']), extra: 1 }] }, '/events/0/extra', /unknown field/],
    ['a missing id', { site: SITE, events: [{ kind: 'all', time: 'x' }] }, '/events/0/id', /missing required field "id"/],
    ['tags on a urls event', { site: SITE, events: [{ ...urlEvent(['/a/']), tags: ['x'] }] }, '/events/0/tags', /takes urls, not tags/],
    ['an unknown kind', { site: SITE, events: [{ ...urlEvent(['/a/']), kind: 'everything' }] }, '/events/0/kind', /./],
    ['501 events', { site: SITE, events: Array.from({ length: 501 }, () => tagEvent(['k'])) }, '/events', /at most 500/],
    ['a site that is not normalized', { site: 'Example.TEST', events: [tagEvent(['k'])] }, '/site', /normalized host/],
  ])('400 for %s, naming the field', async (_name, body, field, message) => {
    const r = await inject(body);
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({ error: 'invalid', field });
    expect(r.json().message).toMatch(message);
  });

  it('413 for more than PURGER_MAX_URLS_PER_EVENT (default 1000) tags, naming the event and the setting (was a 400 before the cap became a setting)', async () => {
    const r = await inject({ site: SITE, events: [tagEvent(Array.from({ length: 1001 }, (_, i) => `k${i}`))] });
    expect(r.statusCode).toBe(413);
    expect(r.json()).toMatchObject({ error: 'event_too_large', field: '/events/0/tags', message: expect.stringContaining('event 0 carries 1,001 keys; at most 1,000 per event (PURGER_MAX_URLS_PER_EVENT)') });
  });

  it('400 for invalid JSON (after the signature is checked)', async () => {
    const r = await inject('{"site":');
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({ error: 'invalid_json' });
  });

  it('403 for a site outside the allow-list, 413 past the body limit, 415 for non-JSON', async () => {
    const forbidden = await inject({ site: 'other.test', events: [tagEvent(['k'])] });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().message).toContain('other.test');

    const big = JSON.stringify({ site: SITE, events: [{ ...tagEvent(['k']), reason: 'x'.repeat(1_100_000) }] });
    const tooLarge = await svc.app.inject({ method: 'POST', url: '/v1/events', headers: signedHeaders(big), payload: big });
    expect(tooLarge.statusCode).toBe(413);

    const text = await svc.app.inject({ method: 'POST', url: '/v1/events', headers: { ...signedHeaders('hi'), 'content-type': 'text/plain' }, payload: 'hi' });
    expect(text.statusCode).toBe(415);
    expect(text.json()).toMatchObject({ error: 'unsupported_media_type' });
  });

  it('stores nothing when one event of a batch is invalid', async () => {
    const before = await redis.xlen('purger:log');
    const good = urlEvent(['/good/']);
    const r = await inject({ site: SITE, events: [good, { ...urlEvent([]), urls: ['https://evil.test/'] }] });
    expect(r.statusCode).toBe(400);
    expect(await redis.xlen('purger:log')).toBe(before);
    expect(await redis.exists(`purger:evt:${SITE}/${good.id}`)).toBe(0);
  });
});

describe('hostile and malformed input', () => {
  const bodies: unknown[] = [
    null, [], 'x', 42, {}, { site: 1 }, { site: SITE }, { site: SITE, events: null }, { site: SITE, events: [null] },
    { site: SITE, events: [{}] }, { site: SITE, events: [{ id: 'a', kind: 'urls', urls: [], time: '2026-11-22T00:00:00Z' }] },
    { site: SITE, events: [{ id: 'a', kind: 'tags', tags: ['ä'], time: '2026-11-22T00:00:00Z' }] },
    { site: SITE, events: [{ id: 'a', kind: 'urls', urls: [`http://${SITE}/\u0000`], time: '2026-11-22T00:00:00Z' }] },
    { site: SITE, events: [{ id: 'a', kind: 'prefix', urls: [`http://${SITE}/ && obj.http.x-host ~ .`], time: '2026-11-22T00:00:00Z' }] },
    { site: SITE, events: [{ id: 'a', kind: 'all', soft: 'yes', time: '2026-11-22T00:00:00Z' }] },
    { site: SITE, events: [{ id: 'a'.repeat(129), kind: 'all', time: '2026-11-22T00:00:00Z' }] },
    { site: SITE, events: [{ id: 'a', kind: 'all', time: 'not a time' }] },
  ];
  const raw = [...bodies.map((b) => JSON.stringify(b)), `{"site":"${SITE}","events":[{"id":"a","kind":"all","time":"2026-11-22T00:00:00Z","__proto__":{"x":1}}]}`, '{"site":', ''];
  it.each(raw.map((b) => [b]))('answers 4xx JSON, never 5xx, and stores nothing: %s', async (payload) => {
    const before = await redis.get('purger:seq');
    const r = await inject(payload);
    expect(r.statusCode).toBeGreaterThanOrEqual(400);
    expect(r.statusCode).toBeLessThan(500);
    expect(r.json()).toMatchObject({ error: expect.any(String), message: expect.any(String) });
    expect(await redis.get('purger:seq')).toBe(before);
  });

  it('answers 400 for a malformed receipt id and 404 for unknown routes, as JSON', async () => {
    const bad = await svc.app.inject({ method: 'GET', url: '/v1/events/a%20b', headers: READ_AUTH });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBeDefined();
    const none = await svc.app.inject({ method: 'GET', url: '/nope' });
    expect(none.statusCode).toBe(404);
    expect(none.json()).toBeTypeOf('object');
  });
});

describe('durable storage and duplicates', () => {
  it('answers 202 only once the events are in the stream and the receipt exists', async () => {
    const events = [urlEvent(['/d1/']), tagEvent(['t1', 't2']), { id: eventId(), kind: 'prefix', urls: [`http://${SITE}/news/`], soft: false, reason: 'r', time: new Date().toISOString() }];
    const r = await inject({ site: SITE, events });
    expect(r.statusCode).toBe(202);
    expect(r.json()).toEqual({ accepted: events.map((e) => e.id), duplicates: [] });
    const entries = await redis.xrevrange('purger:log', '+', '-', 'COUNT', 3);
    expect(entries.map(([, f]) => JSON.parse(f[1]!).id).reverse()).toEqual(events.map((e) => e.id));
    const receipt = await svc.app.inject({ method: 'GET', url: `/v1/events/${events[0]!.id}`, headers: READ_AUTH });
    expect(receipt.statusCode).toBe(200);
    expect(receipt.json()).toMatchObject({ id: events[0]!.id, site: SITE, kind: 'urls', soft: false });
  });

  it('accepts a repeated webhook-id and a repeated event id without storing them twice', async () => {
    const e1 = urlEvent(['/dup/']);
    const body = { site: SITE, events: [e1] };
    const id = `msg_${eventId()}`;
    const first = await inject(body, { id });
    expect(first.json()).toEqual({ accepted: [e1.id], duplicates: [] });
    const len = await redis.xlen('purger:log');
    const retry = await inject(body, { id });
    expect(retry.statusCode).toBe(202);
    expect(retry.json()).toEqual({ accepted: [], duplicates: [e1.id] });
    const e2 = tagEvent(['new']);
    const mixed = await inject({ site: SITE, events: [e1, e2, e2] });
    expect(mixed.json()).toEqual({ accepted: [e2.id], duplicates: [e1.id, e2.id] });
    expect(await redis.xlen('purger:log')).toBe(len + 1);
  });

  it('answers 503 while Redis is down and stores again once it is back; accepted events survive a Redis crash', async () => {
    const kept = urlEvent(['/kept/']);
    expect((await inject({ site: SITE, events: [kept] })).statusCode).toBe(202);
    await stack.redis.kill();
    const lost = urlEvent(['/while-down/']);
    const down = await until('503', async () => {
      const r = await inject({ site: SITE, events: [lost] });
      return r.statusCode === 503 ? r : undefined;
    });
    expect(down.json()).toMatchObject({ error: 'storage_unavailable', message: expect.stringMatching(/retry/) });
    const notReady = await svc.app.inject({ method: 'GET', url: '/readyz' });
    expect(notReady.statusCode).toBe(503);
    await stack.redis.start();
    const again = await until('202 after Redis restart', async () => {
      const r = await inject({ site: SITE, events: [lost] });
      return r.statusCode === 202 ? r : undefined;
    });
    expect(again.json()).toEqual({ accepted: [lost.id], duplicates: [] });
    // The event acknowledged before the SIGKILL is still in the log (AOF, appendfsync always).
    const r2 = new Redis(stack.redis.url);
    const all = await r2.xrange('purger:log', '-', '+');
    r2.disconnect();
    expect(all.some(([, f]) => JSON.parse(f[1]!).id === kept.id)).toBe(true);
  });
});

describe('operator, receipts, health, OpenAPI, metrics', () => {
  it('POST /v1/purge needs the bearer token', async () => {
    const payload = JSON.stringify({ site: SITE, events: [{ kind: 'all', reason: 'purge all' }] });
    const none = await svc.app.inject({ method: 'POST', url: '/v1/purge', headers: { 'content-type': 'application/json' }, payload });
    expect(none.statusCode).toBe(401);
    const wrong = await svc.app.inject({ method: 'POST', url: '/v1/purge', headers: { 'content-type': 'application/json', authorization: 'Bearer nope' }, payload });
    expect(wrong.statusCode).toBe(401);
    const ok = await svc.app.inject({ method: 'POST', url: '/v1/purge', headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_TOKEN}` }, payload });
    expect(ok.statusCode).toBe(202);
    expect(ok.json().accepted).toHaveLength(1);
    expect(ok.json().accepted[0]).toMatch(/^op-/);
  });

  it('GET /v1/events/:id is 404 for an unknown event', async () => {
    const r = await svc.app.inject({ method: 'GET', url: '/v1/events/nope-123', headers: READ_AUTH });
    expect(r.statusCode).toBe(404);
  });

  it('GET /v1/events/:id takes every id a webhook may carry (128 characters) and refuses longer ones with a 400', async () => {
    // Fastify's router cut path parameters at 100 characters with an undocumented 414 (found by the fuzz run).
    const longest = await svc.app.inject({ method: 'GET', url: `/v1/events/${'a'.repeat(128)}`, headers: READ_AUTH });
    expect(longest.statusCode).toBe(404);
    const tooLong = await svc.app.inject({ method: 'GET', url: `/v1/events/${'a'.repeat(129)}`, headers: READ_AUTH });
    expect(tooLong.statusCode).toBe(400);
    const huge = await svc.app.inject({ method: 'GET', url: `/v1/events/${'0'.repeat(5000)}`, headers: READ_AUTH });
    expect(huge.statusCode).toBe(400);
    expect(huge.json()).toMatchObject({ field: '/id', message: 'event id must be 1 to 128 characters: letters, digits and _.:- only' });
  });

  it('serves health, readiness, OpenAPI and metrics', async () => {
    expect((await svc.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await until('ready', async () => {
      const r = await svc.app.inject({ method: 'GET', url: '/readyz' });
      return r.statusCode === 200 ? r : undefined;
    });
    expect(ready.json().checks.redis).toBe('ok');
    const doc = (await svc.app.inject({ method: 'GET', url: '/openapi.json', headers: READ_AUTH })).json();
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/events', '/v1/purge', '/v1/events/{id}', '/healthz', '/readyz']));
    const metrics = (await svc.app.inject({ method: 'GET', url: '/metrics', headers: READ_AUTH })).body;
    expect(metrics).toMatch(/purger_events_received_total\{outcome="accepted"\} [1-9]/);
    expect(metrics).toMatch(/purger_events_received_total\{outcome="unauthorized"\} [1-9]/);
    expect(metrics).toContain('purger_redis_connected 1');
  });
});

describe('read access: receipts, metrics and the API document need a token', () => {
  const reads = ['/v1/events/nope-123', '/v1/events/a%20b', '/metrics', '/openapi.json'];

  it.each(reads)('%s: 401 without a token or with a wrong one, saying what to send', async (url) => {
    const none = await svc.app.inject({ method: 'GET', url });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({ error: 'unauthorized', message: expect.stringContaining('Authorization: Bearer <read token>') });
    const wrong = await svc.app.inject({ method: 'GET', url, headers: { authorization: 'Bearer not-the-token-at-all' } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).not.toContain(TEST_READ_TOKEN);
    expect(wrong.body).not.toContain('purger_');
  });

  it('a receipt answers the read token and the operator token; health and readiness stay open', async () => {
    const e = urlEvent(['/read/']);
    expect((await inject({ site: SITE, events: [e] })).statusCode).toBe(202);
    for (const token of [TEST_READ_TOKEN, TEST_TOKEN]) {
      const r = await svc.app.inject({ method: 'GET', url: `/v1/events/${e.id}`, headers: { authorization: `Bearer ${token}` } });
      expect(r.statusCode).toBe(200);
      expect(r.json().id).toBe(e.id);
      const m = await svc.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
      expect(m.statusCode).toBe(200);
    }
    expect((await svc.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect([200, 503]).toContain((await svc.app.inject({ method: 'GET', url: '/readyz' })).statusCode);
  });

  it('with no read or operator token configured, they stay closed and say how to open them', async () => {
    const bare = await stack.service({ PURGER_ROLE: 'ingest', PURGER_READ_TOKEN: '', PURGER_OPERATOR_TOKEN: '' });
    for (const url of reads) {
      const r = await bare.app.inject({ method: 'GET', url, headers: { authorization: 'Bearer anything-at-all-0123' } });
      expect(r.statusCode).toBe(401);
      expect(r.json().message).toContain('set PURGER_READ_TOKEN');
    }
    expect((await bare.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    await stack.stopService(bare);
  });
});
