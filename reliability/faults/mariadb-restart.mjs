// Fault 6: MariaDB is restarted under read load. Cached pages keep being served with zero
// errors; WordPress recovers by itself (uncached pages 200 again), and an edit made after the
// restart reaches Varnish through the whole pipeline.
import { request } from '../../testkit/http.mjs';
import { sleep, until } from '../../testkit/wait.mjs';
import { assert, loadFigures, readLoad, service } from '../lib/common.mjs';
import { postPaths, warm } from '../lib/cluster.mjs';
import { editPost, restAuth } from '../lib/wordpress.mjs';

export const title = 'fault 6: MariaDB restarted under load; cache serves, WordPress recovers';

export async function run(ctx) {
  const { env, quick, log } = ctx;
  const auth = restAuth(ctx);
  const downS = quick ? 3 : 10;
  const edge = { node: env.edge, get: (p, o = {}) => request(env.edge, p, { host: env.site, ...o }) };
  const posts = await postPaths(env, 10);
  const cached = ['/', ...posts.map((p) => p.path)];
  await warm([edge], cached);
  const load = readLoad(env.edge, env.site, cached, { concurrency: 4, pauseMs: 1, maxSeconds: downS + 180 });
  await sleep(1000);
  let up = true;
  try {
    const stopAt = Date.now();
    await service(env, 'mariadb', 'stop');
    up = false;
    const uncachedDuring = (await edge.get(`/?reliability-db-down=${Date.now()}`)).status;
    await sleep(downS * 1000);
    await service(env, 'mariadb', 'start');
    up = true;
    const startAt = Date.now();
    await until('WordPress serves uncached pages again', async () => (await edge.get(`/?reliability-db-up=${Date.now()}`)).status === 200, 60_000, 200);
    const recoverMs = Date.now() - startAt;
    const marker = `reldb${Date.now().toString(36)}`;
    const t0 = Date.now();
    await editPost(env, auth, posts[0].id, `<p>Edited after the database restart: ${marker}</p>`);
    await until('the edit after the restart is visible through Varnish', async () => (await edge.get(posts[0].path)).body.includes(marker), 60_000, 100);
    const editFreshMs = Date.now() - t0;
    const samples = await load.stop();
    const during = loadFigures(samples.filter((s) => s.t >= stopAt && s.t <= startAt + recoverMs));
    const all = loadFigures(samples);
    log(`MariaDB down ${((startAt - stopAt) / 1000).toFixed(1)} s: ${during.requests} cached-page requests during, ${all.errors} errors; uncached page during: ${uncachedDuring}; WordPress back ${recoverMs} ms after start; edit fresh in ${editFreshMs} ms`);
    assert(all.errors === 0, `${all.errors} client errors on cached pages (${all.errorSample.join('; ')})`);
    assert(samples.every((s) => s.status === 200), 'a cached page answered non-200');
    return { downSeconds: Math.round((startAt - stopAt) / 100) / 10, cachedRequestsDuring: during.requests, clientErrors: all.errors, cachedLatencyMs: during.latencyMs, uncachedStatusDuring: uncachedDuring, wordpressRecoverMs: recoverMs, editAfterRestartFreshMs: editFreshMs };
  } finally {
    if (!up) await service(env, 'mariadb', 'start').catch(() => {});
    await load.stop();
  }
}
