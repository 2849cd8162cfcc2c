// freshness: writers edit posts through WordPress (REST API, application password) at a steady
// rate while readers poll those posts and the listings through the cache. After each save the
// writer polls, every POLL_MS, the post, the home page, the post's category and the feed through
// the cache until each shows the new title: edge_time_to_fresh is the time from the save response
// to the first fresh read of the post, edge_time_to_fresh_all the time until all four were fresh.
// The edited posts are the newest EDIT_POSTS, so every one of them is on all four pages.
//
// With SITEWIDE_DURATION, a second phase follows the post edits: site-wide changes at
// SITEWIDE_RATE/s, by turns a site title change (REST settings) and a navigation edit (the label
// of a link in the wp_navigation post the theme's header shows on every page; setup creates it).
// After each, the writer polls every page it checks (every edited post, home, their categories,
// and the feed for a title change: feeds show the title, not the navigation) until all show it:
// edge_time_to_fresh_sitewide. The phases do not overlap so that bench/freshness.sh can count
// the origin requests of each kind of edit on its own.
//
// Readers note whether Varnish answered from its cache: X-Cache, which Varnish shows to trusted
// (loopback) clients without any request header, so the readers' cache keys are a visitor's.
// edge_reader_origin_waits: the share answered MISS or PASS (the reader waited on the origin; a
// reader that waited for another request's fetch is a HIT here: bench/freshness.sh counts those
// in Varnish's log). EDIT_RATE=0: readers only, the baseline bench/freshness.sh compares with.
//
// Environment: WP_USER, WP_APP_PASSWORD (required for edits or SITEWIDE_DURATION), EDIT_RATE
// (edits/s, default 2), DURATION (post edit phase), SITEWIDE_DURATION (default 0s: none),
// SITEWIDE_RATE (default 0.5), EDIT_POSTS (how many of the newest posts take turns, default 8,
// at most the 10 a listing shows), READ_POSTS (default 0), READER_VUS (default 4), POLL_MS (10),
// FRESH_TIMEOUT_MS (10000: an edit not fresh by then fails the run), EDIT_TIMES=1 (log each
// post edit's start, save response and first fresh read, for bench/fresh-stages.py), and, only when set, speed
// thresholds for benchmarks: FRESH_P99_MS (edge_time_to_fresh's p99), FRESH_ALL_P99_MS (the same
// for edge_time_to_fresh_all and edge_time_to_fresh_sitewide), FRESH_MAX_MS (the slowest of them
// all). The smoke in make test sets none of them: a test waits with a generous bound, it does not
// time the machine.
import http from 'k6/http';
import { sleep } from 'k6';
import exec from 'k6/execution';
import encoding from 'k6/encoding';
import { Counter, Rate, Trend } from 'k6/metrics';
import { TARGET, env, num, get, params, requireUp, summarize, seconds, cacheStatus, discoverPosts, TREND_STATS } from './lib/common.js';
import { scenarioThresholds } from './lib/thresholds.js';

const DURATION = env('DURATION', '30s');
const RATE = num('EDIT_RATE', 2);
const SITEWIDE_DURATION = env('SITEWIDE_DURATION', '0s');
const SITEWIDE_RATE = num('SITEWIDE_RATE', 0.5);
// With SITEWIDE_DURATION even a run without edits (EDIT_RATE=0) has the navigation and reads as
// long: the baseline, the same readers on the same pages.
const NAVIGATION = seconds(SITEWIDE_DURATION) > 0;
const SITEWIDE = RATE > 0 && NAVIGATION;
const READ_DURATION = `${seconds(DURATION) + (NAVIGATION ? seconds(SITEWIDE_DURATION) : 0)}s`;
const POLL_MS = num('POLL_MS', 10);
const EDIT_TIMES = env('EDIT_TIMES', '') === '1';
const TIMEOUT_MS = num('FRESH_TIMEOUT_MS', 10000);
// FRESH_MAX_MS, when set: the slowest edit too (make bench-freshness: the worst case under 500 ms).
const worstCase = __ENV.FRESH_MAX_MS ? [`max<${num('FRESH_MAX_MS', 500)}`] : [];
const p99Under = (name) => (__ENV[name] ? [`p(99)<${num(name, 0)}`] : []);
const AUTH = `Basic ${encoding.b64encode(`${env('WP_USER', 'admin')}:${env('WP_APP_PASSWORD', '')}`)}`;
const NAV_TITLE = 'varnish-edge bench navigation';

const timeToFresh = new Trend('edge_time_to_fresh', true);
const timeToFreshAll = new Trend('edge_time_to_fresh_all', true);
const timeToFreshSitewide = new Trend('edge_time_to_fresh_sitewide', true);
// The first of those pages fresh: the invalidation and one render; the rest is rendering them all.
const sitewideFirst = new Trend('edge_sitewide_first_fresh', true);
// Its two parts: save -> the poll that came back fresh was sent (webhook, purger, purge), and
// that poll's own duration (the origin rendering the page again, unless a reader was first).
const invalidation = new Trend('edge_fresh_invalidation', true);
const refetch = new Trend('edge_fresh_refetch', true);
const freshTimeouts = new Counter('edge_fresh_timeouts');
const editErrors = new Rate('edge_edit_errors');
const edits = new Counter('edge_edits');
const sitewideChanges = new Counter('edge_sitewide_changes');
const readerOriginWaits = new Rate('edge_reader_origin_waits');
const readerCacheUnknown = new Counter('edge_reader_cache_unknown');

const scenarios = {
  readers: { exec: 'readers', executor: 'constant-vus', vus: num('READER_VUS', 4), duration: READ_DURATION, gracefulStop: '5s' },
};
const writerVUs = (rate) => ({ preAllocatedVUs: Math.ceil(rate * 2) + 1, maxVUs: Math.ceil(rate * 12) + 2, gracefulStop: `${TIMEOUT_MS / 1000 + 5}s` });
if (RATE > 0) {
  scenarios.writers = { exec: 'writers', executor: 'constant-arrival-rate', rate: RATE, timeUnit: '1s', duration: DURATION, ...writerVUs(RATE) };
}
if (SITEWIDE) {
  // Rates under 1/s: k6 wants whole numbers, so count per 1/rate seconds (0.5/s: 1 per 2 s).
  const unit = SITEWIDE_RATE >= 1 ? 1 : 1 / SITEWIDE_RATE;
  scenarios.sitewide = {
    exec: 'sitewide', executor: 'constant-arrival-rate', rate: Math.round(SITEWIDE_RATE * unit), timeUnit: `${unit}s`,
    startTime: DURATION, duration: SITEWIDE_DURATION, ...writerVUs(SITEWIDE_RATE),
  };
}

const editThresholds = RATE > 0 ? {
  edge_time_to_fresh: [...p99Under('FRESH_P99_MS'), ...worstCase],
  edge_time_to_fresh_all: [...p99Under('FRESH_ALL_P99_MS'), ...worstCase],
  edge_fresh_timeouts: ['count==0'],
  edge_edit_errors: ['rate==0'],
  edge_edits: ['count>0'],
} : {};
const sitewideThresholds = SITEWIDE ? {
  edge_time_to_fresh_sitewide: [...p99Under('FRESH_ALL_P99_MS'), ...worstCase],
  // Each kind on its own too (the summary then carries both).
  'edge_time_to_fresh_sitewide{change:title}': p99Under('FRESH_ALL_P99_MS'),
  'edge_time_to_fresh_sitewide{change:navigation}': p99Under('FRESH_ALL_P99_MS'),
  edge_sitewide_changes: ['count>0'],
} : {};

export const options = {
  scenarios,
  summaryTrendStats: TREND_STATS,
  setupTimeout: '90s',
  thresholds: {
    ...scenarioThresholds('readers'),
    ...editThresholds,
    ...sitewideThresholds,
  },
};

const authed = (name) => params(name, { headers: { Authorization: AUTH, 'Content-Type': 'application/json' } });
const pathOf = (url) => url.replace(/^https?:\/\/[^/]+/, '');
const navContent = (label) => `<!-- wp:navigation-link {"label":"${label}","url":"/","kind":"custom","isTopLevelLink":true} /-->`;

// The wp_navigation post the header shows (the theme's navigation block, with no menu of its
// own, shows the newest published one): ours, created once, its link labelled `label`.
function benchNavigation(label) {
  const found = http.get(`${TARGET}/wp-json/wp/v2/navigation?search=${encodeURIComponent(NAV_TITLE)}&_fields=id`, authed('setup'));
  const ids = found.status === 200 ? JSON.parse(found.body) : [];
  const res = ids.length
    ? http.post(`${TARGET}/wp-json/wp/v2/navigation/${ids[0].id}`, JSON.stringify({ content: navContent(label) }), authed('setup'))
    : http.post(`${TARGET}/wp-json/wp/v2/navigation`, JSON.stringify({ title: NAV_TITLE, status: 'publish', content: navContent(label) }), authed('setup'));
  if (res.status !== 200 && res.status !== 201) exec.test.abort(`cannot save the navigation: ${res.status} ${String(res.body).slice(0, 200)}`);
  return JSON.parse(res.body).id;
}

// Polls `paths` through the cache until every one shows `marker` (or FRESH_TIMEOUT_MS passed).
// onFresh(path, res, elapsed, sent) for each as it turns fresh; returns the paths still stale.
function pollUntilFresh(paths, marker, saved, onFresh) {
  let pending = paths.slice();
  for (;;) {
    const sent = Date.now();
    const batch = http.batch(pending.map((v) => ['GET', `${TARGET}${v}`, null, params('poll')]));
    const elapsed = Date.now() - saved;
    const still = [];
    batch.forEach((res, i) => {
      if (res.status === 200 && res.body && res.body.includes(marker)) onFresh(pending[i], res, elapsed, sent);
      else still.push(pending[i]);
    });
    pending = still;
    if (!pending.length || elapsed > TIMEOUT_MS) return { pending, elapsed };
    sleep(POLL_MS / 1000);
  }
}

export function setup() {
  requireUp('/');
  if (RATE > 0 || NAVIGATION) {
    if (!env('WP_APP_PASSWORD', '')) exec.test.abort('WP_APP_PASSWORD is not set (an application password of WP_USER)');
    const me = http.get(`${TARGET}/wp-json/wp/v2/users/me?context=edit&_fields=id`, authed('setup'));
    if (me.status !== 200) exec.test.abort(`the application password is not accepted: ${me.status} ${String(me.body).slice(0, 200)}`);
  }
  const wanted = num('EDIT_POSTS', 8);
  if (wanted > 10) exec.test.abort('EDIT_POSTS must be at most 10: the home page, category and feed list the 10 newest');
  const list = http.get(`${TARGET}/wp-json/wp/v2/posts?per_page=${wanted}&orderby=date&order=desc&_fields=id,link,categories`, params('setup'));
  if (list.status !== 200) exec.test.abort(`cannot list posts through ${TARGET}: status ${list.status}`);
  const posts = JSON.parse(list.body).map((p) => {
    const cat = http.get(`${TARGET}/wp-json/wp/v2/categories/${p.categories[0]}?_fields=link`, params('setup'));
    if (cat.status !== 200) exec.test.abort(`cannot read category ${p.categories[0]}: status ${cat.status}`);
    return { id: p.id, path: pathOf(p.link), views: [pathOf(p.link), '/', pathOf(JSON.parse(cat.body).link), '/feed/'] };
  });
  if (!posts.length) exec.test.abort('the site has no posts');
  const pages = [...new Set(posts.flatMap((p) => p.views))];
  // READ_POSTS: readers also read the newest READ_POSTS posts, pages a site-wide change empties
  // too but that nobody checks right after it (whoever reads them next waits, unless refreshed).
  const more = num('READ_POSTS', 0);
  const wide = more > 0 ? discoverPosts(more, 'desc').map((p) => p.path) : [];
  let nav = null;
  if (NAVIGATION) {
    const label = `Nav setup${Date.now().toString(36)}`;
    nav = benchNavigation(label);
    const { pending } = pollUntilFresh(pages.filter((v) => v !== '/feed/'), label, Date.now(), () => {});
    if (pending.length) exec.test.abort(`the navigation link does not show on ${pending.join(' ')}: does the theme render a navigation block?`);
  }
  for (const v of [...pages, ...wide]) { get(v, 'setup'); get(v, 'setup'); } // cached before the first edit
  // For bench/freshness.sh: the pages a site title change is checked on, and where the load (and
  // the post edit phase) begins.
  console.log(`freshness: pages checked ${pages.join(' ')}`);
  console.log(`freshness: load starts at ${Date.now()}`);
  return { posts, pages, nav, wide };
}

// One writer iteration: save, then poll the post, home, category and feed through the cache
// (one batch per round) until each is fresh.
export function writers(data) {
  const post = data.posts[exec.scenario.iterationInTest % data.posts.length];
  const marker = `fresh${exec.scenario.iterationInTest}x${Math.floor(Math.random() * 1e9).toString(36)}`;
  const start = Date.now();
  const save = http.post(`${TARGET}/wp-json/wp/v2/posts/${post.id}`, JSON.stringify({ title: `Post ${post.id} ${marker}` }), authed('edit'));
  const saved = Date.now();
  editErrors.add(save.status !== 200);
  if (save.status !== 200) return;
  edits.add(1);
  const { pending, elapsed } = pollUntilFresh(post.views, marker, saved, (path, res, at, sent) => {
    if (path !== post.path) return;
    timeToFresh.add(at);
    invalidation.add(sent - saved);
    refetch.add(res.timings.duration);
    // EDIT_TIMES: each edit's clock times (ms), which bench/fresh-stages.py lines up with the
    // purger's log and receipts to break edit → fresh down by stage.
    if (EDIT_TIMES) console.log(`freshness: edit ${JSON.stringify({ post: post.id, start, saved, fresh: saved + at })}`);
  });
  if (pending.length) {
    freshTimeouts.add(1);
    console.warn(`not fresh ${elapsed} ms after the save of post ${post.id}: ${pending.join(' ')}`);
    if (pending.includes(post.path)) timeToFresh.add(elapsed);
  }
  timeToFreshAll.add(elapsed);
}

// One site-wide change, by turns the site title and the navigation, then every page checked
// until all show it.
export function sitewide(data) {
  const i = exec.scenario.iterationInTest;
  const change = i % 2 === 0 ? 'title' : 'navigation';
  const marker = `site${i}x${Math.floor(Math.random() * 1e9).toString(36)}`;
  const save = change === 'title'
    ? http.post(`${TARGET}/wp-json/wp/v2/settings`, JSON.stringify({ title: `Bench ${marker}` }), authed('edit'))
    : http.post(`${TARGET}/wp-json/wp/v2/navigation/${data.nav}`, JSON.stringify({ content: navContent(`Nav ${marker}`) }), authed('edit'));
  const saved = Date.now();
  editErrors.add(save.status !== 200);
  if (save.status !== 200) return;
  sitewideChanges.add(1);
  const pages = change === 'title' ? data.pages : data.pages.filter((v) => v !== '/feed/');
  let first = null;
  const { pending, elapsed } = pollUntilFresh(pages, marker, saved, (_path, _res, at) => { if (first === null) first = at; });
  if (first !== null) sitewideFirst.add(first, { change });
  if (pending.length) {
    freshTimeouts.add(1);
    console.warn(`not fresh ${elapsed} ms after the ${change} change: ${pending.join(' ')}`);
  }
  timeToFreshSitewide.add(elapsed, { change });
}

// Readers: anonymous visitors on the same posts and on the listings that show them, and with
// READ_POSTS, 40 % of the time on any of the newest READ_POSTS posts.
function readerPath(data) {
  if (data.wide.length && Math.random() < 0.4) return data.wide[Math.floor(Math.random() * data.wide.length)];
  const post = data.posts[Math.floor(Math.random() * data.posts.length)];
  return Math.random() < 0.6 ? post.path : post.views[1 + Math.floor(Math.random() * 3)];
}

export function readers(data) {
  const path = readerPath(data);
  // X-Bench-Client: no part of the cache key; bench/freshness.sh finds the readers' waits by it.
  const res = get(path, 'read', { responseType: 'none', headers: { 'X-Bench-Client': 'reader' } });
  const cache = cacheStatus(res);
  if (!cache) readerCacheUnknown.add(1);
  else readerOriginWaits.add(cache === 'MISS' || cache === 'PASS');
  sleep(num('READ_SLEEP_MS', 20) / 1000);
}

export function handleSummary(data) {
  return summarize(data, { scenario: 'readers', seconds: seconds(READ_DURATION), extra: { edit_rate: RATE, sitewide_rate: SITEWIDE ? SITEWIDE_RATE : 0 } });
}
