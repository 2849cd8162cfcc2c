// origin-outage: readers request cached pages while the origin is stopped mid-run (the runner
// stops it OUTAGE_AT seconds in; k6 cannot). Every read must still be a 200 with the page:
// no errors at all. A watcher polls Varnish's /varnish-health; edge_outage_origin_sick must be
// seen at least once, so a run in which the origin never went down cannot pass.
//
// Environment: OUTAGE_PAGES (how many posts besides "/", default 20), VUS (default 10),
// DURATION (default 30s; leave ~10 s after OUTAGE_AT for Varnish's probe to mark it sick).
import http from 'k6/http';
import { check, sleep } from 'k6';
import { Counter, Rate } from 'k6/metrics';
import { env, num, get, requireUp, discoverPosts, cacheStatus, summarize, seconds, TREND_STATS } from './lib/common.js';
import { scenarioThresholds } from './lib/thresholds.js';

const DURATION = env('DURATION', '30s');
const originSick = new Rate('edge_outage_origin_sick');
const stale = new Counter('edge_outage_stale_served');
const pageOk = new Rate('edge_outage_page_ok');

export const options = {
  scenarios: {
    readers: { exec: 'readers', executor: 'constant-vus', vus: num('VUS', 10), duration: DURATION, gracefulStop: '5s' },
    watcher: { exec: 'watcher', executor: 'constant-vus', vus: 1, duration: DURATION, gracefulStop: '5s' },
  },
  summaryTrendStats: TREND_STATS,
  setupTimeout: '60s',
  thresholds: {
    ...scenarioThresholds('readers', { maxErrorRate: 0 }),
    edge_outage_page_ok: ['rate==1'],
    edge_outage_origin_sick: ['rate>0'],
  },
};

http.setResponseCallback(http.expectedStatuses(200));

export function setup() {
  requireUp('/varnish-health');
  const paths = ['/', ...discoverPosts(num('OUTAGE_PAGES', 20), 'desc').map((p) => p.path)];
  for (const p of paths) requireUp(p); // cached before the origin goes away
  return { paths };
}

export function readers(data) {
  const res = get(data.paths[Math.floor(Math.random() * data.paths.length)], 'read');
  pageOk.add(res.status === 200 && String(res.body).includes('</html>'));
  if (cacheStatus(res) === 'STALE') stale.add(1);
  sleep(0.01);
}

export function watcher() {
  const res = get('/varnish-health', 'health', { responseType: 'none' });
  check(res, { 'health endpoint answers': (r) => r.status === 200 });
  originSick.add(res.headers['X-Backend-Health'] === 'sick');
  sleep(0.25);
}

export function handleSummary(data) {
  return summarize(data, { scenario: 'readers', seconds: seconds(DURATION), extra: { outage_at_s: num('OUTAGE_AT', 0) } });
}
