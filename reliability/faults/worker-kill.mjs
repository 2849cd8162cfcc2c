// Fault 3: the purger worker is killed with SIGKILL in the middle of a 10,000-event burst and
// restarted: it replays from its cursors and every event reaches every one of 3 Varnish nodes.
// Ingest and worker run as separate processes (PURGER_ROLE), so the burst keeps being accepted
// while the worker is dead.
import { assert, round } from '../lib/common.mjs';
import { burst, cursorSeq, newPrefix, postPaths, receiptStates, sendBatches, startNodes, startPurger, stillCached, stopNodes, waitCaughtUp, warm } from '../lib/cluster.mjs';

export const title = 'fault 3: worker SIGKILLed mid-burst and restarted replays everything';

export async function run({ env, quick, log }) {
  const total = 10_000;
  const prefix = newPrefix('worker-kill');
  const nodes = await startNodes(env, 2);
  const procs = [];
  try {
    const addrs = nodes.map((n) => n.node);
    const ingest = await startPurger(env, { prefix, role: 'ingest' });
    procs.push(ingest);
    const worker = await startPurger(env, { prefix, role: 'worker', nodes: addrs });
    procs.push(worker);
    const canaries = (await postPaths(env, quick ? 10 : 20)).map((p) => p.path);
    await warm(nodes, canaries);
    const b = burst(env, total, canaries);
    log(`${total} events in ${b.batches.length} batches, ${canaries.length} canary pages on ${nodes.length} nodes`);

    const killAfter = Math.floor(b.batches.length / 3);
    let killedAt;
    let restarted;
    const t0 = Date.now();
    await sendBatches(env, ingest.url, b.batches, async (i, accepted) => {
      if (i === killAfter) {
        killedAt = { accepted, appliedOnStack: await cursorSeq(env, prefix, addrs[0]), ms: Date.now() - t0 };
        await worker.kill('SIGKILL');
        log(`worker SIGKILLed after ${accepted} events accepted (${killedAt.appliedOnStack} applied on ${addrs[0]})`);
      }
      if (i === killAfter + Math.floor(b.batches.length / 3)) {
        restarted = await startPurger(env, { prefix, role: 'worker', nodes: addrs });
        procs.push(restarted);
        log(`worker restarted after ${accepted} events accepted`);
      }
    });
    const sentMs = Date.now() - t0;
    const head = await waitCaughtUp(env, prefix, addrs, quick ? 120_000 : 300_000);
    const doneMs = Date.now() - t0;
    assert(head === total, `the log holds ${head} events, want ${total}`);
    assert(killedAt.appliedOnStack < total, 'the worker had already applied everything when it was killed: not mid-burst');

    const stale = {};
    for (const n of nodes) {
      const left = await stillCached(n, canaries);
      if (left.length) stale[n.node] = left;
    }
    assert(Object.keys(stale).length === 0, `canary pages still cached after the burst: ${JSON.stringify(stale)}`);

    const ids = b.events.map((e) => e.id);
    const states = await receiptStates(ingest.url, ids);
    for (const a of addrs) {
      const s = states.nodes[a] ?? {};
      assert(s.applied === total, `${a}: ${s.applied ?? 0} of ${total} receipts applied (${JSON.stringify(s)})`);
    }
    assert(states.missing === 0, `${states.missing} receipts missing`);
    return {
      events: total, nodes: nodes.length, killedAfterAccepted: killedAt.accepted, appliedBeforeKill: killedAt.appliedOnStack,
      sendSeconds: round(sentMs / 1000), allAppliedSeconds: round(doneMs / 1000), receiptsApplied: Object.fromEntries(Object.entries(states.nodes).map(([k, v]) => [k, v.applied])),
      canariesStale: 0,
    };
  } finally {
    await Promise.allSettled(procs.map((p) => p.kill('SIGTERM')));
    await stopNodes(nodes);
  }
}
