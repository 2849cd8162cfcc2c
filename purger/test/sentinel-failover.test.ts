// Redis behind Sentinel (one primary, two replicas, three sentinels: real redis-server and
// redis-sentinel processes) with the purger started like `npm start` and two real varnishd nodes.
// The primary is SIGKILLed in the middle of a burst of webhooks while its replicas lag behind; the
// sender retries 503s with the same webhook-id like the plugin's outbox. Every event that got a 202 (or, on a retry, was
// listed as a duplicate of a 202) must be applied on every node, as its receipt says: none lost.
// PURGER_TEST_FAILOVER_ENV='{"PURGER_REDIS_MIN_REPLICAS":"0"}' runs it without WAIT: it then
// fails (about 2,000 of the 10,000 accepted events have no receipt on the new primary).
import { Pool } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../../testkit/ports.mjs';
import { until } from '../../testkit/wait.mjs';
import { READ_AUTH, SITE, Stack, signedHeaders, tagEvent } from './support/stack.js';

const WEBHOOKS = 200;
const PER_WEBHOOK = 50; // 10,000 events
const SENDERS = 4;
/** each sender sends at most one webhook per this many ms: the burst lasts ~2 s, the crash is inside it */
const PACE_MS = 40;

let stack: Stack;
let base: string;
let pool: Pool;

beforeAll(async () => {
  stack = await Stack.start({ nodes: 2, sentinel: true, appendfsync: 'everysec' });
  const port = await freePort();
  // A long poll: after the failover, only pub/sub (resubscribed on the new primary) and the
  // reconnect wake the workers, so the last check below fails if the subscriber is lost.
  stack.spawn({ PURGER_PORT: String(port), PURGER_POLL_MS: '30000', PURGER_TENANT_EVENTS_PER_S: '0', PURGER_TENANT_BYTES_PER_S: '0', PURGER_REPURGE_DELAYS_MS: '0', ...(process.env.PURGER_TEST_FAILOVER_ENV ? JSON.parse(process.env.PURGER_TEST_FAILOVER_ENV) as Record<string, string> : {}) });
  base = `http://127.0.0.1:${port}`;
  pool = new Pool(base, { connections: SENDERS + 2 });
  await until('purger ready', async () => (await fetch(`${base}/readyz`)).status === 200, 30_000, 100);
}, 90_000);

afterAll(async () => {
  await pool?.close();
  await stack?.close();
});

interface Outcome {
  status: number;
  accepted: string[];
  duplicates: string[];
}

async function post(id: string, body: string): Promise<Outcome> {
  try {
    const res = await pool.request({ method: 'POST', path: '/v1/events', headers: signedHeaders(body, { id }), body });
    const json = (await res.body.json()) as Partial<Outcome>;
    return { status: res.statusCode, accepted: json.accepted ?? [], duplicates: json.duplicates ?? [] };
  } catch {
    return { status: 0, accepted: [], duplicates: [] };
  }
}

async function receipt(id: string): Promise<{ status: number; nodes: { node: string; state: string }[] }> {
  const res = await pool.request({ method: 'GET', path: `/v1/events/${id}`, headers: READ_AUTH });
  const json = (await res.body.json()) as { nodes?: { node: string; state: string }[] };
  return { status: res.statusCode, nodes: json.nodes ?? [] };
}

it('SIGKILL of the Redis primary mid-burst: every accepted event is applied on every node, none lost', async () => {
  const topo = stack.sentinel!;
  const webhooks = Array.from({ length: WEBHOOKS }, (_, i) => {
    const events = Array.from({ length: PER_WEBHOOK }, (_, j) => tagEvent([`fo-${i}-${j}`, 'fo-all']));
    return { id: `msg_failover_${i}_${Date.now()}`, body: JSON.stringify({ site: SITE, events }), ids: events.map((e) => e.id) };
  });
  const crashWithReplicationLag = async (): Promise<number> => {
    const primary = await topo.primaryPort();
    const replicas = topo.servers.filter((r) => r.port !== primary);
    for (const r of replicas) r.pause();
    // (and cut their links: bytes already sent would otherwise wait in their socket buffers)
    const c = topo.client(primary);
    await c.call('CLIENT', 'KILL', 'TYPE', 'replica').finally(() => c.disconnect());
    await new Promise((res) => setTimeout(res, 400));
    await topo.server(primary).kill();
    for (const r of replicas) r.resume();
    return primary;
  };
  const acked = new Set<string>();
  let answered = 0;
  let refused = 0;
  let killed: Promise<number> | undefined;
  let next = 0;
  const deadline = Date.now() + 45_000;
  await Promise.all(Array.from({ length: SENDERS }, async () => {
    while (next < webhooks.length) {
      const w = webhooks[next++]!;
      const paced = new Promise((res) => setTimeout(res, PACE_MS));
      for (;;) {
        const r = await post(w.id, w.body);
        if (r.status === 202) {
          for (const id of [...r.accepted, ...r.duplicates]) acked.add(id);
          expect(r.accepted.length + r.duplicates.length).toBe(PER_WEBHOOK);
          break;
        }
        expect([0, 503]).toContain(r.status);
        refused++;
        if (Date.now() > deadline) throw new Error(`webhook ${w.id} still refused after the failover`);
        await new Promise((res) => setTimeout(res, 200)); // the outbox retries the same webhook-id
      }
      // The middle of the burst: a third is stored. Then the replicas fall behind for 400 ms
      // (SIGSTOP, links cut), the primary dies (SIGKILL) and the replicas come back: whatever the primary
      // acknowledged meanwhile exists nowhere else. Without WAIT those 202s are lost events.
      if (++answered === Math.floor(WEBHOOKS / 3)) killed = crashWithReplicationLag();
      await paced;
    }
  }));
  const oldPrimary = await killed!;
  expect(refused, 'the kill happened while webhooks were being sent').toBeGreaterThan(0);
  const newPrimary = await topo.waitForFailover(oldPrimary, 1);
  expect(newPrimary).not.toBe(oldPrimary);
  expect(acked.size).toBe(WEBHOOKS * PER_WEBHOOK);

  // The subscriber follows the failover: it is subscribed on the new primary, and an event
  // sent now is applied although the workers poll only every 30 s.
  const client = topo.client(newPrimary);
  try {
    await until('purger-sub subscribed on the new primary', async () => /name=purger-sub .*sub=1/.test(String(await client.call('CLIENT', 'LIST'))), 20_000, 200);
  } finally {
    client.disconnect();
  }
  const after = tagEvent(['fo-after']);
  const afterBody = JSON.stringify({ site: SITE, events: [after] });
  const afterPost = await post(`msg_failover_after_${Date.now()}`, afterBody);
  expect(afterPost.status).toBe(202);
  await until('event sent after the failover applied on both nodes (pub/sub)', async () => (await receipt(after.id)).nodes.filter((n) => n.state === 'applied').length === 2, 15_000, 100);

  // Every receipt: applied on both nodes. A receipt is written with its log entry, so a missing
  // one (404) is a lost event.
  let pending = [...acked];
  let lost = 0;
  let first = true;
  await until('every accepted event applied on every node', async () => {
    const still: string[] = [];
    for (let i = 0; i < pending.length; i += 16) {
      await Promise.all(pending.slice(i, i + 16).map(async (id) => {
        const r = await receipt(id);
        if (first && r.status === 404) lost++;
        if (r.status !== 200 || r.nodes.length !== 2 || r.nodes.some((n) => n.state !== 'applied')) still.push(id);
      }));
    }
    expect(lost, 'accepted events without a receipt (lost in the failover)').toBe(0);
    first = false;
    pending = still;
    return pending.length === 0;
  }, 30_000, 500).catch((err: unknown) => {
    throw new Error(`${String(err)}; ${pending.length} not applied on every node, e.g. ${pending.slice(0, 3).join(', ')}`);
  });
}, 90_000);
