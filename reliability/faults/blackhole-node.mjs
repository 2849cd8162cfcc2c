// Fault 5: a "Varnish node" that accepts connections and never answers (a silent TCP listener).
// The purger times out on it, marks it down, keeps its events pending, and the two real nodes
// are purged as fast as without it.
import { request } from '../../testkit/http.mjs';
import { freePort } from '../../testkit/ports.mjs';
import { assert, blackHole, metric, summary } from '../lib/common.mjs';
import { applyLatency, burst, newPrefix, postPaths, receiptStates, sendBatches, startNodes, startPurger, stillCached, stopNodes, waitCaughtUp, warm } from '../lib/cluster.mjs';

export const title = 'fault 5: a node that accepts connections but never answers';

export async function run({ env, quick, log }) {
  const nodes = await startNodes(env, 1);
  const hole = await blackHole(await freePort());
  const prefix = newPrefix('blackhole');
  const addrs = [...nodes.map((n) => n.node), hole.node];
  const purger = await startPurger(env, { prefix, nodes: addrs, extra: { PURGER_NODE_TIMEOUT_MS: '2000' } });
  try {
    const canaries = (await postPaths(env, 10)).map((p) => p.path);
    await warm(nodes, canaries);
    const total = quick ? 2000 : 10_000;
    const b = burst(env, total, canaries);
    const t0 = Date.now();
    await sendBatches(env, purger.url, b.batches);
    await waitCaughtUp(env, prefix, addrs.slice(0, 2), 60_000);
    const appliedMs = Date.now() - t0;
    for (const n of nodes) {
      const left = await stillCached(n, canaries);
      assert(left.length === 0, `${n.node} still serves purged pages next to the silent node: ${left.join(' ')}`);
    }
    const lat = (await Promise.all(b.canaryIds.map((id) => applyLatency(purger.url, id, addrs[0])))).filter((x) => x !== null);
    await new Promise((r) => setTimeout(r, 2500)); // one node timeout: the silent node is marked down
    const up = await metric(purger.url, 'purger_node_up', { node: hole.node });
    assert(up === 0, `purger_node_up for the silent node is ${up}, want 0`);
    assert(hole.connections() > 0, 'the purger never connected to the silent node');
    const states = await receiptStates(purger.url, b.canaryIds);
    const pending = states.nodes[hole.node]?.pending ?? 0;
    assert(pending === canaries.length, `silent node receipts: ${JSON.stringify(states.nodes[hole.node])}, want all pending`);
    const ready = await request(purger.url, '/readyz');
    assert(ready.status === 200, `purger not ready while one node is silent: ${ready.status}`);
    log(`${total} events applied on the 2 real nodes in ${appliedMs} ms; silent node held ${hole.connections()} connections, marked down, its events pending`);
    return { events: total, realNodesAppliedAllMs: appliedMs, canaryApplyMs: summary(lat), silentNodeConnections: hole.connections(), silentNodeUp: up, silentNodePending: pending, purgerReady: true };
  } finally {
    await purger.kill('SIGTERM');
    await hole.close();
    await stopNodes(nodes);
  }
}
