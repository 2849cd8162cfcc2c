// The log is bounded by memory: PURGER_LOG_MAX_BYTES / ~300 bytes per entry, trimmed
// approximately on every append (besides the age limit); a node whose cursor was trimmed away
// gets a site-wide ban. Real redis-server and varnishd.
import type { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { LOG_ENTRY_BYTES } from '../src/config/load.js';
import { until } from '../../testkit/wait.mjs';
import { SITE, type Stack, postEvents, tagEvent, urlEvent } from './support/stack.js';
import { counter, stackPerFile, warm } from './helpers.js';

const BUDGET = 65_536; // the smallest budget: 218 entries
const CAP = Math.floor(BUDGET / LOG_ENTRY_BYTES);

let stack: Stack;
let redis: Redis;
stackPerFile({ nodes: 1 }, (s, r) => ([stack, redis] = [s, r]));

it('keeps about PURGER_LOG_MAX_BYTES / 300 entries, within the budget in Redis memory', async () => {
  const svc = await stack.service({ PURGER_ROLE: 'ingest', PURGER_LOG_MAX_BYTES: String(BUDGET), PURGER_REDIS_PREFIX: 'cap', PURGER_TENANT_EVENTS_PER_S: '0', PURGER_TENANT_BYTES_PER_S: '0' });
  for (let i = 0; i < 6; i++) {
    // events like the plugin's: a post's key and a listing key
    const events = Array.from({ length: 500 }, (_, j) => tagEvent([`p-post-${i * 500 + j}`, `l-home`]));
    expect((await postEvents(svc.url, { site: SITE, events })).status).toBe(202);
  }
  const len = await redis.xlen('cap:log');
  // approximate trimming removes whole stream nodes (100 entries each): never below the cap, at most a node above
  expect(len).toBeGreaterThanOrEqual(CAP);
  expect(len).toBeLessThanOrEqual(CAP + 100);
  const bytes = Number(await redis.call('MEMORY', 'USAGE', 'cap:log', 'SAMPLES', '0'));
  expect(bytes / len, 'bytes per log entry (the cost the cap assumes)').toBeLessThanOrEqual(LOG_ENTRY_BYTES * 1.2);
  expect(bytes).toBeLessThanOrEqual(BUDGET * ((CAP + 100) / CAP) * 1.2);
  await stack.stopService(svc);
});

it('a node whose cursor was trimmed away gets a site-wide ban, then follows the log again', async () => {
  const svc = await stack.service({ PURGER_LOG_MAX_BYTES: String(BUDGET), PURGER_REPURGE_DELAYS_MS: '0', PURGER_TENANT_EVENTS_PER_S: '0', PURGER_TENANT_BYTES_PER_S: '0' });
  await until('node', () => svc.worker!.nodeCount === 1);
  const v = stack.varnishes[0]!;
  await warm(stack, ['/cap/untouched/']);
  v.pause();
  try {
    for (let i = 0; i < 4; i++) {
      const events = Array.from({ length: 500 }, (_, j) => urlEvent([`/cap/${i}/${j}/`]));
      expect((await postEvents(svc.url, { site: SITE, events })).status).toBe(202);
    }
  } finally {
    v.resume();
  }
  await until('overrun counted', async () => (await counter(svc, 'purger_log_overruns_total', { node: v.node })) >= 1, 20_000);
  // no event named this page: only the site-wide ban removes it
  await until('site banned on the node', async () => (await v.get(SITE, '/cap/untouched/')).cache === 'MISS', 20_000);
  const after = urlEvent(['/cap/after/']);
  await warm(stack, ['/cap/after/']);
  expect((await postEvents(svc.url, { site: SITE, events: [after] })).status).toBe(202);
  await until('next event applied', async () => (await v.get(SITE, '/cap/after/')).cache === 'MISS', 20_000);
});
