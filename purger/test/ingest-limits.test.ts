// One signer cannot exhaust Redis: per-site caps on events/s and bytes/s (429
// with Retry-After, nothing stored), small receipts, Redis memory metrics, and a Redis at
// maxmemory answered with a 503 the sender retries: the same batch is stored once Redis has room.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TenantLimiter } from '../src/ingest/tenant-limiter.js';
import { READ_AUTH, SITE, Stack, signedHeaders, tagEvent, urlEvent } from './support/stack.js';
import type { Service } from '../src/service.js';
import { counter } from './helpers.js';

describe('TenantLimiter', () => {
  const limits = { events: { perS: 10, burst: 500 }, bytes: { perS: 1000, burst: 5000 } };

  it('lets a burst through, then refuses the whole batch with the wait, and refills', () => {
    let now = 0;
    const l = new TenantLimiter(limits, () => now);
    expect(l.take('a', 500, 100)).toEqual({ ok: true });
    expect(l.take('a', 10, 100)).toEqual({ ok: false, limit: 'events', retryAfterS: 1 });
    expect(l.take('a', 30, 100)).toEqual({ ok: false, limit: 'events', retryAfterS: 3 });
    now = 1000;
    expect(l.take('a', 10, 100)).toEqual({ ok: true });
    expect(l.take('a', 1, 1)).toMatchObject({ ok: false });
  });

  it('caps bytes separately, takes nothing from a refused batch, and keeps sites apart', () => {
    let now = 0;
    const l = new TenantLimiter(limits, () => now);
    expect(l.take('a', 1, 4500)).toEqual({ ok: true });
    expect(l.take('a', 1, 2500)).toEqual({ ok: false, limit: 'bytes', retryAfterS: 2 });
    expect(l.take('a', 1, 500)).toEqual({ ok: true }); // the refused batch took no events or bytes
    expect(l.take('b', 500, 5000)).toEqual({ ok: true });
    expect(l.remaining().find((r) => r.site === 'b' && r.limit === 'bytes')?.ratio).toBe(0);
    now = 10_000;
    expect(l.remaining().every((r) => r.ratio === 1 || r.limit === 'events')).toBe(true);
  });

  it('0 per second means unlimited', () => {
    const l = new TenantLimiter({ events: { perS: 0, burst: 1 }, bytes: { perS: 0, burst: 1 } });
    for (let i = 0; i < 100; i++) expect(l.take('a', 500, 1e6).ok).toBe(true);
  });
});

let stack: Stack;
let svc: Service;
let redis: Redis;

beforeAll(async () => {
  stack = await Stack.start({ nodes: 0 });
  svc = await stack.service({
    PURGER_ROLE: 'ingest',
    PURGER_SITES: `${SITE},other.test`,
    PURGER_TENANT_EVENTS_PER_S: '1',
    PURGER_TENANT_EVENTS_BURST: '500',
    PURGER_TENANT_BYTES_PER_S: '1',
    PURGER_BODY_LIMIT: '200000',
    PURGER_TENANT_BYTES_BURST: '300000',
  });
  redis = new Redis(stack.redis.url);
});

afterAll(async () => {
  await redis.config('SET', 'maxmemory', '0').catch(() => undefined);
  redis.disconnect();
  await stack.close();
});

function post(body: unknown, opts: { id?: string } = {}) {
  const payload = JSON.stringify(body);
  return svc.app.inject({ method: 'POST', url: '/v1/events', headers: signedHeaders(payload, opts), payload });
}

describe('per-site ingest caps', () => {
  it('answers 429 with Retry-After and a clear message past the events cap, stores nothing, and counts it', async () => {
    const ok = await post({ site: SITE, events: Array.from({ length: 500 }, () => tagEvent(['k'])) });
    expect(ok.statusCode).toBe(202);
    const seq = await redis.get('purger:seq');
    const over = await post({ site: SITE, events: [tagEvent(['k'])] });
    expect(over.statusCode).toBe(429);
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(over.json()).toMatchObject({ error: 'rate_limited', message: expect.stringContaining(`site "${SITE}" is over its ingest cap of 1 events/s (burst 500 events`) });
    expect(over.json().message).toContain('retry the same request after');
    expect(await redis.get('purger:seq')).toBe(seq);
    expect(await counter(svc, 'purger_tenant_rejections_total', { site: SITE, limit: 'events' })).toBe(1);
    expect(await counter(svc, 'purger_events_received_total', { outcome: 'rate_limited' })).toBe(1);
    // Another tenant is not affected.
    expect((await post({ site: 'other.test', events: [tagEvent(['k'])] })).statusCode).toBe(202);
    const m = (await svc.app.inject({ method: 'GET', url: '/metrics', headers: READ_AUTH })).body;
    expect(m).toContain(`purger_tenant_rejections_total{site="${SITE}",limit="events"} 1`);
    expect(m).toMatch(new RegExp(`purger_tenant_budget_ratio\\{site="${SITE.replace('.', '\\.')}",limit="events"\\} 0`));
  });

  it('caps bytes too', async () => {
    const big = (n: number) => ({ site: 'other.test', events: Array.from({ length: n }, () => ({ ...tagEvent(['k']), reason: 'r'.repeat(450) })) });
    expect((await post(big(300))).statusCode).toBe(202); // ~160 kB
    const over = await post(big(300));
    expect(over.statusCode).toBe(429);
    expect(over.json().message).toContain('ingest cap of 1 bytes/s');
    expect(await counter(svc, 'purger_tenant_rejections_total', { site: 'other.test', limit: 'bytes' })).toBe(1);
  });
});

describe('receipts', () => {
  it('keep ids and per-node results, not the event (no URLs, tags or reason in Redis)', async () => {
    const e = urlEvent(['/private/path/'], { reason: 'post 7 updated by alice' });
    const svc2 = await stack.service({ PURGER_ROLE: 'ingest', PURGER_TENANT_EVENTS_PER_S: '0', PURGER_TENANT_BYTES_PER_S: '0' });
    const payload = JSON.stringify({ site: SITE, events: [e] });
    expect((await svc2.app.inject({ method: 'POST', url: '/v1/events', headers: signedHeaders(payload), payload })).statusCode).toBe(202);
    const h = await redis.hgetall(`purger:evt:${SITE}/${e.id}`);
    expect(Object.keys(h).sort()).toEqual(['m', 'n', 's']);
    expect(JSON.stringify(h)).not.toContain('/private/path/');
    expect(JSON.stringify(h)).not.toContain('alice');
    expect(Buffer.byteLength(JSON.stringify(h))).toBeLessThan(150);
    const r = await svc2.app.inject({ method: 'GET', url: `/v1/events/${e.id}`, headers: READ_AUTH });
    expect(r.json()).toMatchObject({ id: e.id, site: SITE, kind: 'urls', soft: false, reason: 'post 7 updated by alice' });
    await stack.stopService(svc2);
  });
});

describe('Redis memory', () => {
  it('exports used_memory, maxmemory, their ratio and the log length', async () => {
    await redis.config('SET', 'maxmemory', '1gb');
    const m = (await svc.app.inject({ method: 'GET', url: '/metrics', headers: READ_AUTH })).body;
    expect(Number(/^purger_redis_used_memory_bytes (\d+)/m.exec(m)?.[1])).toBeGreaterThan(100_000);
    expect(m).toMatch(/^purger_redis_maxmemory_bytes 1073741824$/m);
    expect(Number(/^purger_redis_memory_used_ratio ([0-9.e-]+)/m.exec(m)?.[1])).toBeGreaterThan(0);
    expect(Number(/^purger_log_entries (\d+)/m.exec(m)?.[1])).toBeGreaterThanOrEqual(500);
  });

  it('at maxmemory (noeviction) answers 503 with Retry-After, stores nothing, and stores the retried batch once Redis has room', async () => {
    // (no caps: PURGER_REDIS_MAXMEMORY=0 skips the start check against the 1gb set above)
    const s = await stack.service({ PURGER_ROLE: 'ingest', PURGER_TENANT_EVENTS_PER_S: '0', PURGER_TENANT_BYTES_PER_S: '0', PURGER_REDIS_MAXMEMORY: '0' });
    await redis.config('SET', 'maxmemory-policy', 'noeviction');
    await redis.config('SET', 'maxmemory', '1');
    try {
      const e = urlEvent(['/oom/']);
      const body = JSON.stringify({ site: SITE, events: [e] });
      const headers = signedHeaders(body, { id: 'msg_oom_retry' });
      const seq = await redis.get('purger:seq');
      const full = await s.app.inject({ method: 'POST', url: '/v1/events', headers, payload: body });
      expect(full.statusCode).toBe(503);
      expect(full.headers['retry-after']).toBe('30');
      expect(full.json()).toMatchObject({ error: 'storage_full', message: expect.stringContaining('out of memory') });
      expect(await redis.get('purger:seq')).toBe(seq);
      expect(await redis.exists(`purger:msg:${SITE}/msg_oom_retry`, `purger:evt:${SITE}/${e.id}`)).toBe(0);
      expect(await counter(s, 'purger_events_received_total', { outcome: 'redis_full' })).toBe(1);
      await redis.config('SET', 'maxmemory', '0');
      // The sender's retry (same webhook id, same body) is stored: nothing was lost.
      const again = await s.app.inject({ method: 'POST', url: '/v1/events', headers, payload: body });
      expect(again.statusCode).toBe(202);
      expect(again.json()).toEqual({ accepted: [e.id], duplicates: [] });
    } finally {
      await redis.config('SET', 'maxmemory', '0');
      await stack.stopService(s);
    }
  });
});
