// make bench-cache-size: does an edit cost the same on a big cache? A real varnishd with the
// shipped VCL (testkit's launcher), Redis and the built purger, in front of a fast synthetic
// origin (cache-size-origin.mjs: pages tagged like the plugin's, namespace wp1-). The cache is
// filled with BENCH_CACHE_SIZES distinct pages in turn (default 1000,10000,100000: each fill adds
// to the last), and at each size:
//   - BENCH_CACHE_EDITS post edits (default 30), one after the other, each a signed event through
//     the purger that hard-purges the 23 keys a post edit purges with 5 `refresh` pages: edit →
//     fresh is from POST /v1/events to the start of the first read of the edited post through
//     Varnish (gzip, as browsers ask) that shows the new version, polled every 5 ms, and the same
//     for a client without gzip (curl, scripts, some bots: the page's plain copy), polled at once;
//   - Varnish CPU per edit: utime + stime of the varnishd cache process over the edits and until
//     its ban list is done (ban_lurker_age 0: the lurker tests bans at once, so their cost lands
//     inside the phase), minus what the same process uses idle over as long, over the edits;
//   - a bulk action, BENCH_BULK_REPEATS times (default 3; medians): one event of about
//     BENCH_BULK_BYTES (default 7000) bytes of keys (what Bulk actions → Move to Trash on some 60
//     posts purges), fresh when three of its posts show their new version: the first (also in
//     `refresh`), the middle and the last (purged only) (BENCH_FRESH_LIMIT_MS, default 10000:
//     past it, stalled, and not repeated).
// Each size gets its own purger process (and Redis prefix), so a stalled lane does not carry over.
// Prints a table and whether the largest size's figures are within 2× the smallest's (the
// target; not a failure); writes .results/bench/cache-size.json (BENCH_CACHE_OUT) with the
// machine, its load and the date. Exits non-zero only when the bench itself could not run.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { postEvents } from '../testkit/events.mjs';
import { freePort } from '../testkit/ports.mjs';
import { REPO_ROOT, processTree, stopChild } from '../testkit/process.mjs';
import { PurgerProcess } from '../testkit/purger.mjs';
import { READ_AUTH, TEST_READ_TOKEN, TEST_SECRET, TEST_TOKEN } from '../testkit/purger-stack.mjs';
import { RedisServer } from '../testkit/redis.mjs';
import { Varnish } from '../testkit/varnish.mjs';
import { sleep, until } from '../testkit/wait.mjs';
import { AUTHORS, CATEGORIES, NS, postFacts } from './cache-size-origin.mjs';

const env = process.env;
const SIZES = (env.BENCH_CACHE_SIZES ?? '1000,10000,100000').split(',').map(Number);
const EDITS = Number(env.BENCH_CACHE_EDITS ?? 30);
const BULK_BYTES = Number(env.BENCH_BULK_BYTES ?? 7000);
const FRESH_LIMIT_MS = Number(env.BENCH_FRESH_LIMIT_MS ?? 10_000);
const FILL_CONCURRENCY = Number(env.BENCH_FILL_CONCURRENCY ?? 32);
const BULK_REPEATS = Number(env.BENCH_BULK_REPEATS ?? 3);
const OUT = env.BENCH_CACHE_OUT ?? join(REPO_ROOT, '.results/bench/cache-size.json');
/** how long the ban list may take to be done after a phase; the idle baseline's longest stretch */
const DRAIN_LIMIT_MS = 120_000;
const IDLE_MAX_MS = 20_000;
const POLL_MS = 5;
const SITE = 'blog.example.test';
const STORAGE = 'malloc,1g';
const TARGET_RATIO = 2;
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
/** /proc counts CPU in ticks (10 ms): the target compares CPU figures of at least two ticks */
const CPU_FLOOR_MS = (2 * 1000) / CLK_TCK;

if (!(SIZES.length > 0 && SIZES.every((s) => Number.isInteger(s) && s > 0) && EDITS >= 1 && EDITS <= 50 && BULK_REPEATS >= 1)) {
  console.error('cache-size: BENCH_CACHE_SIZES must be positive integers, BENCH_CACHE_EDITS 1 to 50, BENCH_BULK_REPEATS at least 1');
  process.exit(2);
}
const smallest = Math.min(...SIZES);
// Edited posts: even ids spread over the smallest cache; the bulk action's posts: odd ids.
const editPosts = Array.from({ length: EDITS }, (_, k) => 2 * Math.floor(((k + 0.5) * smallest) / (2 * EDITS)));

/** The keys the plugin purges (hard: the title lost a word) when post i is edited. */
function editKeys(i) {
  const { categories, author } = postFacts(i);
  return [
    `p-${i}`, `pl-${i}`, `pn-${i}`, `pf-${i}`, `pa-${i}`, `pt-${i}`, `nb-${i}`, `c-${i}`, `e-${i}`, `r-p-${i}`,
    'home', 'feed', ...categories.map((t) => `tl-${t}`), `ul-${author}`, 'date-2026', 'date-202611', 'date-20261127',
    'r-c-posts', 'r-q-posts', 'search', 'sitemaps', 'lastmod',
  ].map((k) => `${NS}-${k}`);
}
/** The pages carrying those keys: the post, its neighbours (they link to it), its listings. */
const editPages = (i) => [`/post-${i - 1}/`, `/post-${i + 1}/`, `/author/a${postFacts(i).author}/`, ...editRefresh(i).map((u) => new URL(u).pathname)];
const editRefresh = (i) => [`/post-${i}/`, '/', ...postFacts(i).categories.map((t) => `/category/c${t}/`), '/feed/'].map((p) => `http://${SITE}${p}`);

/** A bulk action's keys: every listing's, then whole posts' (odd ids) until BULK_BYTES. */
function bulkAction() {
  const keys = ['home', 'feed', ...Array.from({ length: CATEGORIES }, (_, t) => `tl-${t + 1}`), ...Array.from({ length: AUTHORS }, (_, a) => `ul-${a + 1}`),
    'r-c-posts', 'r-q-posts', 'search', 'sitemaps', 'lastmod'].map((k) => `${NS}-${k}`);
  const posts = [];
  for (let i = 1; ; i += 2) {
    const more = [`p-${i}`, `pl-${i}`, `pn-${i}`, `pf-${i}`, `pa-${i}`, `pt-${i}`, `nb-${i}`, `c-${i}`, `e-${i}`, `r-p-${i}`].map((k) => `${NS}-${k}`);
    if ([...keys, ...more].join(' ').length > BULK_BYTES || i >= smallest) break;
    keys.push(...more);
    posts.push(i);
  }
  return { keys, posts };
}

let seq = 0;
const event = (tags, refresh, reason) => ({ id: `cs-${process.pid}-${Date.now().toString(36)}-${seq++}`, kind: 'tags', tags, soft: false, refresh, reason, time: new Date().toISOString() });

// --- HTTP through Varnish, as a browser asks (gzip) ---
const fillAgent = new http.Agent({ keepAlive: true, maxSockets: FILL_CONCURRENCY });
const readAgent = new http.Agent({ keepAlive: true, maxSockets: 4 });

/** `plain`: as a client without gzip (curl, scripts, some bots) asks: the page's plain copy. */
function get(port, path, agent = readAgent, host = SITE, plain = false) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, agent, headers: plain ? { host } : { host, 'accept-encoding': 'gzip' } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        let body = Buffer.concat(chunks);
        if (res.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        resolve({ status: res.statusCode, body: body.toString('utf8'), cache: String(res.headers['x-cache'] ?? '') });
      });
      res.on('error', reject);
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`timeout: GET ${path}`)));
    req.on('error', reject);
    req.end();
  });
}

function originCall(port, method, path) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method }, (res) => {
      let text = '';
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve(JSON.parse(text)));
    });
    req.on('error', reject);
    req.end();
  });
}

// --- measuring ---
/** utime + stime of a process, ms */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

function stats(workdir) {
  const j = JSON.parse(execFileSync('varnishstat', ['-n', workdir, '-j', '-f', 'MAIN.*'], { encoding: 'utf8', timeout: 10_000 }));
  const counters = j.counters ?? j;
  const v = (k) => counters[`MAIN.${k}`]?.value ?? 0;
  return {
    n_object: v('n_object'), bans: v('bans'), bans_completed: v('bans_completed'), bans_added: v('bans_added'),
    bans_tested: v('bans_tested') + v('bans_lurker_tested'), ban_tests: v('bans_tests_tested') + v('bans_lurker_tests_tested'),
    backend_req: v('backend_req'), client_req: v('client_req'),
  };
}

const quantile = (sorted, q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : null);
const summary = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: quantile(s, 0.5), p90: quantile(s, 0.9), max: s.length ? s[s.length - 1] : null };
};
const round = (x, d = 1) => (x === null || x === undefined ? null : Math.round(x * 10 ** d) / 10 ** d);

async function main() {
  const started = new Date().toISOString();
  const loadStart = loadavg().map((x) => round(x, 2));
  const children = [];
  let varnish;
  let redis;
  let purger;
  const cleanup = async () => {
    await purger?.stop();
    await varnish?.destroy();
    await redis?.stop();
    for (const c of children) await stopChild(c);
    fillAgent.destroy();
    readAgent.destroy();
  };
  process.once('SIGINT', () => { cleanup().finally(() => process.exit(130)); });
  process.once('SIGTERM', () => { cleanup().finally(() => process.exit(143)); });
  try {
    // origin, Redis, Varnish
    const originChild = spawn(process.execPath, [join(dirname(fileURLToPath(import.meta.url)), 'cache-size-origin.mjs'), '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(originChild);
    const originPort = await new Promise((resolve, reject) => {
      originChild.stdout.once('data', (d) => resolve(Number(/listening (\d+)/.exec(d.toString())?.[1])));
      originChild.once('exit', (c) => reject(new Error(`origin exited with ${c}`)));
    });
    redis = await RedisServer.start('everysec');
    varnish = await Varnish.start({ backend: `127.0.0.1:${originPort}`, storage: STORAGE });
    const cacheProcess = processTree(varnish.child)[1];
    if (!cacheProcess) throw new Error('no varnishd cache process');
    const invalidateVcl = readFileSync(join(REPO_ROOT, 'vcl/microcache/invalidate.vcl'), 'utf8');
    const invalidation = /sub mc_invalidate_purge_keys_keep_gen\b/.test(invalidateVcl) ? 'ban on obj.http.xkey (X-Purge-Keep-Gen, refresh before the purge)' : 'xkey.purge (refresh after the purge)';
    console.log(`cache-size: varnishd ${varnish.node} (cache process ${cacheProcess}), origin :${originPort}; hard key purge with refresh: ${invalidation}`);

    const vget = (path, agent, plain = false) => get(varnish.port, path, agent, SITE, plain);
    const listings = ['/', '/feed/', ...Array.from({ length: CATEGORIES }, (_, t) => `/category/c${t + 1}/`), ...Array.from({ length: AUTHORS }, (_, a) => `/author/a${a + 1}/`)];
    for (const p of listings) await vget(p);

    let filled = 0;
    async function fillTo(n) {
      const t0 = performance.now();
      let next = filled;
      let errors = 0;
      const worker = async () => {
        while (next < n) {
          const i = next++;
          const r = await vget(`/post-${i}/`, fillAgent);
          if (r.status !== 200) errors++;
        }
      };
      await Promise.all(Array.from({ length: FILL_CONCURRENCY }, worker));
      const added = n - filled;
      filled = n;
      const s = (performance.now() - t0) / 1000;
      if (errors > 0) throw new Error(`fill: ${errors} requests were not answered 200`);
      return { seconds: round(s), per_s: Math.round(added / s) };
    }

    /** Waits until every ban on the list is done (the lurker tested it against every object). */
    async function drained() {
      await until('the ban list done', () => { const s = stats(varnish.workdir); return s.bans === s.bans_completed || s.bans <= 1; }, DRAIN_LIMIT_MS, 100);
    }

    async function freshAfter(path, version, since, plain = false) {
      let ms;
      await until(`${path} fresh (v${version}${plain ? ', plain' : ''})`, async () => {
        const t = Date.now();
        if (!(await vget(path, readAgent, plain)).body.includes(` v${version}</title>`)) return false;
        ms = t - since;
        return true;
      }, FRESH_LIMIT_MS, POLL_MS);
      return ms;
    }

    async function startPurger(prefix) {
      const port = await freePort();
      purger = new PurgerProcess({
        REDIS_URL: redis.url, PURGER_PORT: String(port), PURGER_WEBHOOK_SECRETS: TEST_SECRET, PURGER_OPERATOR_TOKEN: TEST_TOKEN,
        PURGER_READ_TOKEN: TEST_READ_TOKEN, PURGER_SITES: SITE, PURGER_TAG_PREFIXES: `${SITE}=${NS}`, VARNISH_NODES: varnish.node,
        VARNISH_PURGE_TOKEN: varnish.token, PURGER_REDIS_PREFIX: prefix, PURGER_LOG_LEVEL: 'warn',
        PURGER_TENANT_EVENTS_PER_S: '0', PURGER_TENANT_BYTES_PER_S: '0',
      });
      await purger.ready();
      return purger;
    }

    /** GET from the purger's read API, as text. */
    const purgerGet = (path) => new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port: purger.port, path, headers: READ_AUTH }, (res) => {
        let t = '';
        res.on('data', (c) => { t += c; });
        res.on('end', () => resolve(t));
      }).on('error', reject);
    });

    /** The node's part of an event's receipt: state, objects invalidated, how it was applied. */
    async function receipt(id) {
      const node = JSON.parse(await purgerGet(`/v1/events/${encodeURIComponent(id)}?site=${SITE}`)).nodes?.[0] ?? {};
      return { state: node.state ?? '?', invalidated: node.invalidated ?? null, ...(node.via ? { via: node.via } : {}) };
    }

    /** Sends not answered 2xx so far, by outcome, from the purger's metrics. */
    async function failedSends() {
      const text = await purgerGet('/metrics');
      const out = {};
      for (const m of text.matchAll(/^purger_invalidations_sent_total\{[^}]*outcome="([^"]+)"[^}]*\} (\d+)/gm)) {
        if (m[1] !== 'ok') out[m[1]] = (out[m[1]] ?? 0) + Number(m[2]);
      }
      return out;
    }

    /** CPU of the cache process over `ms` of doing nothing. */
    async function idleCpu(ms) {
      const c0 = cpuMs(cacheProcess);
      await sleep(ms);
      return cpuMs(cacheProcess) - c0;
    }

    /**
     * One bulk action; fresh when its first post (refreshed), middle and last (purged only) show
     * their new version. idlePerMs: the idle CPU rate to subtract.
     */
    async function bulkOnce(idlePerMs) {
      const checked = [bulk.posts[0], bulk.posts[bulk.posts.length >> 1], bulk.posts[bulk.posts.length - 1]];
      // every page it purges is cached (and read) first, so it finds as many objects every time
      for (const p of new Set(bulk.posts.flatMap((i) => [i - 1, i, i + 1]))) await vget(`/post-${p}/`);
      for (const p of listings) await vget(p);
      const bumped = (await originCall(originPort, 'POST', `/__edit?posts=${bulk.posts.join(',')}`)).versions;
      const s0 = stats(varnish.workdir);
      const cpu0 = cpuMs(cacheProcess);
      const t0 = Date.now();
      const refresh = [`/post-${checked[0]}/`, '/'].map((p) => `http://${SITE}${p}`);
      const ev = event(bulk.keys, refresh, `bulk action on ${bulk.posts.length} posts`);
      const r = await postEvents(purger.url, { site: SITE, events: [ev] }, { secret: TEST_SECRET });
      if (r.status !== 202) throw new Error(`POST /v1/events (bulk) answered ${r.status}: ${r.body}`);
      const pages = await Promise.all(checked.map((p) => freshAfter(`/post-${p}/`, bumped[p], t0).catch(() => null)));
      await sleep(1000);
      let drainedInTime = true;
      try { await drained(); } catch { drainedInTime = false; }
      const cpu = cpuMs(cacheProcess) - cpu0;
      const ms = Date.now() - t0;
      const s1 = stats(varnish.workdir);
      return {
        fresh_ms: pages.includes(null) ? null : Math.max(...pages), fresh_ms_refreshed_purged_purged: pages,
        varnish_cpu_ms: round(Math.max(0, cpu - idlePerMs * ms)), phase_s: round(ms / 1000),
        ban_tests: s1.ban_tests - s0.ban_tests, bans_added: s1.bans_added - s0.bans_added, drained: drainedInTime, receipt: await receipt(ev.id),
      };
    }

    const bulk = bulkAction();
    const bulkBytes = bulk.keys.join(' ').length;
    const results = [];
    for (const size of [...SIZES].sort((a, b) => a - b)) {
      console.log(`cache-size: filling to ${size.toLocaleString('en')} pages`);
      const fill = await fillTo(size);
      await drained();
      await startPurger(`cs${size}`);
      const before = stats(varnish.workdir);
      console.log(`cache-size: ${before.n_object.toLocaleString('en')} objects (filled at ${fill.per_s}/s); ${EDITS} edits`);

      // the edits
      const fresh = [];
      const freshPlain = [];
      const accepted = [];
      let timeouts = 0;
      let bansMax = before.bans;
      const served0 = (await originCall(originPort, 'GET', '/__stats')).served;
      const t0 = Date.now();
      const cpu0 = cpuMs(cacheProcess);
      const ids = [];
      for (const i of editPosts) {
        // readers of every page the edit purges: each edit finds the same objects cached at every
        // size, and the refresh fetches only pages read in the last minute
        for (const path of editPages(i)) await vget(path);
        await vget(`/post-${i}/`, readAgent, true); // and a reader without gzip of the post itself
        const v = (await originCall(originPort, 'POST', `/__edit?posts=${i}`)).versions[i];
        const since = Date.now();
        const ev = event(editKeys(i), editRefresh(i), `post ${i} updated`);
        ids.push(ev.id);
        const r = await postEvents(purger.url, { site: SITE, events: [ev] }, { secret: TEST_SECRET });
        if (r.status !== 202) throw new Error(`POST /v1/events answered ${r.status}: ${r.body}`);
        accepted.push(Date.now() - since);
        // both kinds of client polled at once: each copy is refreshed (the plain one second)
        const [g, p] = await Promise.allSettled([freshAfter(`/post-${i}/`, v, since), freshAfter(`/post-${i}/`, v, since, true)]);
        if (g.status === 'fulfilled') fresh.push(g.value);
        if (p.status === 'fulfilled') freshPlain.push(p.value);
        if (g.status === 'rejected' || p.status === 'rejected') timeouts++;
        bansMax = Math.max(bansMax, stats(varnish.workdir).bans);
      }
      await sleep(1000); // the refreshes of the other pages land, the last ban is in
      const settled = Date.now();
      await drained();
      const bansDoneMs = Date.now() - settled;
      const cpuEdits = cpuMs(cacheProcess) - cpu0;
      const phaseMs = Date.now() - t0;
      const after = stats(varnish.workdir);
      const served = (await originCall(originPort, 'GET', '/__stats')).served - served0;
      const idleMs = Math.min(phaseMs, IDLE_MAX_MS);
      const idle = ((await idleCpu(idleMs)) * phaseMs) / idleMs;
      const receipts = [];
      for (const id of ids) receipts.push(await receipt(id));
      const f = summary(fresh);
      const edits = {
        edits: EDITS, keys_per_edit: editKeys(editPosts[0]).length, fresh_ms: f, fresh_plain_ms: summary(freshPlain), timeouts, accepted_ms: summary(accepted),
        phase_s: round(phaseMs / 1000), lurker_busy_s_after: round(bansDoneMs / 1000),
        varnish_cpu_ms_per_edit: round(Math.max(0, cpuEdits - idle) / EDITS, 2), varnish_cpu_ms: round(cpuEdits), idle_cpu_ms: round(idle),
        bans_max: bansMax, bans_added: after.bans_added - before.bans_added, bans_at_end: after.bans,
        ban_tests_per_edit: Math.round((after.ban_tests - before.ban_tests) / EDITS),
        origin_fetches_per_edit: round(served / EDITS), n_object_after: after.n_object,
        // what the node's answers said it removed (a ban's count is not known: 0)
        objects_invalidated_per_edit: summary(receipts.map((x) => x.invalidated ?? 0)),
        receipts_applied: receipts.filter((x) => x.state === 'applied').length,
      };
      console.log(`cache-size: ${size}: edit → fresh p50 ${f.p50} ms, max ${f.max} ms (plain clients p50 ${edits.fresh_plain_ms.p50} ms, max ${edits.fresh_plain_ms.max} ms); Varnish CPU ${edits.varnish_cpu_ms_per_edit} ms per edit; bans ≤ ${bansMax}`);

      // the bulk action, BULK_REPEATS times (once if it stalls: the lane is stuck)
      const runs = [];
      for (let k = 0; k < BULK_REPEATS && !runs.some((r) => r.fresh_ms === null); k++) runs.push(await bulkOnce(idle / phaseMs));
      const mid = (xs) => summary(xs).p50;
      const stalled = runs.some((r) => r.fresh_ms === null);
      const refusal = /answered (\d{3})[^"\n]*/.exec(purger.output)?.[0] ?? null;
      const bulkResult = {
        posts: bulk.posts.length, keys: bulk.keys.length, key_bytes: bulkBytes, repeats: runs.length, limit_ms: FRESH_LIMIT_MS,
        fresh_ms: stalled ? null : mid(runs.map((r) => r.fresh_ms)), stalled, varnish_cpu_ms: mid(runs.map((r) => r.varnish_cpu_ms)),
        runs, failed_sends: await failedSends(), node_answer: refusal,
      };
      console.log(`cache-size: ${size}: bulk action (${bulk.keys.length} keys, ${bulkBytes} bytes) ${stalled ? `not fresh within ${FRESH_LIMIT_MS} ms${refusal ? ` (${refusal})` : ''}` : `fresh in ${bulkResult.fresh_ms} ms (median of ${runs.length})`}; Varnish CPU ${bulkResult.varnish_cpu_ms} ms`);
      await purger.stop();
      purger = undefined;
      results.push({ pages: size, n_object: before.n_object, fill, edits, bulk: bulkResult });
    }

    // the target: the largest cache's figures within 2× the smallest's
    const a = results[0];
    const z = results[results.length - 1];
    const ratio = (x, y) => (x > 0 && y !== null ? round(y / x, 2) : null);
    const checks = {
      edit_fresh_p50: ratio(a.edits.fresh_ms.p50, z.edits.fresh_ms.p50),
      edit_fresh_p90: ratio(a.edits.fresh_ms.p90, z.edits.fresh_ms.p90),
      varnish_cpu_per_edit: ratio(Math.max(a.edits.varnish_cpu_ms_per_edit, CPU_FLOOR_MS / EDITS), Math.max(z.edits.varnish_cpu_ms_per_edit, CPU_FLOOR_MS / EDITS)),
      bulk_fresh: a.bulk.stalled || z.bulk.stalled ? null : ratio(a.bulk.fresh_ms, z.bulk.fresh_ms),
      bulk_varnish_cpu: ratio(Math.max(a.bulk.varnish_cpu_ms, CPU_FLOOR_MS), Math.max(z.bulk.varnish_cpu_ms, CPU_FLOOR_MS)),
    };
    const met = Object.values(checks).every((r) => r !== null && r <= TARGET_RATIO) && !results.some((r) => r.bulk.stalled || r.edits.timeouts > 0);
    const out = {
      date: started, finished: new Date().toISOString(),
      machine: { cpu: /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? '?', cores: cpus().length, loadavg_at_start: loadStart, loadavg: loadavg().map((x) => round(x, 2)), loadavg_1m_at_end: round(loadavg()[0], 2) },
      varnish: /varnish-[^ ]+/.exec(spawnSync('varnishd', ['-V'], { encoding: 'utf8' }).stderr)?.[0] ?? '?', node: process.version,
      setup: {
        invalidation, storage: STORAGE, ban_lurker_age_s: 0, fill_concurrency: FILL_CONCURRENCY, edits: EDITS, keys_per_edit: editKeys(editPosts[0]).length,
        refresh_pages_per_edit: editRefresh(0).length, purger_refresh_concurrency: 4, fresh_poll_ms: POLL_MS, fresh_limit_ms: FRESH_LIMIT_MS,
        bulk_keys: bulk.keys.length, bulk_key_bytes: bulkBytes, bulk_posts: bulk.posts.length,
      },
      sizes: results,
      target: { rule: `largest cache (${z.pages.toLocaleString('en')} pages) within ${TARGET_RATIO}× the smallest (${a.pages.toLocaleString('en')})`, ratios: checks, met, cpu_compared_from_ms: CPU_FLOOR_MS },
    };
    mkdirSync(dirname(OUT), { recursive: true });
    writeFileSync(OUT, `${JSON.stringify(out, null, 2)}\n`);
    printTable(out);
    console.log(`cache-size: wrote ${OUT}`);
  } finally {
    await cleanup();
  }
}

function printTable(out) {
  const n = (x) => (x === null || x === undefined ? '–' : typeof x === 'number' ? x.toLocaleString('en') : String(x));
  const rows = [['pages', 'objects', 'edit→fresh p50/p90/max ms', 'Varnish CPU ms/edit', 'bans added/max', 'ban tests/edit', 'bulk→fresh ms', 'bulk CPU ms']];
  for (const r of out.sizes) {
    const e = r.edits;
    rows.push([n(r.pages), n(r.n_object), `${n(e.fresh_ms.p50)} / ${n(e.fresh_ms.p90)} / ${n(e.fresh_ms.max)}${e.timeouts ? ` (${e.timeouts} timeouts)` : ''}`,
      n(e.varnish_cpu_ms_per_edit), `${n(e.bans_added)} / ${n(e.bans_max)}`, n(e.ban_tests_per_edit),
      r.bulk.stalled ? `stalled (> ${n(r.bulk.limit_ms)})` : n(r.bulk.fresh_ms), n(r.bulk.varnish_cpu_ms)]);
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  console.log(`\ncache-size: ${out.setup.invalidation}; ${out.machine.cores} × ${out.machine.cpu}, load ${out.machine.loadavg.join(' ')}`);
  for (const row of rows) console.log(row.map((v, c) => v.padStart(widths[c])).join('  '));
  const r = out.target.ratios;
  console.log(`target: ${out.target.rule}: edit→fresh p50 ${n(r.edit_fresh_p50)}×, p90 ${n(r.edit_fresh_p90)}×, CPU/edit ${n(r.varnish_cpu_per_edit)}×, bulk→fresh ${n(r.bulk_fresh)}×, bulk CPU ${n(r.bulk_varnish_cpu)}×: ${out.target.met ? 'MET' : 'NOT MET'}\n`);
}

main().catch((e) => {
  console.error(`cache-size: ${e.stack ?? e}`);
  process.exit(1);
});
