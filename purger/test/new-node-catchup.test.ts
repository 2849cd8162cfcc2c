// A node the purger finds later than readers do: a new Varnish task serves (and caches) pages at
// once, but the engine lists it in DNS only once healthy and the purger re-resolves every
// PURGER_DNS_INTERVAL_MS. An edit logged in between must still reach it: a node new to Redis
// starts PURGER_NEW_NODE_CATCHUP_MS back in the log. Real redis-server, real varnishd; node B is
// found through VARNISH_DNS with a resolver the test answers (A is a static node).
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { sleep, until } from '../../testkit/wait.mjs';
import { SITE, type Stack, postEvents, urlEvent } from './support/stack.js';
import { appliedEverywhere, counter, receipt, stackPerFile, warm } from './helpers.js';
import type { Service } from '../src/service.js';
import { StreamLog } from '../src/store/stream-log.js';
import type { StoredEvent } from '../src/model/event-model.js';

let stack: Stack;
let redis: Redis;
stackPerFile({ nodes: 2 }, (s, r) => ([stack, redis] = [s, r]));

/**
 * A purger (its own Redis prefix, so no node has a cursor yet) that knows node A and finds node B
 * through DNS once `appear()` makes the resolver list it.
 */
async function purgerWithLateNode(prefix: string, env: Record<string, string> = {}) {
  const [a, b] = stack.varnishes as [NonNullable<Stack['varnishes'][0]>, NonNullable<Stack['varnishes'][0]>];
  let answer: string[] = [];
  const svc: Service = await stack.service(
    { VARNISH_NODES: a.node, VARNISH_DNS: `varnish-late:${b.port}`, PURGER_DNS_INTERVAL_MS: '100', PURGER_REDIS_PREFIX: prefix, ...env },
    { resolver: async () => answer },
  );
  await until('worker knows node A', () => svc.worker!.nodeCount === 1);
  return {
    svc,
    a,
    b,
    nodeKey: `${prefix}:node:${b.node}`,
    async appear(): Promise<void> {
      answer = ['127.0.0.1'];
      await until('worker found node B', () => svc.worker!.nodeCount === 2);
    },
    async disappear(): Promise<void> {
      answer = [];
      await until('worker dropped node B', () => svc.worker!.nodeCount === 1);
    },
  };
}

/** Posts hard URL events, each waited for until node A applied it (B unknown yet). */
async function editAndLog(svc: Service, paths: string[], nodes = 1): Promise<string[]> {
  const ids: string[] = [];
  for (const p of paths) {
    stack.origin.edit(p);
    const e = urlEvent([p]);
    expect((await postEvents(svc.url, { site: SITE, events: [e] })).status).toBe(202);
    await appliedEverywhere(svc, e.id, nodes);
    ids.push(e.id);
  }
  return ids;
}

const stateOn = async (svc: Service, id: string, node: string): Promise<string | undefined> => (await receipt(svc, id)).nodes.find((n) => n.node === node)?.state;

describe('a node found after an event was logged', () => {
  it('gets the events logged within the catch-up window before it was found', async () => {
    const { svc, a, b, nodeKey, appear } = await purgerWithLateNode('catchup-a');
    await warm(stack, ['/late/page/', '/late/other/']);
    // The race: B already serves and caches the page, the editor saves it, the event goes to the
    // nodes the purger knows (A), and only then does DNS list B.
    const [id] = await editAndLog(svc, ['/late/page/']);
    expect((await a.get(SITE, '/late/page/')).body).toBe('/late/page/ v2\n');
    expect(await b.get(SITE, '/late/page/')).toMatchObject({ body: '/late/page/ v1\n', cache: 'HIT' });
    expect(await redis.exists(nodeKey)).toBe(0);

    await appear();
    await appliedEverywhere(svc, id!, 2);
    expect((await b.get(SITE, '/late/page/')).body).toBe('/late/page/ v2\n');
    expect((await b.get(SITE, '/late/other/')).cache).toBe('HIT');
    expect(await counter(svc, 'purger_log_overruns_total', { node: b.node })).toBe(0);
  });

  it('does not replay an event older than the window', async () => {
    const { svc, b, appear } = await purgerWithLateNode('catchup-b', { PURGER_NEW_NODE_CATCHUP_MS: '3000' });
    await warm(stack, ['/late/old/', '/late/recent/', '/late/kept/'], [b]);
    const [old] = await editAndLog(svc, ['/late/old/']);
    await sleep(4000); // the first event is now older than the window
    const [recent] = await editAndLog(svc, ['/late/recent/']);

    await appear();
    await appliedEverywhere(svc, recent!, 2);
    expect((await b.get(SITE, '/late/recent/')).body).toBe('/late/recent/ v2\n');
    // not sent to B, and no gap either (a wrong sequence number would make it ban the site)
    expect(await b.get(SITE, '/late/old/')).toMatchObject({ body: '/late/old/ v1\n', cache: 'HIT' });
    expect((await b.get(SITE, '/late/kept/')).cache).toBe('HIT');
    expect(await stateOn(svc, old!, b.node)).toBe('skipped');
    expect(await counter(svc, 'purger_log_overruns_total', { node: b.node })).toBe(0);
    expect(await counter(svc, 'purger_invalidations_sent_total', { node: b.node, lane: 'main', kind: 'purge' })).toBe(1);
  });

  it('starts at the end of the log with PURGER_NEW_NODE_CATCHUP_MS=0', async () => {
    const { svc, b, nodeKey, appear } = await purgerWithLateNode('catchup-c', { PURGER_NEW_NODE_CATCHUP_MS: '0' });
    await warm(stack, ['/late/zero/', '/late/zero-next/'], [b]);
    const [before] = await editAndLog(svc, ['/late/zero/']);
    const end = (await redis.xrevrange('catchup-c:log', '+', '-', 'COUNT', 1))[0]![0];

    await appear();
    await until('node B has a cursor', async () => (await redis.hget(nodeKey, 'cursor')) !== null);
    expect(await redis.hget(nodeKey, 'cursor')).toBe(end);
    const [next] = await editAndLog(svc, ['/late/zero-next/'], 2);
    expect((await b.get(SITE, '/late/zero-next/')).body).toBe('/late/zero-next/ v2\n');
    expect(await b.get(SITE, '/late/zero/')).toMatchObject({ body: '/late/zero/ v1\n', cache: 'HIT' });
    expect(await stateOn(svc, before!, b.node)).toBe('skipped');
    expect(await stateOn(svc, next!, b.node)).toBe('applied');
  });

  it('resumes a node that already has a cursor from it (nothing replayed)', async () => {
    const { svc, b, appear, disappear } = await purgerWithLateNode('catchup-d');
    await appear();
    await warm(stack, ['/late/seen/'], [b]);
    await editAndLog(svc, ['/late/seen/'], 2);
    await warm(stack, ['/late/seen/', '/late/away/', '/late/back/'], [b]);
    expect((await b.get(SITE, '/late/seen/')).body).toBe('/late/seen/ v2\n');
    await disappear();

    // edited without an event (the page stays v2 on B unless something purges it again), and an
    // event logged while B was away
    stack.origin.edit('/late/seen/');
    const [away] = await editAndLog(svc, ['/late/away/']);
    await appear();
    await editAndLog(svc, ['/late/back/'], 2);
    await appliedEverywhere(svc, away!, 2);
    expect((await b.get(SITE, '/late/away/')).body).toBe('/late/away/ v2\n');
    expect((await b.get(SITE, '/late/back/')).body).toBe('/late/back/ v2\n');
    // the event B had applied before it went away, well within the window, was not sent again
    expect(await b.get(SITE, '/late/seen/')).toMatchObject({ body: '/late/seen/ v2\n', cache: 'HIT' });
  });
});

describe('StreamLog.cursors for a node new to Redis', () => {
  let n = 0;
  const event = (path: string): StoredEvent => ({ id: `cursors-${n++}`, site: SITE, kind: 'urls', paths: [path], soft: false, reason: 'test', time: new Date().toISOString(), acceptedAt: Date.now() });

  /** a log under its own prefix with three entries a few ms apart */
  async function threeEntries(prefix: string) {
    const log = new StreamLog(redis, prefix, { maxLen: 10_000, maxAgeS: 3600, dedupeTtlS: 3600 });
    await log.append('m-0', SITE, [event('/u/0/')]); // an entry before the three: its seq is not 0
    const entries = [];
    for (let i = 1; i <= 3; i++) {
      await sleep(5);
      entries.push(...(await log.append(`m-${i}`, SITE, [event(`/u/${i}/`)])).accepted);
    }
    return { log, entries: entries as [(typeof entries)[0], (typeof entries)[0], (typeof entries)[0]] };
  }
  const ms = (id: string): number => Number(id.split('-')[0]);

  it('starts on the newest entry before the window, with its sequence number (reads on without a gap)', async () => {
    const { log, entries: [e1, e2, e3] } = await threeEntries('cursors-1');
    const c = await log.cursors('n1', [300], 10_000, ms(e2.streamId) + 10_000);
    expect(c).toMatchObject({ cursor: e1.streamId, seq: e1.seq, repurge: [e1.streamId], catchup: { entries: 2, first: e2.streamId } });
    expect(await redis.hgetall(log.nodeKey('n1'))).toMatchObject({ cursor: e1.streamId, seq: String(e1.seq), 'repurge:300': e1.streamId });
    const r = await log.read(c.cursor, c.seq, 100);
    expect(r.overrun).toBe(false);
    expect(r.entries.map((e) => e.streamId)).toEqual([e2.streamId, e3.streamId]);
  });

  it('starts before the first entry when the log is shorter than the window or trimmed', async () => {
    const { log, entries: [, e2, e3] } = await threeEntries('cursors-2');
    await redis.xtrim('cursors-2:log', 'MINID', e2.streamId);
    const c = await log.cursors('n1', [], 3_600_000);
    expect(c).toMatchObject({ cursor: '0-0', seq: e2.seq - 1, catchup: { entries: 2, first: e2.streamId } });
    const r = await log.read(c.cursor, c.seq, 100);
    expect(r.overrun).toBe(false);
    expect(r.entries.map((e) => e.streamId)).toEqual([e2.streamId, e3.streamId]);
  });

  it('starts at the end with no window, with nothing in the window, and resumes an existing cursor', async () => {
    const { log, entries: [e1, , e3] } = await threeEntries('cursors-3');
    expect(await log.cursors('off', [], 0)).toEqual({ cursor: e3.streamId, seq: e3.seq, repurge: [] });
    expect(await log.cursors('quiet', [], 1000, ms(e3.streamId) + 5000)).toEqual({ cursor: e3.streamId, seq: e3.seq, repurge: [], catchup: { entries: 0 } });
    await log.saveCursor('known', 'cursor', e1.streamId, e1.seq);
    expect(await log.cursors('known', [], 3_600_000)).toEqual({ cursor: e1.streamId, seq: e1.seq, repurge: [] });
    const empty = new StreamLog(redis, 'cursors-empty', { maxLen: 100, maxAgeS: 3600, dedupeTtlS: 3600 });
    expect(await empty.cursors('n', [], 3_600_000)).toEqual({ cursor: '0-0', seq: 0, repurge: [], catchup: { entries: 0 } });
  });
});
