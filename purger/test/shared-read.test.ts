// Fan-out: nodes woken by the same event read the same range of the log; one Redis read (and one
// parse) serves them all, so ten nodes do not cost ten reads. Real redis-server.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisServer } from '../../testkit/redis.mjs';
import type { StoredEvent } from '../src/model/event-model.js';
import { StreamLog } from '../src/store/stream-log.js';

let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  server = await RedisServer.start();
  redis = new Redis(server.url);
});

afterAll(async () => {
  redis.disconnect();
  await server.stop();
});

async function scriptCalls(): Promise<number> {
  const m = /^cmdstat_evalsha:calls=(\d+)/m.exec(await redis.info('commandstats'));
  const e = /^cmdstat_eval:calls=(\d+)/m.exec(await redis.info('commandstats'));
  return Number(m?.[1] ?? 0) + Number(e?.[1] ?? 0);
}

it('ten identical reads at once are one Redis read, with one shared result', async () => {
  const log = new StreamLog(redis, 'shared', { maxLen: 1000, maxAgeS: 3600, dedupeTtlS: 3600 });
  const events: StoredEvent[] = Array.from({ length: 20 }, (_, i) => ({ id: `s-${i}`, site: 'example.test', kind: 'tags', tags: [`p-${i}`], soft: false, reason: 'r', time: new Date().toISOString(), acceptedAt: Date.now() }) as StoredEvent);
  await log.append('m-1', 'example.test', events);
  await log.read('0-0', 0, 100); // loads the script
  const before = await scriptCalls();
  const results = await Promise.all(Array.from({ length: 10 }, () => log.read('0-0', 0, 100)));
  expect(await scriptCalls()).toBe(before + 1);
  expect(results[0]!.entries).toHaveLength(20);
  for (const r of results) expect(r).toBe(results[0]);
  // a later read is a new read (it may see new entries)
  await log.read('0-0', 0, 100);
  expect(await scriptCalls()).toBe(before + 2);
});
