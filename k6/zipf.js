// zipf: every post of the demo site, requested with Zipf-distributed popularity (rank r is
// requested in proportion to 1/r^ZIPF_S). Microcaching degrades when many URLs are hot at once:
// the origin must refresh each of them every second.
//
// URLs come from URLS_FILE (one path per line) or, when unset, from the REST API in setup.
// WARM=1 (default) requests each URL once in setup, so every cache starts from the same state.
// Thresholds: error rate, p99 latency, and MIN_HIT_RATE (share of responses served from cache).
import http from 'k6/http';
import { Rate } from 'k6/metrics';
import { env, num, get, requireUp, expect200, discoverPosts, postPathsFromFile, servedFromCache, summarize, seconds, TREND_STATS } from './lib/common.js';
import { scenarioThresholds } from './lib/thresholds.js';

const DURATION = env('DURATION', '20s');
const S = num('ZIPF_S', 1.0);
const MIN_HIT_RATE = num('MIN_HIT_RATE', 0.5);
const FILE_PATHS = postPathsFromFile();
const hits = new Rate('edge_zipf_cache_hits');

export const options = {
  scenarios: { zipf: { executor: 'constant-vus', vus: num('VUS', 20), duration: DURATION, gracefulStop: '10s' } },
  discardResponseBodies: true,
  summaryTrendStats: TREND_STATS,
  setupTimeout: '120s',
  thresholds: {
    ...scenarioThresholds('zipf'),
    ...(MIN_HIT_RATE > 0 ? { edge_zipf_cache_hits: [`rate>=${MIN_HIT_RATE}`] } : {}),
  },
};

http.setResponseCallback(http.expectedStatuses(200));

export function setup() {
  requireUp('/');
  const paths = FILE_PATHS || discoverPosts().map((p) => p.path);
  if (env('WARM', '1') === '1') {
    for (const path of paths) get(path, 'setup');
  }
  // Cumulative Zipf weights over ranks 1..n; rank order is the list order.
  const cdf = [];
  let sum = 0;
  for (let r = 1; r <= paths.length; r++) { sum += 1 / r ** S; cdf.push(sum); }
  return { paths, cdf: cdf.map((c) => c / sum) };
}

function sample(cdf) {
  const u = Math.random();
  let lo = 0, hi = cdf.length - 1;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (cdf[mid] < u) lo = mid + 1; else hi = mid; }
  return lo;
}

export default function (data) {
  const path = data.paths[sample(data.cdf)];
  const res = get(path, 'zipf');
  expect200(res, path);
  hits.add(servedFromCache(res));
}

export function handleSummary(data) {
  return summarize(data, {
    scenario: 'zipf', seconds: seconds(DURATION),
    extra: { zipf_s: S, urls: FILE_PATHS ? FILE_PATHS.length : undefined },
  });
}
