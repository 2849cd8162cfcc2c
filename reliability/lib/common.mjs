// Shared helpers for the reliability checks: the running native stack (started by
// reliability/run.sh through stack/up.sh), its signed webhooks, extra varnishd nodes in front of
// it, a bounded read-load generator, figures. The launchers, the HTTP client, waiting and the
// signer are the test kit's (testkit/).
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { postEvents as post, urlEvent as urlEventOn } from '../../testkit/events.mjs';
import { request } from '../../testkit/http.mjs';
import { Varnish } from '../../testkit/varnish.mjs';
import { sleep } from '../../testkit/wait.mjs';

const run = promisify(execFile);

const need = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set (run through reliability/run.sh)`);
  return v;
};

/** The stack under test: ports, paths and secrets (secrets stay in memory, never printed). */
export function stackEnv() {
  const dir = need('STACK_DIR');
  const secrets = {};
  for (const line of readFileSync(join(dir, 'secrets.env'), 'utf8').split('\n')) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m) secrets[m[1]] = m[2].replace(/^'(.*)'$/, '$1');
  }
  const env = {
    repo: need('STACK_REPO'), dir, site: need('SITE_HOST'),
    varnishPort: Number(need('VARNISH_PORT')), webPort: Number(need('WEB_PORT')),
    purgerPort: Number(need('PURGER_PORT')), redisPort: Number(need('REDIS_PORT')),
    secrets,
  };
  env.edge = `http://127.0.0.1:${env.varnishPort}`;
  env.origin = `http://127.0.0.1:${env.webPort}`;
  env.purger = `http://127.0.0.1:${env.purgerPort}`;
  env.redisUrl = `redis://:${secrets.REDIS_PASSWORD}@127.0.0.1:${env.redisPort}`;
  return env;
}

/** Runs stack/services/<svc>.sh start|stop with the stack's environment. */
export async function service(env, svc, action) {
  await run(join(env.repo, 'stack/services', `${svc}.sh`), [action], { env: process.env, timeout: 120_000 });
}

// ─── signed webhooks (docs/protocol.md §1), bound to the stack's secret and site ────────
/** POST /v1/events signed with the stack's secret (or opts.secret); returns {status, json, body}. */
export const postEvents = (env, base, body, opts = {}) => post(base, body, { secret: env.secrets.WEBHOOK_SECRET, ...opts });

/** A hard invalidation of paths on the stack's site. */
export const urlEvent = (env, paths, extra = {}) => urlEventOn(env.site, paths, extra);

/** Receipts and /metrics need a bearer token (the stack's operator token reads them). */
let readHeaders;
function readAuth() {
  readHeaders ??= { authorization: `Bearer ${stackEnv().secrets.OPERATOR_TOKEN}` };
  return readHeaders;
}

/** GET /v1/events/:id on a purger: per-node states. */
export async function receipt(base, id) {
  const r = await request(base, `/v1/events/${encodeURIComponent(id)}`, { headers: readAuth() });
  return r.status === 200 ? JSON.parse(r.body) : null;
}

/** Reads a counter or gauge family from a purger's /metrics: sum over series matching labels. */
export async function metric(base, name, labels = {}) {
  const r = await request(base, '/metrics', { headers: readAuth() });
  if (r.status !== 200) throw new Error(`${base}/metrics answered ${r.status}`);
  let sum = 0;
  for (const line of r.body.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_:]+)(\{[^}]*\})?\s+([0-9.eE+-]+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    if (Object.entries(labels).every(([k, v]) => (m[2] || '').includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}

// ─── Redis (redis-cli; the password goes through REDISCLI_AUTH, never argv) ─────────────
export async function redis(env, ...args) {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(env.redisPort), '--no-auth-warning', ...args], {
    env: { ...process.env, REDISCLI_AUTH: env.secrets.REDIS_PASSWORD }, timeout: 10_000,
  });
  return stdout.trim();
}
/** How many events a purger prefix has ever stored (the log's sequence counter). */
export const storedCount = async (env, prefix) => Number((await redis(env, 'GET', `${prefix}:seq`)) || 0);

// ─── Varnish ────────────────────────────────────────────────────────────────────────────
export function varnishBans(workdir) {
  const out = execFileSync('varnishadm', ['-n', workdir, 'ban.list'], { encoding: 'utf8', timeout: 10_000 });
  return out.split('\n').slice(1).filter((l) => l.trim() !== '');
}
export function varnishStat(workdir, fields) {
  const args = ['-n', workdir, '-j'];
  for (const f of fields) args.push('-f', f);
  const j = JSON.parse(execFileSync('varnishstat', args, { encoding: 'utf8', timeout: 10_000 }));
  const counters = j.counters ?? j;
  const out = {};
  for (const f of fields) out[f] = counters[f]?.value ?? null;
  return out;
}

/**
 * One more varnishd in front of the stack's nginx (or `origin: 'HOST:PORT'`), with the entry VCL
 * the stack renders and the stack's purge token, under STACK_DIR; get(path) asks for the
 * stack's site.
 */
export class VarnishNode extends Varnish {
  constructor(env, name, port, { lurkerAge = '1', origin = null } = {}) {
    super({
      backend: origin ?? `127.0.0.1:${env.webPort}`, port, dir: join(env.dir, `rel-varnish-${name}`),
      tokenFile: join(env.dir, 'conf/varnish_purge_token'), params: { ban_lurker_age: lurkerAge },
    });
    Object.assign(this, { env, name });
  }

  get(path, opts = {}) { return super.get(this.env.site, path, opts); }
}

/** One GET on its own connection (no pool: a hung request must not queue the next one). */
export function getOnce(base, path, host, timeoutMs = 60_000) {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = http.get(new URL(path, base), { agent: false, headers: { host, 'user-agent': 'reliability-probe/1' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - t0, headers: res.headers }));
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ status: 0, ms: performance.now() - t0, headers: {}, error: e.message }));
  });
}

/** A TCP listener that accepts every connection and never says anything. */
export async function blackHole(port) {
  const sockets = new Set();
  const server = net.createServer((s) => { sockets.add(s); s.on('error', () => {}); s.on('close', () => sockets.delete(s)); });
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  return { node: `127.0.0.1:${port}`, connections: () => sockets.size, close: () => { for (const s of sockets) s.destroy(); return new Promise((r) => server.close(r)); } };
}

export const pct = (xs, p) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};
export const round = (x, d = 1) => (x === null || x === undefined ? x : Math.round(x * 10 ** d) / 10 ** d);
export const summary = (xs) => ({ n: xs.length, p50: round(pct(xs, 50)), p95: round(pct(xs, 95)), max: round(xs.length ? xs.reduce((a, b) => Math.max(a, b)) : null) });

export function assert(cond, msg) { if (!cond) throw new Error(msg); }

/**
 * Read load: `concurrency` loops GET `paths` round-robin through `base` until stop(); each
 * answer is recorded as {t, status, ms, cache}. Bounded by `maxSeconds` whatever happens.
 */
export function readLoad(base, host, paths, { concurrency = 4, maxSeconds = 900, pauseMs = 0, timeoutMs = 10_000 } = {}) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const samples = [];
  let stopped = false;
  let i = 0;
  const deadline = Date.now() + maxSeconds * 1000;
  const one = (path) => new Promise((resolve) => {
    const t0 = performance.now();
    const req = http.get(new URL(path, base), { agent, headers: { host, 'user-agent': 'reliability-load/1' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - t0, cache: res.headers['x-cache'] || '' }));
      res.on('error', () => resolve({ status: 0, ms: performance.now() - t0, cache: '', error: 'body' }));
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ status: 0, ms: performance.now() - t0, cache: '', error: e.message }));
  });
  const loop = async () => {
    while (!stopped && Date.now() < deadline) {
      const path = paths[i++ % paths.length];
      const r = await one(path);
      samples.push({ t: Date.now(), path, ...r });
      if (pauseMs) await sleep(pauseMs);
    }
  };
  const loops = Array.from({ length: concurrency }, loop);
  return {
    samples,
    async stop() { stopped = true; await Promise.all(loops); agent.destroy(); return samples; },
  };
}

/** Counts of a load's samples: total, errors (status 0 or >= 500), by X-Cache. */
export function loadFigures(samples) {
  const errors = samples.filter((s) => s.status === 0 || s.status >= 500);
  const byCache = {};
  for (const s of samples) byCache[s.cache || `status-${s.status}`] = (byCache[s.cache || `status-${s.status}`] || 0) + 1;
  return { requests: samples.length, errors: errors.length, errorSample: errors.slice(0, 3).map((e) => `${e.path} ${e.status} ${e.error || ''}`.trim()), byCache, latencyMs: summary(samples.map((s) => s.ms)) };
}

/** RSS in KiB of a pid and its descendants (a varnishd manager + child, php-fpm master + workers). */
/** A process and its descendants: total RSS (KiB) and how many processes (php-fpm's pool grows and shrinks). */
export function processTree(pid) {
  const out = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,rss='], { encoding: 'utf8' });
  const rows = out.trim().split('\n').map((l) => l.trim().split(/\s+/).map(Number));
  const kids = new Map();
  for (const [p, pp] of rows) { if (!kids.has(pp)) kids.set(pp, []); kids.get(pp).push(p); }
  const rss = new Map(rows.map(([p, , r]) => [p, r]));
  let kib = 0;
  let processes = 0;
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop();
    if (rss.has(p)) { kib += rss.get(p); processes++; }
    stack.push(...(kids.get(p) || []));
  }
  return { kib, processes };
}

/** Figures go to .results/reliability (gitignored); `make publish-results` copies chaos and soak to reliability/results. */
export function writeResult(repo, name, data) {
  const dir = process.env.REL_RESULTS_DIR || join(repo, '.results/reliability');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.json`);
  writeFileSync(file, `${JSON.stringify({ ...data, machine: machine() }, null, 2)}\n`);
  return file;
}

function machine() {
  let os = 'unknown';
  try { os = /PRETTY_NAME="([^"]+)"/.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? os; } catch { /* keep */ }
  let cores = 0;
  try { cores = Number(execFileSync('nproc', { encoding: 'utf8' }).trim()); } catch { /* keep */ }
  return { os, cores, node: process.version };
}
