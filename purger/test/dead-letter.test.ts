// Entries that can never be sent: (1) an entry that cannot be planned (an unsafe ban) or read (not JSON)
// stalled the node's delivery loop for ever, retrying the same batch; now it is skipped with a
// failed receipt and a metric, and what follows is applied. (2) A node removed by discovery kept
// its metric series (last values) for ever.
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { until } from '../../testkit/wait.mjs';
import { READ_AUTH, SITE, type Stack, eventId, postEvents, urlEvent } from './support/stack.js';
import { appliedEverywhere, counter, expectNotCached, receipt, stackPerFile, warm } from './helpers.js';

let stack: Stack;
let redis: Redis;
stackPerFile({ nodes: 2 }, (s, r) => ([stack, redis] = [s, r]));

/** Appends an entry to the log as an older or broken writer might have (not through the API). */
async function appendRaw(payload: string, receiptOf?: { id: string }): Promise<string> {
  const seq = await redis.incr('purger:seq');
  // The receipt exists before the entry, as the append script makes them (a worker may read the
  // entry at once, and results are only written into receipts that exist).
  const key = receiptOf ? `purger:evt:${SITE}/${receiptOf.id}` : undefined;
  if (key) await redis.hset(key, { n: seq, m: JSON.stringify({ site: SITE, kind: 'prefix', soft: false, acceptedAt: Date.now() }) });
  const sid = (await redis.xadd('purger:log', '*', 'e', payload, 'n', String(seq)))!;
  if (key) await redis.hset(key, 's', sid);
  return sid;
}

describe('an entry that can never be sent', () => {
  it('is marked failed and counted; the node goes on with the next events', async () => {
    const svc = await stack.service({ PURGER_REPURGE_DELAYS_MS: '300' });
    await until('nodes', () => svc.worker!.nodeCount === 2);
    // A node seen for the first time starts at the end of the log: the raw entries must come after.
    await until('cursors loaded', async () => (await Promise.all(stack.varnishes.map((v) => redis.hget(`purger:node:${v.node}`, 'cursor')))).every((c) => c !== null));
    await warm(stack, ['/after-bad/']);
    // A prefix with a space would be an unsafe ban regex (the API refuses it; the log may not).
    const bad = { id: eventId('bad'), site: SITE, kind: 'prefix', paths: ['/a b/'], soft: false, reason: 'r', time: new Date().toISOString(), acceptedAt: Date.now() };
    await appendRaw(JSON.stringify(bad), bad);
    await appendRaw('{not json');
    const good = urlEvent(['/after-bad/']);
    expect((await postEvents(svc.url, { site: SITE, events: [good] })).status).toBe(202);
    await appliedEverywhere(svc, good.id, 2, 15_000);
    for (const v of stack.varnishes) await expectNotCached(v, '/after-bad/');
    const r = await receipt(svc, bad.id);
    expect(r.nodes).toHaveLength(2);
    for (const n of r.nodes) {
      expect(n.state).toBe('failed');
      expect((n as { error?: string }).error).toMatch(/cannot be sent to Varnish: ban regex contains a space/);
    }
    for (const v of stack.varnishes) {
      expect(await counter(svc, 'purger_events_dead_lettered_total', { node: v.node, reason: 'unplannable' })).toBe(1);
      expect(await counter(svc, 'purger_events_dead_lettered_total', { node: v.node, reason: 'malformed' })).toBe(1);
    }
    // The repurge lane passes them as well (it would otherwise stall the same way).
    const last = (await redis.xrevrange('purger:log', '+', '-', 'COUNT', 1))[0]![0];
    for (const v of stack.varnishes) {
      await until(`repurge cursor of ${v.node} past the bad entries`, async () => (await redis.hget(`purger:node:${v.node}`, 'repurge:300')) === last, 10_000);
    }
    await stack.stopService(svc);
  });
});

describe('a node that discovery no longer lists', () => {
  it('loses its metric series', async () => {
    const [a, b] = stack.varnishes as [NonNullable<Stack['varnishes'][0]>, NonNullable<Stack['varnishes'][0]>];
    let answer = ['127.0.0.1'];
    const svc = await stack.service(
      { VARNISH_NODES: a.node, VARNISH_DNS: `varnish.test:${b.port}`, PURGER_DNS_INTERVAL_MS: '100', PURGER_REPURGE_DELAYS_MS: '0' },
      { resolver: async () => answer },
    );
    await until('both nodes', () => svc.worker!.nodeCount === 2);
    const e = urlEvent(['/series/']);
    await postEvents(svc.url, { site: SITE, events: [e] });
    await appliedEverywhere(svc, e.id, 2);
    const metrics = async () => (await svc.app.inject({ method: 'GET', url: '/metrics', headers: READ_AUTH })).body;
    await until('backlog series of b', async () => (await metrics()).includes(`purger_node_backlog{node="${b.node}"}`));
    expect(await metrics()).toContain(`purger_invalidations_sent_total{node="${b.node}"`);
    answer = [];
    await until('b removed', () => svc.worker!.nodeCount === 1);
    await until('no series of b left', async () => !(await metrics()).includes(`node="${b.node}"`), 5000);
    await new Promise((r) => setTimeout(r, 1200)); // a few heartbeats later, still gone
    const text = await metrics();
    expect(text).not.toContain(`node="${b.node}"`);
    expect(text).toContain(`purger_node_backlog{node="${a.node}"}`);
    await stack.stopService(svc);
  });
});
