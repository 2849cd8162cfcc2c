// Fault 7: Redis behind Sentinel (one primary, two replicas, three sentinels: Debian's
// redis-server and redis-sentinel, started by the purger's own test harness) loses its primary
// (SIGKILL) in the middle of a 10,000-event burst sent through a purger process connected through
// the sentinels, with 2 Varnish nodes. The sender retries a 503 (or a refused connection) with
// the same webhook-id like the plugin's outbox. Every accepted event must be applied on every
// node (receipts), none lost; the canary pages in the burst are purged everywhere.
import { sleep } from '../../testkit/wait.mjs';
import { assert, postEvents, round } from '../lib/common.mjs';
import { burst, newPrefix, postPaths, receiptStates, startNodes, startPurger, stillCached, stopNodes, warm } from '../lib/cluster.mjs';

export const title = 'fault 7: Redis primary SIGKILLed mid-burst behind Sentinel; no accepted event lost';

// The Sentinel deployment comes from the purger's test support (TypeScript, outside its build),
// loaded through the purger's own tsx.
const { tsImport } = await import(new URL('../../purger/node_modules/tsx/dist/esm/api/index.mjs', import.meta.url).href);
const { SentinelTopology } = await tsImport('../../purger/test/support/sentinel.ts', import.meta.url);

export async function run({ env, quick, log }) {
  const total = quick ? 2000 : 10_000;
  const prefix = newPrefix('sentinel');
  const topo = await SentinelTopology.start({ appendfsync: 'everysec' });
  const nodes = await startNodes(env, 1);
  const procs = [];
  try {
    const addrs = nodes.map((n) => n.node);
    // (the topology has no password: REDIS_URL only says so; the sentinels name the primary)
    const purger = await startPurger(env, { prefix, nodes: addrs, extra: { ...topo.env(), REDIS_URL: 'redis://127.0.0.1:6379', PURGER_TENANT_EVENTS_PER_S: '0', PURGER_TENANT_BYTES_PER_S: '0' } });
    procs.push(purger);
    const canaries = (await postPaths(env, quick ? 6 : 12)).map((p) => p.path);
    await warm(nodes, canaries);
    const b = burst(env, total, canaries, 250);
    log(`${total} events in ${b.batches.length} batches through Sentinel (${topo.sentinels.length} sentinels, ${topo.servers.length - 1} replicas), ${canaries.length} canary pages on ${nodes.length} nodes`);

    const killAfter = Math.floor(b.batches.length / 3);
    const accepted = new Set();
    let retried = 0;
    let oldPrimary;
    let killedAt;
    const t0 = Date.now();
    for (let i = 0; i < b.batches.length; i++) {
      const id = `msg_sentinel_${prefix}_${i}`;
      for (;;) {
        let r;
        try {
          r = await postEvents(env, purger.url, { site: env.site, events: b.batches[i] }, { id });
        } catch {
          r = { status: 0 };
        }
        if (r.status === 202) {
          for (const e of [...r.json.accepted, ...r.json.duplicates]) accepted.add(e);
          break;
        }
        assert(r.status === 503 || r.status === 0, `batch ${i}: ${r.status} ${String(r.body).slice(0, 200)}`);
        assert(Date.now() - t0 < 120_000, `batch ${i} still refused two minutes into the burst`);
        retried++;
        await sleep(500); // the outbox retries the same webhook-id
      }
      if (i === killAfter) {
        oldPrimary = await topo.killPrimary();
        killedAt = Date.now();
        log(`Redis primary :${oldPrimary} SIGKILLed after ${accepted.size} events accepted`);
      }
    }
    const sentMs = Date.now() - t0;
    const newPrimary = await topo.waitForFailover(oldPrimary, 1);
    const failoverMs = Date.now() - killedAt;
    assert(accepted.size === total, `${accepted.size} of ${total} events accepted`);

    const ids = b.events.map((e) => e.id);
    let states;
    const deadline = Date.now() + (quick ? 60_000 : 180_000);
    for (;;) {
      states = await receiptStates(purger.url, ids);
      const done = addrs.every((a) => (states.nodes[a]?.applied ?? 0) === total);
      if (done || states.missing > 0 || Date.now() > deadline) break;
      await sleep(1000);
    }
    const lost = states.missing;
    assert(lost === 0, `${lost} accepted events have no receipt on the new primary: lost in the failover`);
    for (const a of addrs) {
      const s = states.nodes[a] ?? {};
      assert(s.applied === total, `${a}: ${s.applied ?? 0} of ${total} receipts applied (${JSON.stringify(s)})`);
    }
    const stale = {};
    for (const n of nodes) {
      const left = await stillCached(n, canaries);
      if (left.length) stale[n.node] = left;
    }
    assert(Object.keys(stale).length === 0, `canary pages still cached after the burst: ${JSON.stringify(stale)}`);
    log(`primary :${oldPrimary} -> :${newPrimary}; ${retried} retried webhooks; all ${total} applied on ${nodes.length} nodes; ${lost} lost`);
    return {
      events: total, nodes: nodes.length, replicas: topo.servers.length - 1, sentinels: topo.sentinels.length,
      killedAfterAccepted: killAfter * 250 + 250, retriedWebhooks: retried, sendSeconds: round(sentMs / 1000),
      failoverSeconds: round(failoverMs / 1000), lostEvents: lost,
      receiptsApplied: Object.fromEntries(Object.entries(states.nodes).map(([k, v]) => [k, v.applied])),
      canariesStale: 0,
    };
  } finally {
    await Promise.allSettled(procs.map((p) => p.kill('SIGTERM')));
    await stopNodes(nodes);
    await topo.stop();
  }
}
