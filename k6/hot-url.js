// hot-url: one page under high concurrency, the classic microcache case. Every virtual user
// requests HOT_PATH (default "/") back to back for DURATION.
//
// Thresholds: error rate (MAX_ERROR_RATE), p99 latency (MAX_P99_MS), and, unless MIN_HIT_RATE
// is 0 (the bare origin), the share of responses served from cache.
import http from 'k6/http';
import { Rate } from 'k6/metrics';
import { env, num, get, requireUp, expect200, servedFromCache, summarize, seconds, TREND_STATS } from './lib/common.js';
import { scenarioThresholds } from './lib/thresholds.js';

const PATH = env('HOT_PATH', '/');
const DURATION = env('DURATION', '20s');
const MIN_HIT_RATE = num('MIN_HIT_RATE', 0.9);
const hits = new Rate('edge_hot_cache_hits');

export const options = {
  scenarios: { hot: { executor: 'constant-vus', vus: num('VUS', 20), duration: DURATION, gracefulStop: '10s' } },
  discardResponseBodies: true,
  summaryTrendStats: TREND_STATS,
  thresholds: {
    ...scenarioThresholds('hot'),
    ...(MIN_HIT_RATE > 0 ? { edge_hot_cache_hits: [`rate>=${MIN_HIT_RATE}`] } : {}),
  },
};

// Anything but a 200 is an error (a redirect or a 304 would not be the page).
http.setResponseCallback(http.expectedStatuses(200));

export function setup() {
  requireUp(PATH);
}

export default function () {
  const res = get(PATH, 'hot');
  expect200(res, PATH);
  hits.add(servedFromCache(res));
}

export function handleSummary(data) {
  return summarize(data, { scenario: 'hot', seconds: seconds(DURATION), extra: { path: PATH } });
}
