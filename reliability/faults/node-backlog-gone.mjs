// Fault 4, second half: one of three Varnish nodes is unreachable for longer than the purger's
// log keeps events (PURGER_STREAM_MAXLEN=100, 1000 events): its backlog is gone, so when it is
// back it must get a site-wide ban and serve nothing cached before; the healthy nodes keep
// their unrelated pages.
import { assert, metric, varnishBans } from '../lib/common.mjs';
import { burst, newPrefix, postPaths, sendBatches, startNodes, startPurger, stillCached, stopNodes, waitCaughtUp, warm } from '../lib/cluster.mjs';

export const title = 'fault 4b: a node whose backlog fell off the log gets a site-wide ban';

export async function run({ env, log }) {
  const nodes = await startNodes(env, 2);
  try {
    const pages = (await postPaths(env, 16)).map((p) => p.path);
    return await withBacklogGone(env, nodes, pages.slice(0, 8), pages.slice(8, 16), log);
  } finally {
    await stopNodes(nodes);
  }
}

async function withBacklogGone(env, nodes, canaries, others, log) {
  const prefix = newPrefix('node-gone');
  const addrs = nodes.map((n) => n.node);
  const down = nodes[2];
  const purger = await startPurger(env, { prefix, nodes: addrs, extra: { PURGER_STREAM_MAXLEN: '100', PURGER_NODE_TIMEOUT_MS: '1000', PURGER_RETRY_MAX_MS: '2000' } });
  try {
    await warm(nodes, [...canaries, ...others]);
    // The paused node's cursor must exist before the burst: one event everyone applies.
    const first = burst(env, 1, [canaries[0]]);
    await sendBatches(env, purger.url, first.batches);
    await waitCaughtUp(env, prefix, addrs, 30_000);
    await warm([down], [canaries[0]]);
    const bansBefore = varnishBans(down.workdir).length;
    down.pause();
    // Small batches, each applied on the healthy nodes before the next: only the paused node
    // falls further behind than the log keeps.
    const b = burst(env, 1000, canaries, 20);
    await sendBatches(env, purger.url, b.batches, () => waitCaughtUp(env, prefix, addrs.slice(0, 2), 30_000));
    const healthyOverruns = (await metric(purger.url, 'purger_log_overruns_total', { node: addrs[0] })) + (await metric(purger.url, 'purger_log_overruns_total', { node: addrs[1] }));
    assert(healthyOverruns === 0, `a healthy node that kept up overran the log (${healthyOverruns})`);
    down.resume();
    await waitCaughtUp(env, prefix, [down.node], 60_000);
    const overruns = await metric(purger.url, 'purger_log_overruns_total', { node: down.node });
    const bans = varnishBans(down.workdir);
    const left = await stillCached(down, [...canaries, ...others]);
    assert(left.length === 0, `${down.node} serves ${left.length} pages cached before its backlog was trimmed from the log (purger_log_overruns_total=${overruns}, ${bans.length - bansBefore} new bans): ${left.join(' ')}`);
    const siteBan = bans.find((l) => l.includes(`obj.http.x-host == ${env.site}`) && !l.includes('x-url'));
    assert(overruns >= 1 && siteBan, `no site-wide ban on ${down.node} (purger_log_overruns_total=${overruns}): ${bans.join(' | ')}`);
    const healthyOthers = await stillCached(nodes[0], others);
    assert(healthyOthers.length === others.length, `the site-wide ban for ${down.node} reached a healthy node: ${others.length - healthyOthers.length} unrelated pages gone`);
    log(`log trimmed to ~100 while ${down.node} was down: it got a site-wide ban (${bans.length - bansBefore} new bans), serves nothing from before; the healthy nodes kept their unrelated pages`);
    return { events: 1000, streamMaxLen: 100, overruns, siteWideBan: true, staleOnReturn: 0, unrelatedPagesKeptOnHealthy: healthyOthers.length };
  } finally {
    down.resume();
    await purger.kill('SIGTERM');
  }
}
