// Redis at maxmemory (noeviction) while the worker delivers: the purge still reaches Varnish,
// the cursor and receipt wait (their writes are refused), and once Redis has room the event is
// recorded as applied. Nothing accepted is lost. (Before, the receipts script ran inside MULTI;
// after its load failed at maxmemory, ioredis never reloaded it: NOSCRIPT for ever, the node's
// cursor stuck.)
import type { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { until } from '../../testkit/wait.mjs';
import { READ_AUTH, SITE, type Stack, postEvents, urlEvent } from './support/stack.js';
import { appliedEverywhere, receipt, stackPerFile, warm } from './helpers.js';

let stack: Stack;
let redis: Redis;
stackPerFile({ nodes: 1 }, (s, r) => ([stack, redis] = [s, r]));

it('a worker whose Redis fills up keeps the event until it can record it, then records it applied', async () => {
  const svc = await stack.service({ PURGER_REPURGE_DELAYS_MS: '0' });
  await until('node', () => svc.worker!.nodeCount === 1);
  const v = stack.varnishes[0]!;
  await warm(stack, ['/full/']);
  v.pause();
  const e = urlEvent(['/full/']);
  expect((await postEvents(svc.url, { site: SITE, events: [e] })).status).toBe(202);
  await redis.config('SET', 'maxmemory-policy', 'noeviction');
  await redis.config('SET', 'maxmemory', '1');
  v.resume();
  // The purge goes out (Varnish needs no Redis), but the cursor and receipt cannot be written.
  await until('purged on the node', async () => (await v.get(SITE, '/full/')).cache === 'MISS', 15_000);
  await new Promise((r) => setTimeout(r, 500));
  expect((await receipt(svc, e.id)).nodes[0]!.state).toBe('pending');
  const full = await postEvents(svc.url, { site: SITE, events: [urlEvent(['/full/2/'])] });
  expect(full.status).toBe(503);
  expect(full.json.error).toBe('storage_full');
  // The alert metric still reads while Redis is full.
  const m = (await svc.app.inject({ method: 'GET', url: '/metrics', headers: READ_AUTH })).body;
  expect(Number(/^purger_redis_memory_used_ratio ([0-9.e+]+)$/m.exec(m)?.[1])).toBeGreaterThan(1);
  await redis.config('SET', 'maxmemory', '0');
  const nodes = await appliedEverywhere(svc, e.id, 1, 30_000);
  expect(nodes[0]!.state).toBe('applied');
});
