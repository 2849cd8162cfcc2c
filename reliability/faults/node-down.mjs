// Fault 4: one of three Varnish nodes is unreachable (SIGSTOP, cache kept) during a burst: the
// two others are purged while it is down; when it comes back it gets its backlog and serves
// none of the purged pages. (Its backlog gone: node-backlog-gone.mjs. A node that restarts with
// an empty cache and skips its backlog: the purger's resilience.test.ts "a node that restarted".)
import { sleep } from '../../testkit/wait.mjs';
import { assert, metric, round, summary } from '../lib/common.mjs';
import { applyLatency, burst, newPrefix, postPaths, sendBatches, startNodes, startPurger, stillCached, stopNodes, waitCaughtUp, warm } from '../lib/cluster.mjs';

export const title = 'fault 4: one of three Varnish nodes down during a burst';

export async function run({ env, quick, log }) {
  const nodes = await startNodes(env, 2);
  try {
    const pages = (await postPaths(env, 8)).map((p) => p.path);
    return await withBacklog(env, nodes, pages, quick ? 2000 : 10_000, quick ? 5000 : 20_000, log);
  } finally {
    await stopNodes(nodes);
  }
}

async function withBacklog(env, nodes, canaries, total, downMs, log) {
  const prefix = newPrefix('node-down');
  const addrs = nodes.map((n) => n.node);
  const down = nodes[2];
  const purger = await startPurger(env, { prefix, nodes: addrs });
  try {
    await warm(nodes, canaries);
    down.pause();
    const t0 = Date.now();
    const b = burst(env, total, canaries);
    await sendBatches(env, purger.url, b.batches);
    const up = addrs.slice(0, 2);
    await waitCaughtUp(env, prefix, up, 120_000);
    const othersMs = Date.now() - t0;
    for (const n of nodes.slice(0, 2)) {
      const left = await stillCached(n, canaries);
      assert(left.length === 0, `${n.node} still serves purged pages while ${down.node} is down: ${left.join(' ')}`);
    }
    const lat = (await Promise.all(b.canaryIds.map((id) => applyLatency(purger.url, id, up[0])))).filter((x) => x !== null);
    assert(lat.length === canaries.length, 'canary receipts not applied on the healthy nodes');
    const nodeUp = await metric(purger.url, 'purger_node_up', { node: down.node });
    log(`a) ${total} events applied on the 2 healthy nodes in ${othersMs} ms while ${down.node} is unreachable (purger_node_up=${nodeUp})`);
    await sleep(Math.max(0, downMs - (Date.now() - t0)));
    down.resume();
    const back = Date.now();
    await waitCaughtUp(env, prefix, [down.node], 120_000);
    const catchUpMs = Date.now() - back;
    const left = await stillCached(down, canaries);
    assert(left.length === 0, `${down.node} serves purged pages after coming back: ${left.join(' ')}`);
    log(`a) ${down.node} back after ${downMs} ms: backlog applied in ${catchUpMs} ms, no purged page served`);
    return { events: total, downSeconds: round(downMs / 1000), healthyNodesAppliedAllMs: othersMs, canaryApplyMsOnHealthy: summary(lat), returningNodeCatchUpMs: catchUpMs, staleOnReturn: 0 };
  } finally {
    down.resume();
    await purger.kill('SIGTERM');
  }
}
