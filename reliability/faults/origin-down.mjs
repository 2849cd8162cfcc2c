// Fault 1: the origin (nginx) is down under read load. Pages cached before the outage keep
// being served with zero client errors, including pages an edit soft-purged during the outage
// (served STALE: stale-if-error); an uncached URL gets a fast HTML 503 with Retry-After, never
// a hang. After the origin is back, uncached URLs are 200 again.
import { request } from '../../testkit/http.mjs';
import { sleep, until } from '../../testkit/wait.mjs';
import { assert, loadFigures, postEvents, readLoad, round, service, summary, urlEvent } from '../lib/common.mjs';
import { postPaths, warm } from '../lib/cluster.mjs';

export const title = 'fault 1: origin down under read load (stale-if-error, clean 503)';

export async function run({ env, quick, log }) {
  const outageS = quick ? 8 : 30;
  const edge = { node: env.edge, get: (p, o = {}) => request(env.edge, p, { host: env.site, ...o }) };
  const cached = ['/', ...(await postPaths(env, 11)).map((p) => p.path)];
  await warm([edge], cached);
  const load = readLoad(env.edge, env.site, cached, { concurrency: 4, pauseMs: 1, maxSeconds: outageS + 120 });
  await sleep(1000);
  let up = true;
  try {
    await service(env, 'nginx', 'stop');
    up = false;
    const downAt = Date.now();
    // An edit during the outage: soft purge of half the cached pages (expired, kept for grace).
    const soft = cached.slice(0, 6);
    const r = await postEvents(env, env.purger, { site: env.site, events: [urlEvent(env, soft, { soft: true, reason: 'edit during origin outage' })] });
    assert(r.status === 202, `soft purge during the outage: ${r.status}`);
    const misses = [];
    let i = 0;
    while (Date.now() - downAt < outageS * 1000) {
      const res = await edge.get(`${cached[i % cached.length]}?reliability-uncached=${Date.now()}-${i}`, { timeoutMs: 15_000 }).catch((e) => ({ status: 0, ms: 15_000, headers: {}, body: e.message }));
      misses.push({ status: res.status, ms: res.ms, retryAfter: res.headers['retry-after'], html: /text\/html/.test(res.headers['content-type'] || '') });
      i++;
      await sleep(500);
    }
    await service(env, 'nginx', 'start');
    up = true;
    const backAt = Date.now();
    const recoverMs = await until('uncached pages are 200 again', async () => (await edge.get(`/?reliability-after=${Date.now()}`)).status === 200, 60_000, 200).then(() => Date.now() - backAt);
    await sleep(1000);
    const samples = await load.stop();
    const during = samples.filter((s) => s.t >= downAt && s.t <= backAt);
    const all = loadFigures(samples);
    const out = loadFigures(during);
    const staleServed = during.filter((s) => s.cache === 'STALE').length;
    log(`outage ${outageS} s: ${out.requests} cached-page requests, ${out.errors} errors, ${JSON.stringify(out.byCache)}; uncached: ${misses.length} probes`);
    assert(all.errors === 0, `${all.errors} client errors on cached pages (${all.errorSample.join('; ')})`);
    assert(during.every((s) => s.status === 200), `non-200 on cached pages during the outage: ${[...new Set(during.map((s) => s.status))]}`);
    assert(staleServed > 0, 'no soft-purged page was served STALE during the outage');
    const bad = misses.filter((m) => m.status !== 503 || !m.retryAfter || !m.html);
    assert(bad.length === 0, `uncached URLs during the outage: ${JSON.stringify(bad.slice(0, 3))}, want HTML 503 with Retry-After`);
    const slowest = Math.max(...misses.map((m) => m.ms));
    assert(slowest < 5000, `an uncached URL took ${round(slowest)} ms to fail: a hang`);
    return {
      outageSeconds: outageS, cachedRequestsDuringOutage: out.requests, clientErrors: all.errors, byCacheDuringOutage: out.byCache,
      staleServed, cachedLatencyMs: out.latencyMs, uncachedProbes: misses.length, uncached503Ms: summary(misses.map((m) => m.ms)), recoverMs,
    };
  } finally {
    if (!up) await service(env, 'nginx', 'start').catch(() => {});
    await load.stop();
  }
}
