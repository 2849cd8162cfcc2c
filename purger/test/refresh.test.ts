// Refresh after invalidation against real varnishd running the shipped VCL: each node re-fetches
// the pages an event names once it applied the event, if readers asked for them recently.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../testkit/wait.mjs';
import { appliedEverywhere, counter, receipt, warm } from './helpers.js';
import { postEvents, SITE, Stack, tagEvent, urlEvent } from './support/stack.js';
import type { Service } from '../src/service.js';

const REFRESHES = 'varnish_edge_purger_refreshes_total';
const url = (path: string): string => `http://${SITE}${path}`;

let stack: Stack;
let svc: Service | undefined;

beforeAll(async () => {
  stack = await Stack.start({ nodes: 1 });
});

afterAll(async () => {
  await stack.close();
});

/** A purger service with `env`, replacing the previous one (one worker per node at a time). */
async function service(env: Record<string, string> = {}): Promise<Service> {
  if (svc) await stack.stopService(svc);
  svc = await stack.service(env);
  const s = svc;
  await until('worker knows the node', () => s.worker!.nodeCount === 1);
  return s;
}

const hits = (path: string): number => stack.origin.hits.get(path) ?? 0;

/** A reader's GET as browsers make it (gzip: the variant a refresh fills), the page unzipped. */
async function read(path: string): Promise<{ cache: string; body: string }> {
  const r = await request(`http://${stack.varnishes[0]!.node}${path}`, { headers: { host: SITE, 'accept-encoding': 'gzip' } });
  const raw = Buffer.from(await r.body.arrayBuffer());
  return { cache: String(r.headers['x-cache']), body: (r.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString() };
}

/** Caches `paths` for browsers only (gzip), so no refresh of their plain copy is worth a render. */
async function warmForBrowsers(paths: string[]): Promise<void> {
  for (const p of paths) await until(`${p} cached for gzip readers`, async () => (await read(p)).cache === 'HIT', 10_000, 20);
}

async function send(s: Service, events: Record<string, unknown>[]): Promise<void> {
  const r = await postEvents(s.url, { site: SITE, events });
  expect(r.status).toBe(202);
  for (const e of events) await appliedEverywhere(s, e.id as string, 1);
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Watches the origin's requests for `watched` from now on (the test kit's origin answers every
 * request through its `answer` method; Varnish's health probe is not watched): how many were in
 * flight at once at most, and their paths in order.
 */
function watchOrigin(watched: readonly string[]): { max: () => number; paths: string[]; restore: () => void } {
  const origin = stack.origin as unknown as { answer: Handler };
  const answer = origin.answer.bind(origin);
  let now = 0;
  let max = 0;
  const paths: string[] = [];
  origin.answer = (req, res) => {
    if (watched.includes(req.url ?? '')) {
      max = Math.max(max, ++now);
      paths.push(req.url ?? '');
      res.once('close', () => now--);
    }
    answer(req, res);
  };
  return { max: () => max, paths, restore: () => (origin.answer = answer) };
}

describe('refresh after invalidation', () => {
  it('re-fetches a page readers asked for: the next reader gets the edited page from the cache, for one origin request', async () => {
    const s = await service();
    await warmForBrowsers(['/refreshed/']);
    const before = hits('/refreshed/');
    stack.origin.edit('/refreshed/');
    await send(s, [urlEvent(['/refreshed/'], { refresh: [url('/refreshed/')] })]);
    await until('refresh fetched', async () => (await counter(s, REFRESHES, { outcome: 'fetched' })) === 1);
    expect(hits('/refreshed/')).toBe(before + 1);
    expect(await read('/refreshed/')).toEqual({ cache: 'HIT', body: '/refreshed/ v2\n' });
    expect(hits('/refreshed/')).toBe(before + 1);
  });

  it('fills the plain copy too when a reader without gzip read the page: curl gets the edited page from the cache', async () => {
    const s = await service();
    await warm(stack, ['/plain-read/']); // (the test kit's reader sends no Accept-Encoding)
    await warmForBrowsers(['/plain-read/']);
    const before = hits('/plain-read/');
    const fetched = await counter(s, REFRESHES, { outcome: 'fetched' });
    stack.origin.edit('/plain-read/');
    await send(s, [urlEvent(['/plain-read/'], { refresh: [url('/plain-read/')] })]);
    await until('both copies refreshed', async () => (await counter(s, REFRESHES, { outcome: 'fetched' })) === fetched + 2);
    const plain = await stack.varnishes[0]!.get(SITE, '/plain-read/');
    expect({ cache: plain.cache, body: plain.body }).toEqual({ cache: 'HIT', body: '/plain-read/ v2\n' });
    expect(await read('/plain-read/')).toEqual({ cache: 'HIT', body: '/plain-read/ v2\n' });
    expect(hits('/plain-read/')).toBe(before + 2);
  });

  it('does not fetch a page no reader asked for recently, on every kind of event', async () => {
    const s = await service();
    const before = await counter(s, REFRESHES, { outcome: 'skipped' });
    await send(s, [tagEvent(['p-unread'], { refresh: [url('/unread/')] }), { ...tagEvent(['l-home']), kind: 'all', tags: undefined, refresh: [url('/unread-2/')] }]);
    // each page's gzip and plain copy
    await until('refreshes skipped', async () => (await counter(s, REFRESHES, { outcome: 'skipped' })) === before + 4);
    expect(hits('/unread/') + hits('/unread-2/')).toBe(0);
  });

  it('refreshes at most PURGER_REFRESH_CONCURRENCY pages at a time per node, in priority order', async () => {
    const s = await service({ PURGER_REFRESH_CONCURRENCY: '2' });
    const pages = Array.from({ length: 6 }, (_, i) => `/busy-${i}/`);
    await warmForBrowsers(pages);
    for (const p of pages) stack.origin.slowOnce(p, 300);
    const seen = watchOrigin(pages);
    try {
      const before = await counter(s, REFRESHES, { outcome: 'fetched' });
      await send(s, [tagEvent(['l-home'], { refresh: pages.map(url) })]);
      await until('every page refreshed', async () => (await counter(s, REFRESHES, { outcome: 'fetched' })) === before + 6, 20_000);
      expect(seen.max()).toBe(2);
      // two at a time, in the order the event lists them
      for (let i = 0; i < pages.length; i += 2) expect(seen.paths.slice(i, i + 2).sort()).toEqual(pages.slice(i, i + 2));
    } finally {
      seen.restore();
    }
    for (const p of pages) expect((await read(p)).cache).toBe('HIT');
  });

  it('refreshes the pages of a soft invalidation one at a time, in order (readers get the stale copy meanwhile)', async () => {
    const s = await service({ PURGER_REFRESH_CONCURRENCY: '4' });
    const pages = Array.from({ length: 4 }, (_, i) => `/soft-${i}/`);
    await warmForBrowsers(pages);
    for (const p of pages) {
      stack.origin.edit(p);
      stack.origin.slowOnce(p, 200);
    }
    const seen = watchOrigin(pages);
    try {
      const before = await counter(s, REFRESHES, { outcome: 'fetched' });
      await send(s, [tagEvent(pages.map((p) => `p-${p.slice(1, -1)}`), { soft: true, refresh: pages.map(url) })]);
      await until('every page refreshed', async () => (await counter(s, REFRESHES, { outcome: 'fetched' })) === before + 4, 20_000);
      expect(seen.max()).toBe(1);
      expect(seen.paths).toEqual(pages);
    } finally {
      seen.restore();
    }
    for (const p of pages) expect(await read(p)).toEqual({ cache: 'HIT', body: `${p} v2\n` });
  });

  it('queues a page once, and again when it was invalidated while its refresh was in flight', async () => {
    const s = await service();
    await warmForBrowsers(['/twice/']);
    const all = async () => counter(s, REFRESHES, { outcome: 'fetched' });
    const before = await all();
    // (under the nodes' 1 s timeout in these tests)
    stack.origin.slowOnce('/twice/', 800);
    stack.origin.edit('/twice/');
    await send(s, [urlEvent(['/twice/'], { soft: true, refresh: [url('/twice/')] })]);
    // two more edits, each its own batch, while that fetch (begun before them, so not kept) is in flight
    for (let i = 0; i < 2; i++) {
      stack.origin.edit('/twice/');
      await send(s, [urlEvent(['/twice/'], { soft: true, refresh: [url('/twice/')] })]);
    }
    await until('the refresh ran again after the in-flight one', async () => (await all()) === before + 2, 20_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(await all()).toBe(before + 2);
    expect(await counter(s, REFRESHES, { outcome: 'failed' })).toBe(0);
    expect((await read('/twice/')).body).toBe('/twice/ v4\n');
  });

  it('purges hard first, then refreshes: the old copy is never served after the purge, and readers wait on the one refresh', async () => {
    const s = await service();
    await warmForBrowsers(['/removal/', '/removal-other/']);
    expect((await read('/removal/')).cache).toBe('HIT');
    const before = hits('/removal/');
    stack.origin.edit('/removal/');
    stack.origin.slowOnce('/removal/', 600);
    // as the plugin sends a post's edit: its URL and its keys, the pages to refresh on the last event
    const byUrl = urlEvent(['/removal/']);
    const event = tagEvent(['p-removal', 'p-removal-other'], { refresh: [url('/removal/')] });
    const r = await postEvents(s.url, { site: SITE, events: [byUrl, event] });
    expect(r.status).toBe(202);
    await until('the refresh reached the origin', () => hits('/removal/') === before + 1);
    // the node applied the purges before the refresh began (no generation, nothing kept)
    for (const e of [byUrl, event]) expect((await receipt(s, e.id as string)).nodes.map((n) => n.state)).toEqual(['applied']);
    // during the render a reader gets no old copy: it waits on the refresh's fetch
    expect(await read('/removal/')).toEqual({ cache: 'HIT', body: '/removal/ v2\n' });
    expect(hits('/removal/')).toBe(before + 1);
    expect((await read('/removal-other/')).cache).toBe('MISS');
    await until('refresh counted', async () => (await counter(s, REFRESHES, { outcome: 'fetched' })) >= 1);
  });

  it('sends no refresh with PURGER_REFRESH_CONCURRENCY=0', async () => {
    const s = await service({ PURGER_REFRESH_CONCURRENCY: '0' });
    await warmForBrowsers(['/off/']);
    const before = hits('/off/');
    await send(s, [urlEvent(['/off/'], { refresh: [url('/off/')] })]);
    await new Promise((r) => setTimeout(r, 500));
    expect(hits('/off/')).toBe(before);
    expect(await counter(s, REFRESHES)).toBe(0);
  });

  it('drops queued refreshes on shutdown and lets the one in flight finish', async () => {
    const s = await service({ PURGER_REFRESH_CONCURRENCY: '1' });
    const pages = Array.from({ length: 4 }, (_, i) => `/closing-${i}/`);
    await warmForBrowsers(pages);
    const before = pages.map(hits);
    stack.origin.slowOnce(pages[0]!, 800);
    await send(s, [tagEvent(['l-home'], { soft: true, refresh: pages.map(url) })]);
    await until('first refresh in flight', () => hits(pages[0]!) === before[0]! + 1);
    await stack.stopService(s);
    svc = undefined;
    expect(await counter(s, REFRESHES, { outcome: 'fetched' })).toBe(1);
    expect(await counter(s, REFRESHES, { outcome: 'failed' })).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(pages.map(hits)).toEqual([before[0]! + 1, ...before.slice(1)]);
  });
});
