// Fault 1, second form: the origin hangs (nginx SIGSTOPped: the kernel still accepts connections,
// nothing answers). Cached pages keep being served with zero errors. Uncached URLs wait for the
// backend's first_byte_timeout (30 s) until the health probe marks the origin sick (probe
// timeout 2 s, 3 of 5); from then on default.vcl fetches them through its unprobed twin, whose
// first_byte_timeout is 5 s, so they get the clean 503 within about 5 s (a merely saturated
// origin would still get to answer them). Figures: how long uncached requests waited before
// and after the probe noticed, read from /varnish-health.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from '../../testkit/http.mjs';
import { sleep, until } from '../../testkit/wait.mjs';
import { assert, getOnce, loadFigures, readLoad, round, summary } from '../lib/common.mjs';
import { postPaths, warm } from '../lib/cluster.mjs';

export const title = 'fault 1b: origin hangs (accepts, never answers) under read load';

function nginxPids(env) {
  const master = Number(readFileSync(join(env.dir, 'run/nginx.pid'), 'utf8').trim());
  let workers = [];
  try { workers = execFileSync('pgrep', ['-P', String(master)], { encoding: 'utf8' }).split(/\s+/).filter(Boolean).map(Number); } catch { /* none */ }
  return [master, ...workers];
}

export async function run({ env, quick, log }) {
  const hangS = quick ? 12 : 30;
  const edge = { node: env.edge, get: (p, o = {}) => request(env.edge, p, { host: env.site, ...o }) };
  const cached = ['/', ...(await postPaths(env, 11)).map((p) => p.path)];
  await warm([edge], cached);
  // The check before this one may have left the probe sick; measure from a healthy start.
  const health = async () => (await getOnce(env.edge, '/varnish-health', env.site, 2000)).headers['x-backend-health'];
  await until('the probe sees the origin healthy', async () => (await health()) === 'healthy', 60_000, 500);
  const load = readLoad(env.edge, env.site, cached, { concurrency: 4, pauseMs: 1, maxSeconds: hangS + 120 });
  await sleep(1000);
  const pids = nginxPids(env);
  const probes = [];
  let stopped = false;
  try {
    for (const p of pids) process.kill(p, 'SIGSTOP');
    stopped = true;
    const hungAt = Date.now();
    // One uncached request every 500 ms, each on its own connection and in the background, so a
    // hung one neither delays nor hides the next.
    const pending = [];
    let i = 0;
    let sickAt = Infinity;
    while (Date.now() - hungAt < hangS * 1000) {
      const sent = Date.now() - hungAt;
      if (!Number.isFinite(sickAt) && (await health()) === 'sick') sickAt = sent / 1000;
      pending.push(getOnce(env.edge, `/?reliability-hung=${Date.now()}-${i++}`, env.site)
        .then((r) => probes.push({ sentS: sent / 1000, status: r.status, ms: r.ms, retryAfter: r.headers['retry-after'] })));
      await sleep(500);
    }
    for (const p of pids) process.kill(p, 'SIGCONT');
    stopped = false;
    const backAt = Date.now();
    await Promise.all(pending);
    await until('uncached pages are 200 again', async () => (await edge.get(`/?reliability-after=${Date.now()}`)).status === 200, 60_000, 200);
    const recoverMs = Date.now() - backAt;
    const samples = await load.stop();
    const all = loadFigures(samples);
    const during = loadFigures(samples.filter((s) => s.t >= hungAt && s.t <= backAt));
    const before = probes.filter((p) => p.sentS < sickAt);
    const after = probes.filter((p) => p.sentS >= sickAt);
    log(`origin hung ${hangS} s: ${during.requests} cached-page requests, ${all.errors} errors; uncached: ${before.length} sent before the probe noticed (waited ${summary(before.map((p) => p.ms)).max} ms at most), ${after.length} after (max ${summary(after.map((p) => p.ms)).max} ms)`);
    assert(all.errors === 0, `${all.errors} client errors on cached pages (${all.errorSample.join('; ')})`);
    assert(Number.isFinite(sickAt), 'the probe never marked the hung origin sick (/varnish-health)');
    // 5 s first_byte_timeout of the unprobed twin, plus slack for a loaded machine.
    // A request still waiting when the origin resumes gets its page: that is the twin's point.
    const answeredAfterResume = (p) => p.status === 200 && p.sentS + p.ms / 1000 >= hangS - 0.5;
    const bad = after.filter((p) => p.ms > 7000 || (p.status !== 503 && !answeredAfterResume(p)));
    assert(bad.length === 0, `after the probe marked the origin sick, uncached requests got ${JSON.stringify(bad.slice(0, 3))}, want a 503 within about 5 s`);
    assert(probes.every((p) => p.status === 503 || p.status === 200), `uncached answers: ${[...new Set(probes.map((p) => p.status))]}`);
    return {
      hangSeconds: hangS, cachedRequestsDuring: during.requests, clientErrors: all.errors, cachedLatencyMs: during.latencyMs,
      originMarkedSickAfterS: round(sickAt), uncachedBeforeSickMs: summary(before.map((p) => p.ms)), uncachedAfterSickMs: summary(after.map((p) => p.ms)), recoverMs,
    };
  } finally {
    if (stopped) for (const p of pids) { try { process.kill(p, 'SIGCONT'); } catch { /* gone */ } }
    await load.stop();
  }
}
