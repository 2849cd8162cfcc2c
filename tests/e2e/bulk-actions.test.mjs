#!/usr/bin/env node
// Every bulk action WordPress offers, in one request, invalidates what it changed and leaves the
// pipeline moving (issue 34), on the native stack: real WordPress on MariaDB, php-fpm + nginx,
// varnishd with the shipped VCL, Redis and the purger. Each scenario warms the pages it touches
// through Varnish (the posts' pages and REST items, home, feeds, category, tag and author
// archives, the REST term items that print counts), makes the request wp-admin makes (logged in
// as the admin, with the screen's nonce), waits with a generous bound until every event the
// request made has a receipt on every node (bulk-probe.php names them) and the outbox and the
// purger's backlog are empty, then requires the stale-page audit (stack/audit) to find 0 stale
// responses and one ordinary edit right after to be fresh at the edge within e2e's limit. A stall
// fails the scenario naming the pending event and the node's error; the later ones are skipped.
// The 20-post Move to Trash runs in Chromium on the Posts screen (bulk-browser.mjs). Figures per
// scenario (renders, time to clean, events, what the edge kept) go to E2E_BULK_RESULTS.
//
// Scenarios, on 500 imported posts P (newest first) and posts already in the Trash Q:
//   import 500 (one PHP run) · per N in 20, 100, 500 on P[0..N): Move to Trash, Restore
//   (WordPress restores to draft), Bulk Edit (status publish, + category, + tag, author) ·
//   delete 50 tags · delete P's author, reassigning · delete that author with their posts ·
//   Delete Permanently 20, 100 (Q) and 500 (P) · Empty Trash (the rest of Q).
//
// Runs on the stack the environment names (STACK_DIR, VARNISH_PORT, WEB_PORT, PURGER_PORT,
// SITE_HOST: scripts/suites/e2e.sh's). Alone: bash -c 'source testkit/stack.sh; temp_stack_up bulk
// && node --test-reporter=spec tests/e2e/bulk-actions.test.mjs; temp_stack_down'
// Env: E2E_FRESH_LIMIT_MS (15000, e2e's), E2E_BULK_SETTLE_MS (120000), E2E_BULK_SAMPLE (posts
// warmed and audited per scenario, 20), E2E_BULK_RESULTS (.results/e2e/bulk-actions.json),
// E2E_SHOTS (.results/e2e), E2E_BULK_SCENARIOS (run only the first N, for a quick look), WP_ADMIN_USER.
import { execFile } from 'node:child_process';
import { closeSync, copyFileSync, mkdirSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { request } from '../../testkit/http.mjs';
import { msUntil, sleep, until } from '../../testkit/wait.mjs';
import { audit } from '../../stack/audit/audit.mjs';
import { REPO_ROOT as repo } from '../../testkit/process.mjs';
import { givenStack } from '../../testkit/stack.mjs';

const run = promisify(execFile);
const FRESH_LIMIT_MS = Number(process.env.E2E_FRESH_LIMIT_MS || 15000);
const SETTLE_MS = Number(process.env.E2E_BULK_SETTLE_MS || 120000);
const SAMPLE = Number(process.env.E2E_BULK_SAMPLE || 20);
const RESULTS = process.env.E2E_BULK_RESULTS || join(repo, '.results/e2e/bulk-actions.json');
const SHOTS = process.env.E2E_SHOTS || join(repo, '.results/e2e');
const ADMIN = process.env.WP_ADMIN_USER || 'admin';
const ONLY_FIRST = Number(process.env.E2E_BULK_SCENARIOS || Infinity);
// The stacks take request lines up to 32 KB (Varnish's http_req_hdr_len, nginx's
// large_client_header_buffers; both default to 8 KB, which closed the connection on a 500-post
// bulk action with long ids). A longer bulk form would go as a POST of the same fields
// (WordPress reads $_REQUEST), and the figures would say so.
const GET_LIMIT = 32000;
const RUN = `r${Date.now().toString(36).slice(-5)}`;
const started = performance.now();

let S; // the stack: { env, dir, edge, origin, purger, host, wpDir }
const figures = [];
let stalled = null; // the scenario after which the pipeline did not drain

// ─── the stack ────────────────────────────────────────────────────────────────────────
async function stackUp() {
  const { env } = givenStack({});
  const port = (k) => { if (!env[k]) throw new Error(`${k} not set`); return env[k]; };
  S = {
    env, dir: env.STACK_DIR, host: port('SITE_HOST'), wpDir: join(env.STACK_DIR, 'wordpress'),
    edge: `http://127.0.0.1:${port('VARNISH_PORT')}`, origin: `http://127.0.0.1:${port('WEB_PORT')}`, purger: `http://127.0.0.1:${port('PURGER_PORT')}`,
    ctl: env.STACK_CTL || join(repo, 'stack/ctl.sh'),
  };
  S.adminPassword = (await ctl('secret', 'admin_password')).trim();
  S.operatorToken = (await ctl('secret', 'operator_token')).trim();
  // The probe that says when a request's shutdown work (the plugin's events) is done.
  copyFileSync(join(repo, 'tests/e2e/bulk-probe.php'), join(S.wpDir, 'wp-content/mu-plugins/bulk-e2e-probe.php'));
  // A clean edge: what earlier checks left cached (e2e's control leaves a page stale on purpose)
  // is not this test's business.
  await ban('req.url ~ .');
}
const ban = (expr) => run('varnishadm', ['-n', join(S.dir, 'varnish'), `ban ${expr}`]);

// Synchronous: runs on exit, whatever happened (a signal exits first).
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));
process.on('exit', () => {
  if (S?.wpDir) rmSync(join(S.wpDir, 'wp-content/mu-plugins/bulk-e2e-probe.php'), { force: true });
  writeResults();
});

const ctl = async (...args) => (await run(S?.ctl || join(repo, 'stack/ctl.sh'), args, { env: S?.env || process.env, maxBuffer: 1 << 26 })).stdout;
const sql = async (q) => (await ctl('sql', q)).trim();
const edge = (path, opts = {}) => request(S.edge, path, { host: S.host, ...opts });
const origin = (path, opts = {}) => request(S.origin, path, { host: S.host, ...opts });

/** tests/e2e/bulk-content.php MODE ARG... as the web user, through the stack's CLI bootstrap;
 *  with a token, the probe records the events it commits (BULK_E2E_TOKEN). */
async function content(token, ...args) {
  const script = 'source stack/lib.sh && as_user "$WEB_USER" env STACK_WP_DIR="$WP_DIR" STACK_SITE_HOST="$SITE_HOST" BULK_E2E_TOKEN="$BULK_E2E_TOKEN" '
    + 'php -d memory_limit=512M tests/e2e/bulk-content.php "$@"';
  const env = { ...S.env, BULK_E2E_TOKEN: token };
  const { stdout } = await run('bash', ['-c', script, 'bulk-content', ...args], { cwd: repo, env, maxBuffer: 1 << 26, timeout: 600000 });
  return JSON.parse(stdout.trim().split('\n').pop());
}

async function backendReq() {
  const { stdout } = await run('varnishstat', ['-n', join(S.dir, 'varnish'), '-1', '-f', 'MAIN.backend_req']);
  return Number(stdout.trim().split(/\s+/)[1]);
}

/** Where nginx's access log ends now; publicRenders(from) counts what nginx served since then
 *  that is a page, feed or REST response (not wp-admin, login, static files or the probe). */
const accessLog = () => join(S.dir, 'log/nginx-access.log');
const logEnd = () => statSync(accessLog()).size;
function publicRenders(from) {
  const fd = openSync(accessLog(), 'r');
  try {
    const buf = Buffer.alloc(logEnd() - from);
    readSync(fd, buf, 0, buf.length, from);
    return [...buf.toString('utf8').matchAll(/"(?:GET|HEAD) (\S+)/g)]
      .filter((m) => !/^\/(?:wp-admin\/|wp-login\.php|wp-includes\/|wp-content\/|robots\.txt|favicon\.ico)/.test(m[1])).length;
  } finally { closeSync(fd); }
}

async function metrics() {
  const body = (await request(S.purger, '/metrics', { headers: { authorization: `Bearer ${S.operatorToken}` } })).body;
  const rows = [];
  for (const m of body.matchAll(/^([a-z_]+)(?:\{([^}]*)\})?\s+([0-9.e+-]+)$/gm)) {
    rows.push({ name: m[1], labels: Object.fromEntries([...(m[2] || '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]])), value: Number(m[3]) });
  }
  const sum = (name, where = {}) => rows.filter((r) => r.name === name && Object.entries(where).every(([k, v]) => r.labels[k] === v)).reduce((a, r) => a + r.value, 0);
  const sent = {};
  for (const r of rows) if (r.name === 'purger_invalidations_sent_total') sent[`${r.labels.kind} ${r.labels.outcome}`] = (sent[`${r.labels.kind} ${r.labels.outcome}`] || 0) + r.value;
  return { backlog: sum('purger_node_backlog'), accepted: sum('purger_events_received_total', { outcome: 'accepted' }), sent };
}

// ─── wp-admin as the admin, the way the browser talks to it ─────────────────────────────
const jar = new Map();
const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
function keepCookies(res) {
  for (const c of res.headers['set-cookie'] || []) {
    const [pair] = c.split(';');
    const i = pair.indexOf('=');
    const [k, v] = [pair.slice(0, i), pair.slice(i + 1)];
    if (v === 'deleted' || /expires=Thu, 01-Jan-1970/i.test(c)) jar.delete(k); else jar.set(k, v);
  }
}
async function admin(path, { method = 'GET', form, headers = {} } = {}) {
  const body = form ? form.toString() : undefined;
  const res = await edge(path, {
    method, body, timeoutMs: 600000,
    headers: { cookie: cookieHeader(), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
  });
  keepCookies(res);
  return res;
}
async function login() {
  jar.clear();
  jar.set('wordpress_test_cookie', 'WP%20Cookie%20check');
  const res = await admin('/wp-login.php', { method: 'POST', form: new URLSearchParams({ log: ADMIN, pwd: S.adminPassword, 'wp-submit': 'Log In', redirect_to: '/wp-admin/', testcookie: '1' }) });
  if (res.status !== 302 || ![...jar.keys()].some((k) => k.startsWith('wordpress_logged_in_'))) throw new Error(`login as ${ADMIN} failed: ${res.status}`);
}
/** The screen's own nonce field (id="_wpnonce": bulk-posts, bulk-tags, bulk-users, delete-users). */
async function screenNonce(path) {
  const res = await admin(path);
  const m = /id="_wpnonce" name="_wpnonce" value="([0-9a-f]+)"/.exec(res.body);
  if (res.status !== 200 || !m) throw new Error(`no _wpnonce on ${path} (status ${res.status})`);
  return m[1];
}
/** Sends a form the way the browser submits it: GET for the Posts screen's form while it fits. */
async function submit(path, form, { method, token }) {
  const query = `${path}?${form}`;
  const viaGet = method === 'GET' && `GET ${query} HTTP/1.1`.length <= GET_LIMIT;
  const t0 = performance.now();
  const res = viaGet
    ? await admin(query, { headers: { 'x-bulk-e2e': token } })
    : await admin(path, { method: 'POST', form, headers: { 'x-bulk-e2e': token } });
  return { res, respondedAt: performance.now(), ms: performance.now() - t0, method: viaGet ? 'GET' : 'POST', bytes: viaGet ? query.length : form.toString().length };
}
function expectRedirect(r, what, re) {
  const loc = r.res.headers.location || '';
  // wp_die()'s page opens with its stylesheet: the message is in the body.
  const text = () => r.res.body.replace(/<head[\s\S]*?<\/head>|<style[\s\S]*?<\/style>/gi, ' ').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 300);
  if (r.res.status !== 302 || !re.test(loc)) throw new Error(`${what}: WordPress answered ${r.res.status} ${loc || text()}`);
}
const token = (name) => `${RUN}-${name}`.toLowerCase().replace(/[^a-z0-9-]/g, '-');

/** The Posts screen's bulk form: action on ids, plus extra fields (Bulk Edit's). */
async function postsBulk(name, { action, ids, trashView = false, extra = [] }) {
  const nonce = await screenNonce(trashView ? '/wp-admin/edit.php?post_status=trash&post_type=post' : '/wp-admin/edit.php');
  const form = new URLSearchParams([
    ['s', ''], ['post_status', trashView ? 'trash' : 'all'], ['post_type', 'post'], ['_wpnonce', nonce],
    ['_wp_http_referer', trashView ? '/wp-admin/edit.php?post_status=trash&post_type=post' : '/wp-admin/edit.php'],
    ['action', action], ['m', '0'], ['cat', '0'], ['paged', '1'], ...ids.map((id) => ['post[]', String(id)]), ...extra, ['action2', '-1'],
  ]);
  return submit('/wp-admin/edit.php', form, { method: 'GET', token: token(name) });
}

// ─── waiting and checking ─────────────────────────────────────────────────────────────
/** Fetches until Varnish answers from its cache (or says it will not cache it). */
async function warm(paths) {
  const states = [];
  await pool(paths, 4, async (path) => {
    const end = performance.now() + 10000;
    for (;;) {
      const r = await edge(path);
      const x = r.headers['x-cache'] || '';
      if (x === 'HIT' || x === 'PASS' || performance.now() > end) { states.push({ path, status: r.status, cache: x }); return; }
      await sleep(50);
    }
  });
  return states;
}
async function pool(items, n, fn) {
  const queue = [...items];
  await Promise.all(Array.from({ length: n }, async () => { for (let x = queue.shift(); x !== undefined; x = queue.shift()) await fn(x); }));
}

class Stall extends Error {}
/** Waits until the action's request finished its shutdown work (the probe names the events it
 *  committed), the plugin's outbox is empty, each of those events has a receipt on every node,
 *  and the purger's backlog gauge (refreshed every PURGER_POLL_MS, 1 s) reads 0 twice, 1.2 s
 *  apart. A failed receipt, or SETTLE_MS without the rest, throws Stall saying what is left. */
async function settle(tok) {
  const probe = join(S.wpDir, 'wp-content/uploads/bulk-e2e', `${tok}.jsonl`);
  const acted = () => { try { return readFileSync(probe, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).find((l) => l.acted); } catch { return undefined; } };
  const t0 = performance.now();
  const left = () => Math.max(1000, SETTLE_MS - (performance.now() - t0));
  let events = [];
  const applied = new Set();
  const via = {};
  let last = 'nothing';
  let failed = null;
  let appliedAt = null;
  try {
    if (tok) {
      last = 'the action request\'s shutdown work (bulk-probe.php)';
      events = (await until(last, acted, SETTLE_MS, 100)).events;
    }
    await until('the outbox drains', async () => {
      last = `${await sql('SELECT COUNT(*) FROM wp_varnish_edge_outbox')} events in the plugin's outbox`;
      return last.startsWith('0 ');
    }, left(), 250);
    await until('every event applied on every node', async () => {
      for (const id of events.filter((e) => !applied.has(e))) {
        const r = await request(S.purger, `/v1/events/${id}?site=${encodeURIComponent(S.host)}`, { headers: { authorization: `Bearer ${S.operatorToken}` } });
        if (r.status !== 200) { last = `event ${id}: receipt ${r.status} ${r.body.slice(0, 120)}`; return false; }
        const nodes = JSON.parse(r.body).nodes;
        failed = nodes.find((n) => n.state === 'failed') && { id, ...nodes.find((n) => n.state === 'failed') };
        if (failed) return true;
        const pending = nodes.find((n) => n.state === 'pending');
        if (pending) { last = `event ${id} pending on ${pending.node}${pending.error ? `: ${pending.error}` : ''}${pending.detail ? ` (${pending.detail})` : ''}`; return false; }
        applied.add(id);
        for (const n of nodes) if (n.via) via[n.via] = (via[n.via] || 0) + 1;
      }
      return true;
    }, left(), 250);
    if (failed) throw new Stall(`event ${failed.id} failed on ${failed.node}: ${failed.error || 'no error given'}`);
    appliedAt = performance.now();
    await until('the purger reports no backlog', async () => {
      const b = (await metrics()).backlog;
      last = `purger backlog ${b}`;
      if (b !== 0) return false;
      await sleep(1200);
      return (await metrics()).backlog === 0;
    }, left(), 250);
  } catch (e) {
    if (e instanceof Stall) throw e;
    throw new Stall(`the pipeline did not drain within ${SETTLE_MS / 1000} s: ${last}; ${applied.size} of ${events.length} events applied; purger log: ${purgerComplaint()}`);
  }
  return { ms: performance.now() - t0, appliedAt, events: tok ? events.length : null, via };
}
/** The purger log's last warning or error, in short. */
function purgerComplaint() {
  try {
    const lines = readFileSync(join(S.dir, 'log/purger.log'), 'utf8').trim().split('\n').reverse();
    for (const l of lines) {
      try { const j = JSON.parse(l); if (j.level >= 40) return `"${String(j.msg).slice(0, 200)}"${j.err?.message ? ` (${String(j.err.message).slice(0, 120)})` : ''}`; } catch { /* not JSON */ }
    }
  } catch { /* no log */ }
  return 'no warning';
}
/** Waits until Varnish has sent nothing to the origin for quietMs (the refreshes are done). */
async function quiet(quietMs = 1500, limitMs = 60000) {
  const end = performance.now() + limitMs;
  let last = await backendReq();
  let since = performance.now();
  while (performance.now() < end) {
    await sleep(250);
    const now = await backendReq();
    if (now !== last) { last = now; since = performance.now(); } else if (performance.now() - since >= quietMs) return true;
  }
  return false;
}
/** What a reader's next visit finds at the edge: kept (HIT), evicted (MISS: rendered now),
 *  soft-purged (STALE: served once while refreshed), or never cached (PASS: 401s...). A 404 not
 *  HIT is counted apart (notFound): Varnish keeps 404s 30 s at most, action or not. */
async function edgeStates(paths) {
  const n = { kept: 0, evicted: 0, graced: 0, notFound: 0, uncacheable: 0 };
  const some = { evicted: [], graced: [], notFound: [], uncacheable: [] };
  await pool(paths, 4, async (path) => {
    const r = await edge(path);
    const x = r.headers['x-cache'] || '';
    const k = x !== 'HIT' && r.status === 404 ? 'notFound' : { HIT: 'kept', MISS: 'evicted', STALE: 'graced' }[x] || 'uncacheable';
    n[k]++;
    if (k !== 'kept' && some[k].length < 4) some[k].push(path);
  });
  return { ...n, some };
}
const describeStale = (s) => `${s.path}: edge ${s.edgeStatus} ${s.edgeCache || '-'} Age ${s.age || '?'}, origin ${s.originStatus}\n${s.diff.replace(/^/gm, '      ')}`;

/** One ordinary edit of a post outside the bulk sets: its page must be fresh within e2e's limit.
 *  Then its invalidations are waited for, so the next scenario's figures are its own. */
async function ordinaryEdit(name) {
  const nonce = (await admin('/wp-admin/admin-ajax.php?action=rest-nonce')).body.trim();
  const page = S.probePost.path;
  await warm([page]);
  const marker = `edit${Math.random().toString(36).slice(2, 10)}`;
  const tok = token(`${name}-edit`);
  const r = await edge(`/wp-json/wp/v2/posts/${S.probePost.id}`, { method: 'POST', body: { title: `Ordinary edit ${marker}` }, headers: { cookie: cookieHeader(), 'x-wp-nonce': nonce, 'x-bulk-e2e': tok } });
  if (r.status !== 200) throw new Error(`the ordinary edit: REST answered ${r.status} ${r.body.slice(0, 200)}`);
  try {
    const ms = await msUntil(`${page} shows the ordinary edit`, async () => (await edge(page)).body.includes(marker), FRESH_LIMIT_MS, 50);
    await settle(tok);
    return ms;
  } catch (e) {
    if (e instanceof Stall) throw e;
    const [onEdge, atOrigin] = await Promise.all([edge(page), origin(page)]);
    throw new Error(`an ordinary edit right after was not fresh at the edge within ${FRESH_LIMIT_MS} ms: ${page} edge ${onEdge.status} ${onEdge.headers['x-cache']} Age ${onEdge.headers.age}, ${atOrigin.body.includes(marker) ? 'the origin shows the new title' : 'the origin does not show it either'}; purger log: ${purgerComplaint()}`);
  }
}

// ─── what each scenario warms and audits ──────────────────────────────────────────────
const rest = (p) => `/wp-json/wp/v2${p}`;
/** Up to SAMPLE posts spread over the list, its first and last always in. */
function sample(posts) {
  if (posts.length <= SAMPLE) return posts;
  const out = new Set([posts[0], posts[posts.length - 1]]);
  for (let i = 0; out.size < SAMPLE; i++) out.add(posts[Math.floor((i * posts.length) / SAMPLE)]);
  return [...out];
}
function pagesOf(posts) {
  const D = S.data;
  const paths = ['/', '/feed/', '/page/2/', rest('/posts'), rest('/categories'), rest('/tags'), rest('/users')];
  for (const c of Object.values(D.cats)) paths.push(c.path, `${c.path}feed/`, rest(`/categories/${c.id}`), rest(`/posts?categories=${c.id}`));
  for (const u of Object.values(D.users)) paths.push(`/author/${u.slug}/`, `/author/${u.slug}/feed/`, rest(`/users/${u.id}`));
  // Term items print counts; half the tags (each on about 20 posts) and the one Bulk Edit adds.
  for (const t of [...D.tags.slice(0, 25), D.tags[49]]) paths.push(rest(`/tags/${t.id}`));
  for (const t of [D.tags[0], D.tags[1], D.tags[49]]) paths.push(t.path, `${t.path}feed/`);
  for (const p of sample(posts)) paths.push(p.path, rest(`/posts/${p.id}`));
  return [...new Set(paths)];
}

// ─── one scenario ─────────────────────────────────────────────────────────────────────
/**
 * Warms, acts, waits for the pipeline, audits, edits. posts() names the posts the action
 * changes (read before and after it: an import has them only after); count() how many it
 * changes; act() returns { respondedAt, ms, method?, bytes?, token? }; check() confirms at the
 * origin that the action did what it says.
 */
async function scenario(name, { posts, count = async () => posts().length, via, act, check }) {
  const row = { name, posts: null, via, ok: false };
  figures.push(row);
  await test(name, (t) => body(t).catch((e) => { row.error ??= e.message; throw e; }));
  async function body(t) {
    const blocked = !S?.data ? 'the setup failed'
      : figures.length > ONLY_FIRST ? `E2E_BULK_SCENARIOS=${ONLY_FIRST}` : stalled && `the pipeline stalled in "${stalled}"`;
    if (blocked) { row.skipped = blocked; t.skip(blocked); return; }
    await login();
    row.posts = await count();
    const paths = pagesOf(posts());
    const states = await warm(paths);
    const uncached = states.filter((s) => s.status === 200 && s.cache !== 'HIT' && s.cache !== 'PASS');
    row.warmed = states.filter((s) => s.cache === 'HIT').length;
    if (uncached.length) throw new Error(`not cached before the action: ${uncached.slice(0, 5).map((s) => `${s.path} (${s.cache})`).join(', ')}`);
    const [log0, m0] = [logEnd(), await metrics()];
    const r = await act();
    Object.assign(row, { method: r.method, requestBytes: r.bytes, actionMs: Math.round(r.ms ?? 0) });
    await check();
    const failures = [];
    try {
      const s = await settle(r.token);
      Object.assign(row, { appliedMs: Math.round(s.appliedAt - r.respondedAt), settleMs: Math.round(performance.now() - r.respondedAt), events: s.events, appliedVia: s.via });
      row.refreshesQuiet = await quiet();
    } catch (e) {
      if (!(e instanceof Stall)) throw e;
      stalled = name;
      failures.push(e.message);
    }
    const m1 = await metrics();
    row.eventsAccepted = m1.accepted - m0.accepted;
    row.sent = Object.fromEntries(Object.entries(m1.sent).map(([k, v]) => [k, v - (m0.sent[k] || 0)]).filter(([, v]) => v));
    // Renders: the pipeline's own (refreshes), then what the next reader's visit finds.
    row.renders = { pipeline: publicRenders(log0) };
    const a0 = performance.now();
    row.edge = await edgeStates(paths);
    row.renders.nextVisit = row.edge.evicted + row.edge.graced;
    const auditPaths = [...new Set([...paths, ...pagesOf(posts())])];
    const res = await audit({ edge: S.edge, origin: S.origin, host: S.host, paths: auditPaths, concurrency: 4 });
    Object.assign(row, { audited: res.checked, stale: res.stale.length, graced: res.graced.length, auditMs: Math.round(performance.now() - a0) });
    if (res.stale.length || res.errors.length) {
      failures.push(`${res.stale.length} of ${res.checked} responses stale at the edge${res.errors.length ? `, ${res.errors.length} audit errors (${res.errors[0].path}: ${res.errors[0].error})` : ''}:\n${res.stale.slice(0, 8).map((s) => `    STALE ${describeStale(s)}`).join('\n')}`);
      // Reported here; removed so the next scenario answers for its own action only.
      for (const st of res.stale) await ban(`req.url == "${st.path}"`);
    } else if (!failures.length) {
      row.cleanMs = Math.round(performance.now() - r.respondedAt);
    }
    try {
      row.freshEditMs = Math.round(await ordinaryEdit(name));
    } catch (e) {
      if (e instanceof Stall) stalled = name;
      failures.push(e.message);
    }
    console.log(`  ${name}: ${row.posts} posts via ${via}${row.method ? ` ${row.method}` : ''}${row.requestBytes ? ` ${row.requestBytes} B` : ''}; answered in ${row.actionMs} ms; applied ${row.appliedMs ?? '—'} ms after; `
      + `events ${row.events ?? row.eventsAccepted}${row.appliedVia && Object.keys(row.appliedVia).length ? ` (applied via ${JSON.stringify(row.appliedVia)})` : ''}; sent ${JSON.stringify(row.sent)}; edge after: ${JSON.stringify({ ...row.edge, some: undefined })}; renders ${row.renders.pipeline} by the pipeline + ${row.renders.nextVisit} on the next visit; `
      + `audit ${row.audited} URLs ${row.stale} stale ${row.graced} grace; clean ${row.cleanMs ?? '—'} ms after the response; ordinary edit fresh in ${row.freshEditMs ?? '—'} ms`);
    if (failures.length) { row.error = failures.join('\n'); throw new Error(`${name}:\n  ${failures.join('\n  ')}`); }
    row.ok = true;
  }
}

function writeResults() {
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify({
    date: new Date().toISOString(),
    wordpress: process.env.E2E_WORDPRESS || null,
    machine: { cores: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', loadavg: loadavg().map((x) => Number(x.toFixed(2))), node: process.version },
    sample: SAMPLE, freshLimitMs: FRESH_LIMIT_MS, settleLimitMs: SETTLE_MS,
    runtimeMs: Math.round(performance.now() - started),
    // What a README table needs to say about each column.
    fields: {
      posts: 'posts the one request changed', via: 'how it was made: chromium (Posts screen), http (the request wp-admin makes), php (one CLI run)',
      method: 'GET as the Posts screen submits it; POST past a 32 KB request line (the limit the stacks set)', actionMs: 'until WordPress answered',
      appliedMs: 'answer to every event the request made applied on every node (receipts)',
      settleMs: 'answer to the outbox empty, receipts applied and the backlog gauge 0 twice 1.2 s apart (the check\'s own wait)', events: 'events the request committed',
      'renders.pipeline': 'pages, feeds and REST responses nginx rendered from the action until Varnish was quiet (the purger\'s refreshes)',
      'renders.nextVisit': 'warmed responses the next reader finds evicted or soft-purged (each one render)', edge: 'the warmed responses after the action, by what the edge does with them',
      cleanMs: 'answer to the audit finding 0 stale', freshEditMs: 'an ordinary edit right after: save to fresh at the edge', stale: 'responses the audit found stale',
    },
    scenarios: figures,
  }, null, 2)}\n`);
}

// ─── the scenarios ────────────────────────────────────────────────────────────────────
const TRASHED_EARLIER = 220; // Delete Permanently 20 and 100, then Empty Trash takes the rest

await test('setup: the stack, authors, categories, 50 tags, posts already in the Trash', async () => {
  await stackUp();
  const data = await content('', 'setup', RUN, String(TRASHED_EARLIER));
  const [probe] = JSON.parse((await origin(rest('/posts?per_page=1&offset=5&_fields=id,link'))).body);
  S.probePost = { id: probe.id, path: new URL(probe.link).pathname };
  const s = await settle(null);
  S.data = data;
  console.log(`  run ${RUN}: authors ${Object.values(data.users).map((u) => u.id).join(',')}, ${data.tags.length} tags, ${data.trashed.length} posts in the Trash; pipeline idle after ${Math.round(s.ms)} ms; ordinary edits on ${S.probePost.path}`);
});

let P = []; // the imported posts, newest first
const first = (n) => () => P.slice(0, n);
const countPosts = async (where) => Number(await sql(`SELECT COUNT(*) FROM wp_posts WHERE ${where}`));
const ids = (posts) => posts.map((p) => p.id).join(',');
const want = (what, got, expected) => { if (got !== expected) throw new Error(`${what}: ${got}, want ${expected} (the action did not do what it says)`); };
const Q = () => S.data.trashed.map((id) => ({ id, path: `/?p=${id}` }));

await scenario('import 500 posts in one request', {
  posts: () => P, count: async () => 500, via: 'php',
  act: async () => {
    const t0 = performance.now();
    P = (await content(token('import'), 'import', RUN, '500')).posts;
    return { respondedAt: performance.now(), ms: performance.now() - t0, token: token('import') };
  },
  check: async () => want('imported posts published', await countPosts(`post_author = ${S.data.users.a.id} AND post_status = 'publish'`), 500),
});

for (const n of [20, 100, 500]) {
  await scenario(`Move to Trash ${n} posts${n === 20 ? ' (Chromium, Posts screen)' : ''}`, {
    posts: first(n), via: n === 20 ? 'chromium' : 'http',
    act: async () => {
      const tok = token(`trash-${n}`);
      if (n !== 20) {
        const r = await postsBulk(`trash-${n}`, { action: 'trash', ids: first(n)().map((p) => p.id) });
        expectRedirect(r, 'Move to Trash', new RegExp(`trashed=${n}\\b`));
        return { ...r, token: tok };
      }
      const { trashFromPostsScreen } = await import('./bulk-browser.mjs');
      const t0 = performance.now();
      const b = await trashFromPostsScreen({ base: `http://${S.host}`, user: ADMIN, pass: S.adminPassword, category: S.data.cats.imported.id, ids: first(20)().map((p) => p.id), token: tok, shots: SHOTS });
      console.log(`  Posts screen: "${b.notice}"; screenshot ${b.shot}`);
      return { respondedAt: b.respondedAt, ms: b.respondedAt - t0, method: 'GET (Chromium)', token: tok };
    },
    check: async () => want(`posts of the first ${n} in the Trash`, await countPosts(`ID IN (${ids(first(n)())}) AND post_status = 'trash'`), n),
  });
  await scenario(`Restore ${n} posts`, {
    posts: first(n), via: 'http',
    act: async () => {
      const r = await postsBulk(`untrash-${n}`, { action: 'untrash', ids: first(n)().map((p) => p.id), trashView: true });
      expectRedirect(r, 'Restore', new RegExp(`untrashed=${n}\\b`));
      return { ...r, token: token(`untrash-${n}`) };
    },
    check: async () => want('restored posts (WordPress restores to draft)', await countPosts(`ID IN (${ids(first(n)())}) AND post_status = 'draft'`), n),
  });
  await scenario(`Bulk Edit ${n} posts: status, category, tag, author`, {
    posts: first(n), via: 'http',
    act: async () => {
      const extra = [
        ['post_category[]', '0'], ['post_category[]', String(S.data.cats.edited.id)], ['tax_input[post_tag]', S.data.tags[49].name],
        ['post_author', String(S.data.users.b.id)], ['comment_status', ''], ['ping_status', ''], ['_status', 'publish'],
        ['sticky', '-1'], ['post_view', 'list'], ['screen', 'edit-post'], ['bulk_edit', 'Update'],
      ];
      const r = await postsBulk(`edit-${n}`, { action: 'edit', ids: first(n)().map((p) => p.id), extra });
      expectRedirect(r, 'Bulk Edit', new RegExp(`updated=${n}\\b`));
      return { ...r, token: token(`edit-${n}`) };
    },
    check: async () => want('edited posts published by the new author in the new category', Number(await sql(
      'SELECT COUNT(DISTINCT p.ID) FROM wp_posts p JOIN wp_term_relationships r ON r.object_id = p.ID JOIN wp_term_taxonomy x ON x.term_taxonomy_id = r.term_taxonomy_id '
      + `WHERE p.ID IN (${ids(first(n)())}) AND p.post_status = 'publish' AND p.post_author = ${S.data.users.b.id} AND x.term_id = ${S.data.cats.edited.id}`)), n),
  });
}

await scenario('Delete 50 tags at once (Tags screen)', {
  posts: () => P, count: async () => 50, via: 'http',
  act: async () => {
    const nonce = await screenNonce('/wp-admin/edit-tags.php?taxonomy=post_tag');
    const form = new URLSearchParams([['taxonomy', 'post_tag'], ['post_type', 'post'], ['_wpnonce', nonce], ['_wp_http_referer', '/wp-admin/edit-tags.php?taxonomy=post_tag'],
      ['action', 'delete'], ...S.data.tags.map((t) => ['delete_tags[]', String(t.id)]), ['action2', '-1']]);
    const r = await submit('/wp-admin/edit-tags.php?taxonomy=post_tag', form, { method: 'POST', token: token('tags') });
    expectRedirect(r, 'Delete tags', /message=6/);
    return { ...r, token: token('tags') };
  },
  check: async () => want('tags left', Number(await sql(`SELECT COUNT(*) FROM wp_terms WHERE term_id IN (${S.data.tags.map((t) => t.id).join(',')})`)), 0),
});

/** Users → Delete: the confirmation screen, then its form with the chosen option. */
async function deleteUser(name, user, option, reassignTo) {
  const listNonce = await screenNonce('/wp-admin/users.php');
  const confirm = `/wp-admin/users.php?action=delete&user=${user.id}&_wpnonce=${listNonce}`;
  const confirmNonce = await screenNonce(confirm);
  // The fields the confirmation form has: one choice for all (WordPress 6.x) or one per user
  // (delete_option[<id>], reassign_user[<id>]: WordPress 7).
  const perUser = (await admin(confirm)).body.includes(`name="delete_option[${user.id}]"`) ? `[${user.id}]` : '';
  const form = new URLSearchParams([['_wpnonce', confirmNonce], ['_wp_http_referer', '/wp-admin/users.php'], ['users[]', String(user.id)],
    [`delete_option${perUser}`, option], ...(reassignTo ? [[`reassign_user${perUser}`, String(reassignTo.id)]] : []), ['action', 'dodelete'], ['submit', 'Confirm Deletion']]);
  const r = await submit('/wp-admin/users.php', form, { method: 'POST', token: token(name) });
  expectRedirect(r, `Delete user (${option})`, /update=del/);
  return { ...r, token: token(name) };
}
// Bulk Edit gave all 500 to author b: b goes, reassigning them to a (who has none left by then).
await scenario('Delete a user with 500 posts, reassigning them', {
  posts: () => P, via: 'http',
  act: () => deleteUser('user-reassign', S.data.users.b, 'reassign', S.data.users.a),
  check: async () => want('posts now by the other author', await countPosts(`ID IN (${ids(P)}) AND post_author = ${S.data.users.a.id} AND post_status = 'publish'`), 500),
});
// WordPress moves a deleted user's posts to the Trash.
await scenario('Delete a user with 500 posts, and their posts', {
  posts: () => P, via: 'http',
  act: () => deleteUser('user-delete', S.data.users.a, 'delete'),
  check: async () => want('the user\'s posts in the Trash', await countPosts(`ID IN (${ids(P)}) AND post_status = 'trash'`), 500),
});

for (const [n, set] of [[20, () => Q().slice(0, 20)], [100, () => Q().slice(20, 120)], [500, () => P]]) {
  await scenario(`Delete Permanently ${n} posts`, {
    posts: set, via: 'http',
    act: async () => {
      const r = await postsBulk(`delete-${n}`, { action: 'delete', ids: set().map((p) => p.id), trashView: true });
      expectRedirect(r, 'Delete Permanently', new RegExp(`deleted=${n}\\b`));
      return { ...r, token: token(`delete-${n}`) };
    },
    check: async () => want('deleted posts left', await countPosts(`ID IN (${ids(set())})`), 0),
  });
}
// The rest of Q, and whatever earlier checks trashed.
await scenario('Empty Trash', {
  posts: () => Q().slice(120), count: () => countPosts(`post_type = 'post' AND post_status = 'trash'`), via: 'http',
  act: async () => {
    const nonce = await screenNonce('/wp-admin/edit.php?post_status=trash&post_type=post');
    const form = new URLSearchParams([['s', ''], ['post_status', 'trash'], ['post_type', 'post'], ['_wpnonce', nonce],
      ['_wp_http_referer', '/wp-admin/edit.php?post_status=trash&post_type=post'], ['action', '-1'], ['m', '0'], ['cat', '0'], ['delete_all', 'Empty Trash'], ['paged', '1'], ['action2', '-1']]);
    const r = await submit('/wp-admin/edit.php', form, { method: 'GET', token: token('empty-trash') });
    expectRedirect(r, 'Empty Trash', /deleted=\d+/);
    return { ...r, token: token('empty-trash') };
  },
  check: async () => want('posts left in the Trash', await countPosts(`post_type = 'post' AND post_status = 'trash'`), 0),
});

const clean = figures.filter((f) => f.ok).length;
const ran = figures.filter((f) => !f.skipped?.startsWith('E2E_BULK_SCENARIOS')).length;
console.log(`\nbulk actions: ${clean} of ${ran} scenarios clean in ${Math.round((performance.now() - started) / 1000)} s; figures in ${resolve(RESULTS)}`);
// Kept-alive connections would hold the process open; let node:test report, then leave.
setTimeout(() => process.exit(clean === ran ? 0 : 1), 1000).unref();
