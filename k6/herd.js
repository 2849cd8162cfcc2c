// herd: HERD_VUS virtual users request one cold URL at the same instant. A cache that
// coalesces misses sends exactly one request to the origin and answers everyone from it.
//
// The URL is HERD_PATH with a fresh ?herd=<HERD_NONCE> query (cold in every cache; the runner
// passes the nonce to find the same URL in the origin's access log). Each response's X-Cache
// says whether that client's request went to the origin (MISS / PASS / EXPIRED) or was served
// from the coalesced fetch (HIT): edge_herd_origin_fetches must be exactly HERD_MAX_FETCHES (1).
import http from 'k6/http';
import { check, sleep } from 'k6';
import { Counter, Trend } from 'k6/metrics';
import { env, num, get, requireUp, cacheStatus, summarize, TREND_STATS } from './lib/common.js';
import { scenarioThresholds } from './lib/thresholds.js';

const VUS = num('HERD_VUS', 100);
const BASE = env('HERD_PATH', '/');
const MAX_FETCHES = num('HERD_MAX_FETCHES', 1);
const originFetches = new Counter('edge_herd_origin_fetches');
const spread = new Trend('edge_herd_start_spread', true);

export const options = {
  scenarios: { herd: { executor: 'per-vu-iterations', vus: VUS, iterations: 1, maxDuration: '60s' } },
  summaryTrendStats: TREND_STATS,
  thresholds: {
    ...scenarioThresholds('herd', { maxErrorRate: 0 }),
    edge_herd_origin_fetches: [`count==${MAX_FETCHES}`],
    'checks{scenario:herd}': ['rate==1'],
  },
};

http.setResponseCallback(http.expectedStatuses(200));

export function setup() {
  requireUp('/');
  // One URL for every VU (init code runs once per VU, so the nonce is chosen here), and one
  // wall-clock instant for all of them, a moment after every VU is ready.
  const nonce = env('HERD_NONCE', `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6)}`);
  const path = `${BASE}${BASE.includes('?') ? '&' : '?'}herd=${nonce}`;
  return { path, nonce, startAt: Date.now() + num('HERD_DELAY_MS', 1500) };
}

export default function (data) {
  const wait = data.startAt - Date.now();
  if (wait > 0) sleep(wait / 1000);
  spread.add(Date.now() - data.startAt);
  const res = get(data.path, 'herd');
  const status = cacheStatus(res);
  if (status !== 'HIT') originFetches.add(1, { x_cache: status || 'none' });
  check(res, { 'status 200': (r) => r.status === 200, 'has a body': (r) => r.body && r.body.length > 0 });
  sleep(2); // keeps the run long enough for k6's HTML report to have data
}

export function handleSummary(data) {
  const { path, nonce } = data.setup_data || {};
  return summarize(data, { scenario: 'herd', seconds: 1, extra: { path, nonce, vus: VUS } });
}
