// freshness: writers edit posts through WordPress (REST API, application password) at a steady
// rate while readers poll those posts and the listings through the cache. After each save the
// writer polls, every POLL_MS, the post, the home page, the post's category and the feed through
// the cache until each shows the new title: edge_time_to_fresh is the time from the save response
// to the first fresh read of the post, edge_time_to_fresh_all the time until all four were fresh.
// The edited posts are the newest EDIT_POSTS, so every one of them is on all four pages.
//
// Environment: WP_USER, WP_APP_PASSWORD (required), EDIT_RATE (edits/s, default 2), EDIT_POSTS
// (how many of the newest posts take turns, default 8, at most the 10 a listing shows),
// READER_VUS (default 4), POLL_MS (10), FRESH_TIMEOUT_MS (10000), FRESH_P99_MS (threshold on
// edge_time_to_fresh's p99), FRESH_ALL_P99_MS (the same for edge_time_to_fresh_all).
import http from 'k6/http';
import { sleep } from 'k6';
import exec from 'k6/execution';
import encoding from 'k6/encoding';
import { Counter, Rate, Trend } from 'k6/metrics';
import { TARGET, env, num, get, params, requireUp, summarize, seconds, TREND_STATS } from './lib/common.js';
import { scenarioThresholds } from './lib/thresholds.js';

const DURATION = env('DURATION', '30s');
const RATE = num('EDIT_RATE', 2);
const POLL_MS = num('POLL_MS', 10);
const TIMEOUT_MS = num('FRESH_TIMEOUT_MS', 10000);
// FRESH_MAX_MS, when set: the slowest edit too (make bench-freshness: the worst case under 500 ms).
const worstCase = __ENV.FRESH_MAX_MS ? [`max<${num('FRESH_MAX_MS', 500)}`] : [];
const AUTH = `Basic ${encoding.b64encode(`${env('WP_USER', 'admin')}:${env('WP_APP_PASSWORD', '')}`)}`;

const timeToFresh = new Trend('edge_time_to_fresh', true);
const timeToFreshAll = new Trend('edge_time_to_fresh_all', true);
// Its two parts: save -> the poll that came back fresh was sent (webhook, purger, purge), and
// that poll's own duration (the origin rendering the page again, unless a reader was first).
const invalidation = new Trend('edge_fresh_invalidation', true);
const refetch = new Trend('edge_fresh_refetch', true);
const freshTimeouts = new Counter('edge_fresh_timeouts');
const editErrors = new Rate('edge_edit_errors');
const edits = new Counter('edge_edits');

export const options = {
  scenarios: {
    writers: {
      exec: 'writers', executor: 'constant-arrival-rate', rate: RATE, timeUnit: '1s', duration: DURATION,
      preAllocatedVUs: Math.ceil(RATE * 2) + 1, maxVUs: Math.ceil(RATE * 12) + 2, gracefulStop: `${TIMEOUT_MS / 1000 + 5}s`,
    },
    readers: { exec: 'readers', executor: 'constant-vus', vus: num('READER_VUS', 4), duration: DURATION, gracefulStop: '5s' },
  },
  summaryTrendStats: TREND_STATS,
  setupTimeout: '60s',
  thresholds: {
    ...scenarioThresholds('readers'),
    edge_time_to_fresh: [`p(99)<${num('FRESH_P99_MS', 250)}`, ...worstCase],
    edge_time_to_fresh_all: [`p(99)<${num('FRESH_ALL_P99_MS', 1000)}`, ...worstCase],
    edge_fresh_timeouts: ['count==0'],
    edge_edit_errors: ['rate==0'],
    edge_edits: ['count>0'],
  },
};

export function setup() {
  if (!env('WP_APP_PASSWORD', '')) exec.test.abort('WP_APP_PASSWORD is not set (an application password of WP_USER)');
  requireUp('/');
  const me = http.get(`${TARGET}/wp-json/wp/v2/users/me?context=edit&_fields=id`, params('setup', { headers: { Authorization: AUTH } }));
  if (me.status !== 200) exec.test.abort(`the application password is not accepted: ${me.status} ${String(me.body).slice(0, 200)}`);
  const wanted = num('EDIT_POSTS', 8);
  if (wanted > 10) exec.test.abort('EDIT_POSTS must be at most 10: the home page, category and feed list the 10 newest');
  const list = http.get(`${TARGET}/wp-json/wp/v2/posts?per_page=${wanted}&orderby=date&order=desc&_fields=id,link,categories`, params('setup'));
  if (list.status !== 200) exec.test.abort(`cannot list posts through ${TARGET}: status ${list.status}`);
  const posts = JSON.parse(list.body).map((p) => {
    const cat = http.get(`${TARGET}/wp-json/wp/v2/categories/${p.categories[0]}?_fields=link`, params('setup'));
    if (cat.status !== 200) exec.test.abort(`cannot read category ${p.categories[0]}: status ${cat.status}`);
    const path = (url) => url.replace(/^https?:\/\/[^/]+/, '');
    return { id: p.id, path: path(p.link), views: [path(p.link), '/', path(JSON.parse(cat.body).link), '/feed/'] };
  });
  if (!posts.length) exec.test.abort('the site has no posts');
  for (const p of posts) for (const v of p.views) { get(v, 'setup'); get(v, 'setup'); } // cached before the first edit
  return { posts };
}

// One writer iteration: save, then poll the post, home, category and feed through the cache
// (one batch per round) until each is fresh.
export function writers(data) {
  const post = data.posts[exec.scenario.iterationInTest % data.posts.length];
  const marker = `fresh${exec.scenario.iterationInTest}x${Math.floor(Math.random() * 1e9).toString(36)}`;
  const save = http.post(`${TARGET}/wp-json/wp/v2/posts/${post.id}`, JSON.stringify({ title: `Post ${post.id} ${marker}` }),
    params('edit', { headers: { Authorization: AUTH, 'Content-Type': 'application/json' } }));
  const saved = Date.now();
  editErrors.add(save.status !== 200);
  if (save.status !== 200) return;
  edits.add(1);
  let pending = post.views.slice();
  for (;;) {
    const sent = Date.now();
    const batch = http.batch(pending.map((v) => ['GET', `${TARGET}${v}`, null, params('poll')]));
    const elapsed = Date.now() - saved;
    const still = [];
    batch.forEach((res, i) => {
      if (!(res.status === 200 && res.body && res.body.includes(marker))) { still.push(pending[i]); return; }
      if (pending[i] === post.path) {
        timeToFresh.add(elapsed);
        invalidation.add(sent - saved);
        refetch.add(res.timings.duration);
      }
    });
    pending = still;
    if (!pending.length) { timeToFreshAll.add(elapsed); return; }
    if (elapsed > TIMEOUT_MS) {
      freshTimeouts.add(1);
      console.warn(`not fresh ${elapsed} ms after the save of post ${post.id}: ${pending.join(' ')}`);
      if (pending.includes(post.path)) timeToFresh.add(elapsed);
      timeToFreshAll.add(elapsed);
      return;
    }
    sleep(POLL_MS / 1000);
  }
}

// Readers: anonymous visitors on the same posts and on the listings that show them.
export function readers(data) {
  const post = data.posts[Math.floor(Math.random() * data.posts.length)];
  const path = Math.random() < 0.6 ? post.path : post.views[1 + Math.floor(Math.random() * 3)];
  get(path, 'read', { responseType: 'none' });
  sleep(num('READ_SLEEP_MS', 20) / 1000);
}

export function handleSummary(data) {
  return summarize(data, { scenario: 'readers', seconds: seconds(DURATION), extra: { edit_rate: RATE } });
}
