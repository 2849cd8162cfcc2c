// A Redis failover (or a restart that lost its last second) can take a node's last commits with
// it: its cursor in Redis goes back, and the receipts those commits wrote are gone, while the
// worker's cursor in memory is ahead. The worker must notice (its commit is conditional on the
// cursor it read from), re-read from Redis's cursor and record those events, not leave them
// looking skipped.
import type { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { until } from '../../testkit/wait.mjs';
import { SITE, type Stack, postEvents, urlEvent } from './support/stack.js';
import { appliedEverywhere, receipt, stackPerFile } from './helpers.js';

let stack: Stack;
let redis: Redis;
stackPerFile({ nodes: 1 }, (s, r) => ([stack, redis] = [s, r]));

it('re-applies and records the events whose commits Redis lost, when its cursor went back', async () => {
  const svc = await stack.service({ PURGER_REPURGE_DELAYS_MS: '0', PURGER_POLL_MS: '200' });
  await until('node', () => svc.worker!.nodeCount === 1);
  const node = stack.varnishes[0]!.node;
  const key = `purger:node:${node}`;
  const first = urlEvent(['/rollback/0/']);
  expect((await postEvents(svc.url, { site: SITE, events: [first] })).status).toBe(202);
  await appliedEverywhere(svc, first.id, 1);
  const saved = await redis.hmget(key, 'cursor', 'seq');

  const lost = [1, 2, 3].map((i) => urlEvent([`/rollback/${i}/`]));
  expect((await postEvents(svc.url, { site: SITE, events: lost })).status).toBe(202);
  for (const e of lost) await appliedEverywhere(svc, e.id, 1);
  // What a failover to a replica that missed the last commit looks like:
  await redis.hset(key, 'cursor', saved[0]!, 'seq', saved[1]!);
  for (const e of lost) await redis.hdel(`purger:evt:${SITE}/${e.id}`, `n:${node}`);

  const next = urlEvent(['/rollback/4/']);
  expect((await postEvents(svc.url, { site: SITE, events: [next] })).status).toBe(202);
  await appliedEverywhere(svc, next.id, 1);
  for (const e of lost) {
    const nodes = await appliedEverywhere(svc, e.id, 1, 10_000).catch(async () => (await receipt(svc, e.id)).nodes);
    expect(nodes.map((n) => n.state), e.id).toEqual(['applied']);
  }
});
