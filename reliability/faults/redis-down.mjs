// Fault 2: Redis is down while editors keep editing. The purger's ingest answers 503, the
// plugin keeps the batches in its outbox and retries; after Redis is back every edit reaches
// Varnish and the stale-page audit (stack/audit) finds nothing stale on the whole site.
import { audit, discoverUrls } from '../../stack/audit/audit.mjs';
import { tagEvent } from '../../testkit/events.mjs';
import { request } from '../../testkit/http.mjs';
import { sleep, until } from '../../testkit/wait.mjs';
import { assert, postEvents, service } from '../lib/common.mjs';
import { postPaths, warm } from '../lib/cluster.mjs';
import { editPost, outboxRows, restAuth } from '../lib/wordpress.mjs';

export const title = 'fault 2: Redis down while edits continue; outbox retries; nothing stale';

export async function run(ctx) {
  const { env, quick, log } = ctx;
  const auth = restAuth(ctx);
  const outageS = quick ? 5 : 10;
  const posts = await postPaths(env, quick ? 4 : 8);
  const edge = { node: env.edge, get: (p, o = {}) => request(env.edge, p, { host: env.site, ...o }) };
  await warm([edge], ['/', ...posts.map((p) => p.path)]);
  const last = new Map();
  let up = true;
  let edits = 0;
  let maxOutbox = 0;
  try {
    await service(env, 'redis', 'stop');
    up = false;
    const downAt = Date.now();
    const ingest = await postEvents(env, env.purger, { site: env.site, events: [tagEvent(['rel-redis-probe'])] });
    assert(ingest.status === 503, `ingest answered ${ingest.status} with Redis down, want 503`);
    const ready = await request(env.purger, '/readyz');
    assert(ready.status === 503, `/readyz answered ${ready.status} with Redis down, want 503`);
    while (Date.now() - downAt < outageS * 1000) {
      const p = posts[edits % posts.length];
      const marker = `relredis${p.id}x${edits}x${Date.now().toString(36)}`;
      await editPost(env, auth, p.id, `<p>Edited while Redis was down: ${marker}</p>`);
      last.set(p.path, marker);
      edits++;
      maxOutbox = Math.max(maxOutbox, await outboxRows(env));
      await sleep(500);
    }
    assert(maxOutbox > 0, 'the plugin kept nothing in its outbox while the purger answered 503');
    await service(env, 'redis', 'start');
    up = true;
    const backAt = Date.now();
    const stale = async () => {
      const out = [];
      for (const [path, marker] of last) if (!(await edge.get(path)).body.includes(marker)) out.push(path);
      return out;
    };
    await until('every edit made during the outage is visible through Varnish', async () => (await stale()).length === 0, 180_000, 500)
      .catch(async (e) => { throw new Error(`${e.message}; still stale: ${(await stale()).join(' ')}; outbox rows ${await outboxRows(env)}`); });
    const freshMs = Date.now() - backAt;
    await until('the outbox is empty', async () => (await outboxRows(env)) === 0, 120_000, 500);
    const paths = await discoverUrls({ origin: env.origin, host: env.site });
    const a = await audit({ edge: env.edge, origin: env.origin, host: env.site, paths: [...new Set([...paths, ...last.keys()])] });
    log(`${edits} edits in a ${outageS} s Redis outage, outbox peaked at ${maxOutbox} batches; all fresh ${freshMs} ms after Redis came back; audit: ${a.checked} pages, ${a.stale.length} stale`);
    assert(a.errors.length === 0, `audit errors: ${JSON.stringify(a.errors.slice(0, 3))}`);
    assert(a.stale.length === 0, `stale pages: ${a.stale.map((s) => s.path).join(' ')}`);
    return { outageSeconds: outageS, edits, ingestStatusDuringOutage: ingest.status, outboxPeakBatches: maxOutbox, allFreshAfterRecoveryMs: freshMs, auditChecked: a.checked, auditStale: a.stale.length, auditGraced: a.graced.length };
  } finally {
    if (!up) await service(env, 'redis', 'start').catch(() => {});
  }
}
