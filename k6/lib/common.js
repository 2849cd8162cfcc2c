// Shared by every scenario in k6/: where the target is, a setup check that fails fast when it
// is down, the post list, and the end-of-test summary (machine-readable JSON + a short text).
//
// Environment: TARGET (base URL to connect to, default http://127.0.0.1:8080), SITE_HOST (the
// Host header WordPress expects, default localhost:8080), DURATION, VUS, OUT_DIR (where the
// summary JSON goes), RUN_NAME (its file name), and per-script settings named in each script.
import http from 'k6/http';
import exec from 'k6/execution';

export const PREFIX = 'edge_';
export const TARGET = (__ENV.TARGET || 'http://127.0.0.1:8080').replace(/\/+$/, '');
export const SITE_HOST = __ENV.SITE_HOST || 'localhost:8080';
export const OUT_DIR = (__ENV.OUT_DIR || '.').replace(/\/+$/, '');
export const RUN_NAME = __ENV.RUN_NAME || 'k6';

export const env = (k, d) => (__ENV[k] === undefined || __ENV[k] === '' ? d : __ENV[k]);
export const num = (k, d) => Number(env(k, d));

// Latency statistics every summary carries.
export const TREND_STATS = ['avg', 'min', 'med', 'max', 'p(50)', 'p(90)', 'p(99)'];

// Browsers ask for compressed pages; ACCEPT_ENCODING= (empty) sends no Accept-Encoding at all.
const ENCODING = env('ACCEPT_ENCODING', 'gzip') ? { 'Accept-Encoding': env('ACCEPT_ENCODING', 'gzip') } : {};

/** Request parameters: the site's Host header, no redirects followed, a request tag. */
export function params(name, extra = {}) {
  return {
    redirects: 0,
    timeout: env('REQUEST_TIMEOUT', '30s'),
    ...extra,
    headers: { Host: SITE_HOST, 'User-Agent': 'varnish-edge-k6/1', ...ENCODING, ...(extra.headers || {}) },
    tags: { name, ...(extra.tags || {}) },
  };
}

export const get = (path, name, extra) => http.get(TARGET + path, params(name, extra));

/** Aborts the whole test at once (exit code 108) when the target does not serve `path`. */
export function requireUp(path = '/') {
  let res;
  try {
    res = get(path, 'setup', { timeout: '10s' });
  } catch (e) {
    res = { status: 0, error: String(e) };
  }
  if (res.status !== 200) {
    exec.test.abort(`target ${TARGET}${path} (Host: ${SITE_HOST}) is not serving: status ${res.status} ${res.error || ''}`);
  }
  return res;
}

/** The site's published posts as {id, path}, read through the REST API (at most `limit`). */
export function discoverPosts(limit = 1000, order = 'asc') {
  const posts = [];
  for (let page = 1; posts.length < limit; page++) {
    const res = get(`/wp-json/wp/v2/posts?per_page=100&page=${page}&_fields=id,link&orderby=id&order=${order}`, 'setup', { responseType: 'text' });
    if (res.status === 400 && page > 1) break; // past the last page
    if (res.status !== 200) exec.test.abort(`cannot list posts through ${TARGET}: status ${res.status}`);
    const batch = JSON.parse(res.body);
    for (const p of batch) posts.push({ id: p.id, path: p.link.replace(/^https?:\/\/[^/]+/, '') });
    if (batch.length < 100) break;
  }
  if (!posts.length) exec.test.abort('the site has no posts');
  return posts.slice(0, limit);
}

/** Posts from URLS_FILE (one path per line, read at init), or discovered in setup when unset. */
export function postPathsFromFile() {
  const file = env('URLS_FILE', '');
  if (!file) return null;
  return open(file).split('\n').map((s) => s.trim()).filter(Boolean);
}

/**
 * Logs the first few unexpected responses of each VU (status, cache status, path), so a run
 * with errors says what they were. Returns whether the response was a 200.
 */
let reported = 0;
export function expect200(res, path) {
  if (res.status === 200) return true;
  if (reported++ < num('REPORT_ERRORS', 3)) {
    console.warn(`unexpected response: ${res.status} ${res.error || ''} X-Cache=${cacheStatus(res)} Age=${res.headers.Age || ''} ${path}`);
  }
  return false;
}

/** Cache status as a client sees it: X-Cache from Varnish (and from the bench's NGINX). */
export const cacheStatus = (res) => String(res.headers['X-Cache'] || '').toUpperCase();
export const servedFromCache = (res) => ['HIT', 'STALE', 'UPDATING'].includes(cacheStatus(res));

const round = (x, d = 2) => (typeof x === 'number' && Number.isFinite(x) ? Number(x.toFixed(d)) : x);

/**
 * handleSummary for every script: writes OUT_DIR/RUN_NAME.json with the scenario's figures
 * (requests/s over the scenario's own duration, latency, errors, thresholds, every edge_*
 * metric) and prints a short text summary. `main` names the scenario whose requests count.
 */
export function summarize(data, { scenario, seconds, extra = {} }) {
  const m = data.metrics;
  const pick = (name) => (m[name] ? m[name].values : undefined);
  const dur = pick(`http_req_duration{scenario:${scenario}}`) || {};
  const failed = pick(`http_req_failed{scenario:${scenario}}`) || {};
  const reqs = pick(`http_reqs{scenario:${scenario}}`) || {};
  const thresholds = {};
  let thresholdsOk = true;
  for (const [name, metric] of Object.entries(m)) {
    if (!metric.thresholds) continue;
    for (const [expr, r] of Object.entries(metric.thresholds)) {
      thresholds[`${name}: ${expr}`] = r.ok;
      thresholdsOk = thresholdsOk && r.ok;
    }
  }
  const custom = {};
  for (const [name, metric] of Object.entries(m)) {
    if (name.startsWith(PREFIX)) {
      custom[name] = Object.fromEntries(Object.entries(metric.values).map(([k, v]) => [k, round(v, 3)]));
    }
  }
  const out = {
    run: RUN_NAME,
    scenario,
    target: TARGET,
    site_host: SITE_HOST,
    seconds,
    requests: reqs.count || 0,
    rps: round((reqs.count || 0) / seconds, 1),
    latency_ms: { p50: round(dur['p(50)']), p99: round(dur['p(99)']), max: round(dur.max), avg: round(dur.avg) },
    errors: failed.passes || 0,
    error_rate: round(failed.rate || 0, 5),
    thresholds_ok: thresholdsOk,
    thresholds,
    metrics: custom,
    ...extra,
  };
  const lines = [
    `${RUN_NAME}: ${out.requests} requests in ${seconds} s = ${out.rps} req/s; ` +
      `p50 ${out.latency_ms.p50} ms, p99 ${out.latency_ms.p99} ms, max ${out.latency_ms.max} ms; ${out.errors} errors`,
    ...Object.entries(custom).map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`),
    ...Object.entries(thresholds).map(([k, ok]) => `  ${ok ? 'ok  ' : 'FAIL'} threshold ${k}`),
    `${RUN_NAME}: thresholds ${thresholdsOk ? 'passed' : 'FAILED'}`,
  ];
  return { stdout: `${lines.join('\n')}\n`, [`${OUT_DIR}/${RUN_NAME}.json`]: `${JSON.stringify(out, null, 2)}\n` };
}

/** Duration string ("20s", "1m") in seconds. */
export function seconds(d) {
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  const unit = { ms: 0.001, s: 1, m: 60, h: 3600 };
  let total = 0;
  for (let x = re.exec(d); x; x = re.exec(d)) total += Number(x[1]) * unit[x[2]];
  return total;
}
