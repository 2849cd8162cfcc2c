// Webhook → Redis → worker → two real varnishd nodes running vcl/microcache.vcl.
import { describe, expect, it } from 'vitest';
import { until } from '../../testkit/wait.mjs';
import { SITE, type Stack, eventId, postEvents, tagEvent, urlEvent } from './support/stack.js';
import type { Service } from '../src/service.js';
import { appliedEverywhere, counter, expectNotCached, keysFilling, receipt, servicePerFile, warm } from './helpers.js';

let stack: Stack;
let svc: Service;
servicePerFile({ nodes: 2 }, { PURGER_REPURGE_DELAYS_MS: '300,1500' }, (s, v) => ([stack, svc] = [s, v]));

describe('invalidation reaches every node and really removes objects', () => {
  it('purges a URL on both nodes; the next request fetches the edited page', async () => {
    await warm(stack, ['/hello/', '/untouched/']);
    stack.origin.edit('/hello/');
    for (const v of stack.varnishes) expect((await v.get(SITE, '/hello/')).body).toBe('/hello/ v1\n');
    const e = urlEvent(['/hello/']);
    const r = await postEvents(svc.url, { site: SITE, events: [e] });
    expect(r.status).toBe(202);
    const nodes = await appliedEverywhere(svc, e.id, 2);
    expect(nodes.map((n) => n.invalidated)).toEqual([1, 1]);
    for (const v of stack.varnishes) {
      expect(await v.get(SITE, '/hello/')).toMatchObject({ body: '/hello/ v2\n', cache: 'MISS' });
      expect((await v.get(SITE, '/untouched/')).cache).toBe('HIT');
    }
  });

  it('purges by xkey tag and reports how many objects each node invalidated', async () => {
    await warm(stack, ['/t/one/', '/t/two/', '/t/three/']);
    const e = tagEvent(['p-t-one', 'p-t-two']);
    await postEvents(svc.url, { site: SITE, events: [e] });
    const nodes = await appliedEverywhere(svc, e.id, 2);
    expect(nodes.map((n) => n.invalidated)).toEqual([2, 2]);
    for (const v of stack.varnishes) {
      await expectNotCached(v, '/t/one/');
      await expectNotCached(v, '/t/two/');
      expect((await v.get(SITE, '/t/three/')).cache).toBe('HIT');
    }
  });

  it('bans a prefix (escaped regex) without touching look-alike paths, and bans a whole site', async () => {
    await warm(stack, ['/news/a/', '/news/b/?page=2', '/newsletter/', '/other/']);
    const prefix = { id: eventId(), kind: 'prefix', urls: [`http://${SITE}/news/`], soft: false, reason: 'category', time: new Date().toISOString() };
    await postEvents(svc.url, { site: SITE, events: [prefix] });
    await appliedEverywhere(svc, prefix.id, 2);
    for (const v of stack.varnishes) {
      await expectNotCached(v, '/news/a/');
      await expectNotCached(v, '/news/b/?page=2');
      expect((await v.get(SITE, '/newsletter/')).cache).toBe('HIT');
      expect((await v.get(SITE, '/other/')).cache).toBe('HIT');
    }
    const all = { id: eventId(), kind: 'all', soft: false, reason: 'theme switched', time: new Date().toISOString() };
    await postEvents(svc.url, { site: SITE, events: [all] });
    await appliedEverywhere(svc, all.id, 2);
    for (const v of stack.varnishes) {
      await expectNotCached(v, '/newsletter/');
      await expectNotCached(v, '/other/');
    }
  });

  it('applies keys filling the whole header budget (7,168 bytes) as one hard PURGEKEYS, then refreshes the page (no 503, nothing reshaped)', async () => {
    // (the purger used to send this with a refresh generation, which the VCL turned into a regex
    // ban that failed past ~4.8 KB of keys: 503 VCL failed, retried for ever)
    await warm(stack, ['/full-budget/', '/full-budget-other/']);
    stack.origin.edit('/full-budget/');
    const sent = () => Promise.all(stack.varnishes.map((v) => Promise.all(['ok', 'refused', 'retry'].map((outcome) => counter(svc, 'purger_invalidations_sent_total', { node: v.node, kind: 'purgekeys', lane: 'main', outcome })))));
    const fetched = () => counter(svc, 'varnish_edge_purger_refreshes_total', { outcome: 'fetched' });
    const [before, fetchedBefore] = [await sent(), await fetched()];
    const e = tagEvent(keysFilling(7168, ['p-full-budget', 'p-full-budget-other']), { refresh: [`http://${SITE}/full-budget/`] });
    expect((await postEvents(svc.url, { site: SITE, events: [e] })).status).toBe(202);
    await appliedEverywhere(svc, e.id, 2);
    expect((await receipt(svc, e.id)).nodes.map((n) => n.via)).toEqual([undefined, undefined]);
    expect((await sent()).map((node, i) => node.map((n, j) => n - before[i]![j]!))).toEqual([[1, 0, 0], [1, 0, 0]]);
    expect(await counter(svc, 'varnish_edge_purger_reshaped_total')).toBe(0);
    // the page the event names to refresh is fetched again after the purge, both its copies (the
    // test kit's reader sends no Accept-Encoding, so the plain one was read too); the other is gone
    await until('the page refreshed on both nodes', async () => (await fetched()) === fetchedBefore + 4);
    for (const v of stack.varnishes) {
      expect(await v.get(SITE, '/full-budget/')).toMatchObject({ body: '/full-budget/ v2\n' });
      await expectNotCached(v, '/full-budget-other/');
    }
  });

  it('soft-purges: the old copy is served once while it refreshes, then the new one', async () => {
    await warm(stack, ['/soft/']);
    stack.origin.edit('/soft/');
    const e = urlEvent(['/soft/'], { soft: true });
    await postEvents(svc.url, { site: SITE, events: [e] });
    await appliedEverywhere(svc, e.id, 2);
    for (const v of stack.varnishes) {
      await until('refreshed copy', async () => (await v.get(SITE, '/soft/')).body === '/soft/ v2\n');
    }
  });

  it('repurges a hard purge after the delay, removing a page fetched with old content in between', async () => {
    await warm(stack, ['/race/']);
    const e = urlEvent(['/race/']);
    await postEvents(svc.url, { site: SITE, events: [e] });
    await appliedEverywhere(svc, e.id, 2);
    // A fetch that started before the edit lands after the first purge: the old page is cached
    // (and, if the 300 ms repurge has not passed yet, served once more after the edit).
    for (const v of stack.varnishes) expect(await v.get(SITE, '/race/')).toMatchObject({ body: '/race/ v1\n', cache: 'MISS' });
    stack.origin.edit('/race/');
    // No other event names the page: only the delayed repurges can remove it.
    for (const v of stack.varnishes) {
      await until('second purge', async () => (await v.get(SITE, '/race/')).body === '/race/ v2\n', 10_000);
    }
  });

  it('repurges soft purges too after the delay (a grace refresh can race them the same way)', async () => {
    await warm(stack, ['/soft-race/']);
    await new Promise((r) => setTimeout(r, 2000)); // earlier tests' second purges are done
    const purges = () => Promise.all(stack.varnishes.map((v) => counter(svc, 'purger_invalidations_sent_total', { node: v.node, kind: 'purge', outcome: 'ok' })));
    const before = await purges();
    const e = urlEvent(['/soft-race/'], { soft: true });
    await postEvents(svc.url, { site: SITE, events: [e] });
    await appliedEverywhere(svc, e.id, 2);
    await until('second, delayed soft purge on every node', async () => (await purges()).every((n, i) => n - before[i]! >= 2), 10_000);
  });

  it('coalesces a 1,000-event burst into at most 10 requests per node in each lane (first pass and each repurge)', async () => {
    const paths = Array.from({ length: 40 }, (_, i) => `/bulk/${i}/`);
    await warm(stack, paths);
    const lanes = ['main', 'repurge-300', 'repurge-1500'];
    const perLane = () => Promise.all(stack.varnishes.map((v) => Promise.all(lanes.map((lane) => counter(svc, 'purger_invalidations_sent_total', { node: v.node, kind: 'purgekeys', lane })))));
    const before = await perLane();
    const events = Array.from({ length: 1000 }, (_, i) => tagEvent([`p-bulk-${i}`, 'l-bulk-edit']));
    const [a, b] = await Promise.all([
      postEvents(svc.url, { site: SITE, events: events.slice(0, 500) }),
      postEvents(svc.url, { site: SITE, events: events.slice(500) }),
    ]);
    expect([a.status, b.status]).toEqual([202, 202]);
    await appliedEverywhere(svc, events[999]!.id, 2);
    await appliedEverywhere(svc, events[0]!.id, 2);
    for (const v of stack.varnishes) for (const p of paths) await expectNotCached(v, p);
    const sent = async () => (await perLane()).map((node, i) => node.map((n, l) => n - before[i]![l]!));
    await until('both repurges sent on every node', async () => (await sent()).every((node) => node.every((n) => n > 0)), 10_000);
    await new Promise((r) => setTimeout(r, 500)); // a straggling repurge batch would show now
    const counts = await sent();
    console.log(`1,000-event burst, requests per node [main, repurge-300, repurge-1500]: ${JSON.stringify(counts)}`);
    for (const node of counts) for (const n of node) expect(n).toBeLessThanOrEqual(10);
  });

  it('sends a burst of 1,000 URL events as a few exact-match bans: edited pages go, others stay', async () => {
    const gone = Array.from({ length: 10 }, (_, i) => `/esc/${i * 50}/`);
    await warm(stack, [...gone, '/esc/keep-me/', '/esc/1/amp/']);
    const before = await Promise.all(stack.varnishes.map((v) => counter(svc, 'purger_invalidations_sent_total', { node: v.node, outcome: 'ok' })));
    const events = Array.from({ length: 1000 }, (_, i) => urlEvent([`/esc/${i}/`]));
    await Promise.all([postEvents(svc.url, { site: SITE, events: events.slice(0, 500) }), postEvents(svc.url, { site: SITE, events: events.slice(500) })]);
    await appliedEverywhere(svc, events[999]!.id, 2);
    await appliedEverywhere(svc, events[0]!.id, 2);
    const after = await Promise.all(stack.varnishes.map((v) => counter(svc, 'purger_invalidations_sent_total', { node: v.node, outcome: 'ok' })));
    after.forEach((n, i) => {
      expect(n - before[i]!).toBeLessThanOrEqual(10);
    });
    for (const v of stack.varnishes) {
      for (const p of gone) await expectNotCached(v, p);
      expect((await v.get(SITE, '/esc/keep-me/')).cache).toBe('HIT');
      expect((await v.get(SITE, '/esc/1/amp/')).cache).toBe('HIT');
    }
  });
});
