// PURGER_REDIS_MIN_REPLICAS: 202 only once that many replicas have the events (WAIT); a replica
// that does not confirm in time turns into 503 + Retry-After, and the sender's retry with the
// same webhook-id is stored once. Real redis-server primary and replica, real varnishd.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisServer } from '../../testkit/redis.mjs';
import { until } from '../../testkit/wait.mjs';
import { SITE, Stack, signedHeaders, urlEvent } from './support/stack.js';
import type { Service } from '../src/service.js';
import { appliedEverywhere } from './helpers.js';

let stack: Stack;
let replica: RedisServer;
let primaryClient: Redis;
let replicaClient: Redis;

beforeAll(async () => {
  stack = await Stack.start({ nodes: 1 });
  replica = await RedisServer.start('always', { replicaOf: stack.redis.port });
  primaryClient = new Redis(stack.redis.url);
  replicaClient = new Redis(replica.url);
  await until('replica online', async () => /slave0:.*state=online/.test(await primaryClient.info('replication')), 20_000, 100);
});

afterAll(async () => {
  replica?.resume();
  primaryClient?.disconnect();
  replicaClient?.disconnect();
  await replica?.stop();
  await stack?.close();
});

async function post(svc: Service, body: string, id: string): Promise<{ status: number; retryAfter: string | null; json: Record<string, unknown> }> {
  const res = await fetch(`${svc.url}/v1/events`, { method: 'POST', headers: signedHeaders(body, { id }), body });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), json: (await res.json()) as Record<string, unknown> };
}

describe('PURGER_REDIS_MIN_REPLICAS=1', () => {
  it('answers 202 once the replica has the event', async () => {
    const svc = await stack.service({ PURGER_REDIS_MIN_REPLICAS: '1', PURGER_REDIS_WAIT_MS: '2000' });
    const e = urlEvent(['/wait/ok/']);
    const r = await post(svc, JSON.stringify({ site: SITE, events: [e] }), `msg_wait_ok_${Date.now()}`);
    expect(r.status).toBe(202);
    expect(await replicaClient.exists(`purger:evt:${SITE}/${e.id}`)).toBe(1);
    await stack.stopService(svc);
  });

  it('answers 503 with Retry-After when the replica does not confirm in time; the retry is stored once and applied', async () => {
    const svc = await stack.service({ PURGER_REDIS_MIN_REPLICAS: '1', PURGER_REDIS_WAIT_MS: '300' });
    await until('node', () => svc.worker!.nodeCount === 1);
    const e = urlEvent(['/wait/late/']);
    const body = JSON.stringify({ site: SITE, events: [e] });
    const id = `msg_wait_late_${Date.now()}`;
    const lenBefore = await primaryClient.xlen('purger:log');
    replica.pause();
    let r: Awaited<ReturnType<typeof post>>;
    try {
      r = await post(svc, body, id);
    } finally {
      replica.resume();
    }
    expect(r.status).toBe(503);
    expect(r.json.error).toBe('storage_unreplicated');
    expect(Number(r.retryAfter)).toBeGreaterThan(0);
    // the outbox retries the same webhook: acknowledged (as a duplicate of the stored batch), once
    const again = await post(svc, body, id);
    expect(again.status).toBe(202);
    expect(again.json).toEqual({ accepted: [], duplicates: [e.id] });
    expect(await primaryClient.xlen('purger:log')).toBe(lenBefore + 1);
    expect(await replicaClient.exists(`purger:evt:${SITE}/${e.id}`)).toBe(1);
    const nodes = await appliedEverywhere(svc, e.id, 1);
    expect(nodes.map((n) => n.state)).toEqual(['applied']);
    await stack.stopService(svc);
  });

  it('(control) without it, the same lagging replica does not stop a 202', async () => {
    const svc = await stack.service({ PURGER_REDIS_MIN_REPLICAS: '0' });
    replica.pause();
    try {
      const r = await post(svc, JSON.stringify({ site: SITE, events: [urlEvent(['/wait/none/'])] }), `msg_wait_none_${Date.now()}`);
      expect(r.status).toBe(202);
    } finally {
      replica.resume();
    }
    await stack.stopService(svc);
  });
});
