// One site cannot fill Redis for everyone: an event's size is capped (413
// naming the limit, nothing stored), the per-site caps must fit Redis maxmemory or the purger
// refuses to start, and a Redis that filled up anyway recovers by itself once entries pass their
// retention (the log is trimmed on a timer, with plain XTRIM, which Redis runs at maxmemory).
import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/load.js';
import type { Service } from '../src/service.js';
import { RedisServer } from '../../testkit/redis.mjs';
import { until } from '../../testkit/wait.mjs';
import { SITE, type Stack, signedHeaders, tagEvent, urlEvent } from './support/stack.js';
import { stackPerFile } from './helpers.js';

let stack: Stack;
let redis: Redis;
stackPerFile({ nodes: 0 }, (s, r) => ([stack, redis] = [s, r]));

function post(svc: Service, body: unknown, opts: { id?: string } = {}) {
  const payload = JSON.stringify(body);
  return svc.app.inject({ method: 'POST', url: '/v1/events', headers: signedHeaders(payload, opts), payload });
}

const urls = (n: number, len = 40) => Array.from({ length: n }, (_, i) => `/${String(i).padStart(len, 'p')}/`);

describe('the size of one event', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await stack.service({ PURGER_ROLE: 'ingest', PURGER_REDIS_PREFIX: 'size', PURGER_MAX_URLS_PER_EVENT: '500', PURGER_MAX_EVENT_BYTES: '16384', PURGER_BODY_LIMIT: '200000', PURGER_TENANT_BYTES_BURST: '200000' });
  });

  async function expectNothingStored(id: string, ids: string[]): Promise<void> {
    expect(await redis.get('size:seq')).toBeNull();
    expect(await redis.exists('size:log')).toBe(0);
    expect((await redis.keys(`size:msg:*${id}`)).length).toBe(0);
    for (const e of ids) expect((await redis.keys(`size:evt:*${e}`)).length).toBe(0);
  }

  it('more URLs than PURGER_MAX_URLS_PER_EVENT: 413 naming the event, the limit and its setting; no event of the request stored', async () => {
    const ok = urlEvent(['/fine/']);
    const big = urlEvent(urls(1200, 4));
    const r = await post(svc, { site: SITE, events: [ok, tagEvent(['k']), ok.id === big.id ? ok : urlEvent(['/b/']), big] }, { id: 'msg_too_many' });
    expect(r.statusCode).toBe(413);
    expect(r.json()).toMatchObject({ error: 'event_too_large', field: '/events/3/urls' });
    expect(r.json().message).toContain('event 3 carries 1,200 URLs; at most 500 per event (PURGER_MAX_URLS_PER_EVENT)');
    await expectNothingStored('msg_too_many', [ok.id, big.id]);
  });

  it('keys count the same way', async () => {
    const r = await post(svc, { site: SITE, events: [tagEvent(Array.from({ length: 501 }, (_, i) => `k${i}`))] });
    expect(r.statusCode).toBe(413);
    expect(r.json().message).toContain('event 0 carries 501 keys; at most 500 per event (PURGER_MAX_URLS_PER_EVENT)');
  });

  it('an event larger than PURGER_MAX_EVENT_BYTES: 413 naming the limit; nothing stored', async () => {
    const small = urlEvent(['/s/']);
    const big = urlEvent(urls(200, 100));
    const r = await post(svc, { site: SITE, events: [small, big] }, { id: 'msg_too_big' });
    expect(r.statusCode).toBe(413);
    expect(r.json().message).toMatch(/^event 1 is [0-9,]+ bytes of JSON; at most 16,384 per event \(PURGER_MAX_EVENT_BYTES\)/);
    await expectNothingStored('msg_too_big', [small.id, big.id]);
  });

  it('a body larger than PURGER_BODY_LIMIT: 413 naming the setting and its value', async () => {
    const r = await post(svc, { site: SITE, events: Array.from({ length: 100 }, () => urlEvent(urls(20, 100))) });
    expect(r.statusCode).toBe(413);
    expect(r.json().message).toContain('at most 200,000 bytes (PURGER_BODY_LIMIT)');
  });

  it('the OpenAPI document lists the 413', async () => {
    const doc = (await svc.app.inject({ method: 'GET', url: '/openapi.json', headers: { authorization: `Bearer ${stack.baseEnv.PURGER_READ_TOKEN}` } })).json();
    expect(Object.keys(doc.paths['/v1/events'].post.responses)).toContain('413');
    expect(doc.paths['/v1/events'].post.responses['413'].description).toContain('PURGER_MAX_URLS_PER_EVENT');
  });
});

describe('the caps must fit Redis maxmemory', () => {
  it('the defaults fit the stack\'s maxmemory 512mb with its one site (and two)', async () => {
    await redis.config('SET', 'maxmemory', '512mb');
    try {
      const s = await stack.service({ PURGER_ROLE: 'ingest', PURGER_SITES: 'a.test,b.test' });
      await stack.stopService(s);
    } finally {
      await redis.config('SET', 'maxmemory', '0');
    }
  });

  it('refuses to start, naming the settings, when all sites × caps × retention cannot fit maxmemory', async () => {
    await redis.config('SET', 'maxmemory', '512mb');
    try {
      const err = await stack.service({ PURGER_ROLE: 'ingest', PURGER_SITES: 'a.test,b.test,c.test' }).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      const msg = (err as ConfigError).message;
      expect(msg).toContain('3 site(s) (PURGER_SITES)');
      expect(msg).toContain('maxmemory 512.0 MiB (Redis maxmemory)');
      for (const s of ['PURGER_TENANT_BYTES_PER_S=1024', 'PURGER_STREAM_MAX_AGE_S=86400', 'PURGER_TENANT_EVENTS_PER_S=1', 'PURGER_DEDUPE_TTL_S=86400']) expect(msg).toContain(s);
      // no cap at all cannot fit any maxmemory
      const err2 = await stack.service({ PURGER_ROLE: 'ingest', PURGER_TENANT_BYTES_PER_S: '0' }).then(() => undefined, (e: unknown) => e);
      expect((err2 as Error).message).toContain('PURGER_TENANT_BYTES_PER_S=0 means no cap');
    } finally {
      await redis.config('SET', 'maxmemory', '0');
    }
  });

  it('PURGER_REDIS_MAXMEMORY stands in for Redis\'s (CONFIG disabled, shared Redis): checked with the other settings', () => {
    expect(() => stack.config({ PURGER_ROLE: 'ingest', PURGER_REDIS_MAXMEMORY: String(256 * 1_048_576) })).not.toThrow();
    expect(() => stack.config({ PURGER_ROLE: 'ingest', PURGER_REDIS_MAXMEMORY: String(128 * 1_048_576) })).toThrow(/maxmemory 128\.0 MiB \(PURGER_REDIS_MAXMEMORY\)/);
  });
});

describe('a full Redis recovers by itself', () => {
  it('once entries pass PURGER_STREAM_MAX_AGE_S the log is trimmed although appends are refused, and ingest answers 202 again', { timeout: 90_000 }, async () => {
    const own = await RedisServer.start('everysec');
    const r = new Redis(own.url);
    const svc = await stack.service({
      REDIS_URL: own.url, PURGER_ROLE: 'ingest', PURGER_STREAM_MAX_AGE_S: '10', PURGER_DEDUPE_TTL_S: '60', PURGER_TRIM_INTERVAL_MS: '500',
      PURGER_TENANT_EVENTS_PER_S: '0', PURGER_TENANT_BYTES_PER_S: '0',
    });
    try {
      const used = Number(/^used_memory:(\d+)/m.exec(await r.info('memory'))?.[1]);
      await r.config('SET', 'maxmemory-policy', 'noeviction');
      await r.config('SET', 'maxmemory', String(used + 6 * 1_048_576));
      // ~100 KB events (the default caps allow 256 KiB) until Redis is full
      let full: Awaited<ReturnType<typeof post>> | undefined;
      // first ~100 KB events (the default caps allow 256 KiB)
      for (let i = 0; i < 200 && !full; i++) {
        const res = await post(svc, { site: SITE, events: [urlEvent(urls(500, 180))] });
        if (res.statusCode === 503) full = res;
        else expect(res.statusCode).toBe(202);
      }
      expect(full?.json().error).toBe('storage_full');
      // Redis hovers at the limit (a request's own buffers count toward used_memory): put it
      // clearly over, as a flood that went on would, so only freeing memory brings it back
      const usedNow = Number(/^used_memory:(\d+)/m.exec(await r.info('memory'))?.[1]);
      await r.config('SET', 'maxmemory', String(usedNow - 1_048_576));
      for (let i = 0; i < 5; i++) {
        const res = await post(svc, { site: SITE, events: [urlEvent(['/small/'])] });
        expect(res.statusCode).toBe(503);
        expect(res.json().error).toBe('storage_full');
        await new Promise((res) => setTimeout(res, 200));
      }
      const fullAt = Date.now();
      // nobody trims by hand: the purger must recover within retention + a few trim intervals
      const ok = await until('ingest answers 202 again', async () => {
        const res = await post(svc, { site: SITE, events: [urlEvent(['/after/'])] });
        return res.statusCode === 202 ? res : undefined;
      }, 30_000, 500);
      expect(ok.json().accepted).toHaveLength(1);
      expect(Date.now() - fullAt).toBeLessThan(30_000);
    } finally {
      await stack.stopService(svc);
      r.disconnect();
      await own.stop();
    }
  });
});
