// A node's answers as the purger classifies them, and what it sends instead of a request the node
// refused as built (reshape.ts), then NodeSender acting on it with a scripted node.
// poison.test.ts covers the same against real varnishd.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Invalidation } from '../src/delivery/coalesce.js';
import { NodeHealth } from '../src/delivery/node-health.js';
import { type EventOutcome, NodeSender, type Sent } from '../src/delivery/node-sender.js';
import { classifyAnswer, classifyError, reshape, strongerVia } from '../src/delivery/reshape.js';
import { Sleeper } from '../src/delivery/retry.js';
import { SendError, type SendResult, type VarnishClient } from '../src/delivery/varnish-client.js';
import { createMetrics } from '../src/metrics.js';
import type { StreamLog } from '../src/store/stream-log.js';

const keys = (site: string, list: string[], eventIds = ['e1'], soft = false): Extract<Invalidation, { kind: 'purgekeys' }> => ({ kind: 'purgekeys', site, soft, keys: list, eventIds });

describe('classifyAnswer', () => {
  it('applied: 2xx', () => {
    for (const s of [200, 201, 204]) expect(classifyAnswer(s, ''), String(s)).toBe('applied');
  });

  it('transient (the same request later): 403, 408, 429, 502, 504, a 503 that is not a VCL failure, other 5xx, 3xx', () => {
    for (const s of [403, 408, 429, 502, 504, 503, 507, 511, 301, 302]) expect(classifyAnswer(s, s === 503 ? '503 Backend fetch failed' : ''), String(s)).toBe('transient');
    expect(classifyAnswer(503, '')).toBe('transient');
  });

  it('refused (never the same request again): other 4xx, 500, 501, 505, and a 503 "VCL failed"', () => {
    for (const s of [400, 401, 404, 405, 409, 411, 413, 414, 417, 422, 431, 500, 501, 505]) expect(classifyAnswer(s, ''), String(s)).toBe('refused');
    // (the shipped VCL's synth body; Varnish's built-in one says it in a <title>)
    expect(classifyAnswer(503, '503 VCL failed\n')).toBe('refused');
    expect(classifyAnswer(503, '<html><head><title>503 VCL failed</title></head></html>')).toBe('refused');
  });

  it("an error without an answer: undici's invalid argument is refused, the network transient", () => {
    expect(classifyError('UND_ERR_INVALID_ARG')).toBe('refused');
    for (const c of ['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET', 'EPIPE']) expect(classifyError(c), c).toBe('transient');
  });
});

describe('reshape', () => {
  it('splits a PURGEKEYS with two or more keys in two halves by bytes, keeping its site, mode and events', () => {
    const r = reshape(keys('a.test', ['k1', 'k2', 'k3', 'k4'], ['e1', 'e2'], true));
    expect(r).toEqual({ how: 'split', requests: [keys('a.test', ['k1', 'k2'], ['e1', 'e2'], true), keys('a.test', ['k3', 'k4'], ['e1', 'e2'], true)] });
    // one long key weighs as much as many short ones
    const long = 'x'.repeat(100);
    expect(reshape(keys('a.test', [long, 'a', 'b', 'c'])).requests.map((q) => (q as { keys: string[] }).keys)).toEqual([[long], ['a', 'b', 'c']]);
    expect(reshape(keys('a.test', ['a', 'b', 'c', long])).requests.map((q) => (q as { keys: string[] }).keys)).toEqual([['a', 'b', 'c'], [long]]);
    expect(reshape(keys('a.test', ['a', 'b'])).requests.map((q) => (q as { keys: string[] }).keys)).toEqual([['a'], ['b']]);
  });

  it('turns one key, one URL (hard or soft) and a URL-regex ban into a ban of the whole site', () => {
    const siteBan = { how: 'host-ban', requests: [{ kind: 'ban', site: 'a.test', eventIds: ['e1', 'e2'] }] };
    expect(reshape(keys('a.test', ['only'], ['e1', 'e2']))).toEqual(siteBan);
    expect(reshape(keys('a.test', ['only'], ['e1', 'e2'], true))).toEqual(siteBan);
    expect(reshape({ kind: 'purge', site: 'a.test', soft: false, path: '/p/', eventIds: ['e1', 'e2'] })).toEqual(siteBan);
    expect(reshape({ kind: 'purge', site: 'a.test', soft: true, path: '/p/', eventIds: ['e1', 'e2'] })).toEqual(siteBan);
    expect(reshape({ kind: 'ban', site: 'a.test', banUrl: '^/news/', eventIds: ['e1', 'e2'] })).toEqual(siteBan);
  });

  it('gives up on a refused ban of the whole site', () => {
    expect(reshape({ kind: 'ban', site: 'a.test', eventIds: ['e1'] })).toEqual({ how: 'failed', requests: [] });
  });

  it('ends: reshaping every result again reaches "failed" after at most 2n - 1 splits and n site bans for n keys', () => {
    for (const n of [1, 2, 3, 7, 64, 257]) {
      let queue: Invalidation[] = [keys('a.test', Array.from({ length: n }, (_, i) => `key-${i}`))];
      let splits = 0;
      let bans = 0;
      let failed = 0;
      while (queue.length > 0) {
        const r = reshape(queue.shift()!);
        if (r.how === 'split') splits++;
        if (r.how === 'host-ban') bans++;
        if (r.how === 'failed') failed++;
        queue = [...queue, ...r.requests];
      }
      expect(splits, `n=${n}`).toBe(n - 1);
      expect(bans).toBe(n);
      expect(failed).toBe(n);
    }
  });

  it('strongerVia: host-ban over split over none', () => {
    expect(strongerVia(undefined, undefined)).toBeUndefined();
    expect(strongerVia(undefined, 'split')).toBe('split');
    expect(strongerVia('split', undefined)).toBe('split');
    expect(strongerVia('split', 'host-ban')).toBe('host-ban');
    expect(strongerVia('host-ban', 'split')).toBe('host-ban');
  });
});

/**
 * A node that refuses PURGEKEYS naming a key that starts with `bad` (as a VCL failure) or more than
 * four keys (as a header too long), and bans of `refusing.test` (as a 400), fails `flaky` once
 * transiently, and applies the rest.
 */
function scriptedNode() {
  const sent: Invalidation[] = [];
  let flaky = 0;
  const client = {
    async send(req: Invalidation): Promise<SendResult> {
      sent.push(req);
      if (req.kind === 'purgekeys' && req.keys.some((k) => k.startsWith('bad'))) throw new SendError('PURGEKEYS to n1 answered 503: 503 VCL failed', 'refused');
      if (req.kind === 'purgekeys' && req.keys.length > 4) throw new SendError('PURGEKEYS to n1 answered 400', 'refused');
      if (req.kind === 'ban' && req.site === 'refusing.test') throw new SendError('BAN to n1 answered 400: 400 Bad ban', 'refused');
      if (req.kind === 'purgekeys' && req.keys.includes('flaky') && flaky++ === 0) throw new SendError('PURGEKEYS to n1 failed: ECONNRESET', 'transient');
      // (Varnish counts what PURGE and PURGEKEYS remove; a ban counts nothing)
      return { status: 200, invalidated: req.kind === 'purgekeys' ? req.keys.length : req.kind === 'purge' ? 1 : 0 };
    },
  };
  const metrics = createMetrics({ defaults: false });
  const log = { setNodeDown: async () => undefined } as unknown as StreamLog;
  const logger = pino({ level: 'silent' });
  const sender = new NodeSender('n1', client as unknown as VarnishClient, { nodeConcurrency: 3, retryBaseMs: 1, retryMaxMs: 2 }, new NodeHealth('n1', log, metrics, logger), new Sleeper(), metrics, logger);
  const reshaped = async (how: string): Promise<number> => (await metrics.reshaped.get()).values.filter((v) => v.labels.how === how).reduce((a, v) => a + v.value, 0);
  return { sender, sent, metrics, reshaped };
}

/** the events' outcomes by id (one site) */
const outcomes = (sent: Sent | undefined, site: string): Record<string, EventOutcome> =>
  Object.fromEntries([...sent!.events].filter(([ref]) => ref.startsWith(`${site}/`)).map(([ref, o]) => [ref.slice(site.length + 1), o]));

describe('NodeSender with a node that refuses some shapes', () => {
  it('splits the refused key list down to the refused key, bans the site for it, and applies the rest as sent', async () => {
    const node = scriptedNode();
    const requests: Invalidation[] = [
      keys('a.test', ['k1', 'k2', 'bad-1', 'k3', 'k4'], ['e1']),
      keys('a.test', ['k5', 'k6'], ['e2']),
      { kind: 'purge', site: 'a.test', soft: false, path: '/p/', eventIds: ['e3'] },
    ];
    const sent = await node.sender.sendAll(requests, 'main');
    expect(outcomes(sent, 'a.test')).toEqual({ e1: { invalidated: 4, via: 'host-ban' }, e2: { invalidated: 2 }, e3: { invalidated: 1 } });
    const keyLists = node.sent.filter((q) => q.kind === 'purgekeys').map((q) => q.keys.join(' '));
    expect(keyLists.sort()).toEqual(['bad-1', 'bad-1 k3 k4', 'k1 k2', 'k1 k2 bad-1 k3 k4', 'k3 k4', 'k5 k6'].sort());
    expect(node.sent.filter((q) => q.kind === 'ban')).toEqual([{ kind: 'ban', site: 'a.test', eventIds: ['e1'] }]);
    expect(await node.reshaped('split')).toBe(2);
    expect(await node.reshaped('host-ban')).toBe(1);
    expect(await node.reshaped('failed')).toBe(0);
  });

  it('sends one ban per site however many of its requests end refused; a split alone says split; as sent, no via', async () => {
    const node = scriptedNode();
    const sent = await node.sender.sendAll([keys('a.test', ['bad-1'], ['e1']), keys('a.test', ['bad-2'], ['e2']), keys('b.test', ['bad-3'], ['e3']), keys('a.test', ['k1', 'bad-4'], ['e4'])], 'main');
    expect([...sent!.events.values()].map((o) => o.via)).toEqual(['host-ban', 'host-ban', 'host-ban', 'host-ban']);
    expect(node.sent.filter((q) => q.kind === 'ban').map((q) => q.site).sort()).toEqual(['a.test', 'b.test']);
    const split = scriptedNode();
    const r = await split.sender.sendAll([keys('a.test', ['k1', 'k2', 'k3', 'k4', 'k5', 'k6'], ['e1']), keys('a.test', ['k7'], ['e2'])], 'main');
    expect(outcomes(r, 'a.test')).toEqual({ e1: { invalidated: 6, via: 'split' }, e2: { invalidated: 1 } });
    expect(split.sent.map((q) => (q as { keys: string[] }).keys.join(' ')).sort()).toEqual(['k1 k2 k3', 'k1 k2 k3 k4 k5 k6', 'k4 k5 k6', 'k7']);
  });

  it('names in each half only the events of its keys: the refused key fails or bans its own events only', async () => {
    const coalesced = (site: string): Invalidation => ({ ...keys(site, ['k1', 'bad-1', 'k2', 'k3'], ['e1', 'e2', 'e3']), keyEventIds: [['e1'], ['e2'], ['e1', 'e3'], ['e3']] });
    const banned = await scriptedNode().sender.sendAll([coalesced('a.test')], 'main');
    expect(outcomes(banned, 'a.test')).toEqual({ e1: { invalidated: 3, via: 'split' }, e2: { invalidated: 0, via: 'host-ban' }, e3: { invalidated: 2, via: 'split' } });
    const refused = await scriptedNode().sender.sendAll([coalesced('refusing.test')], 'main');
    expect(outcomes(refused, 'refusing.test')).toEqual({
      e1: { invalidated: 3, via: 'split' },
      e2: { invalidated: 0, error: 'BAN to n1 answered 400: 400 Bad ban (no smaller or wider form left to send)' },
      e3: { invalidated: 2, via: 'split' },
    });
  });

  it('marks the events failed when the site ban is refused too, sends nothing twice, and retries only a transient failure', async () => {
    const node = scriptedNode();
    const sent = await node.sender.sendAll([keys('refusing.test', ['bad-1', 'k1'], ['e1']), keys('refusing.test', ['flaky'], ['e2'])], 'main');
    expect(outcomes(sent, 'refusing.test')).toEqual({
      e1: { invalidated: 1, via: 'split', error: 'BAN to n1 answered 400: 400 Bad ban (no smaller or wider form left to send)' },
      e2: { invalidated: 1 },
    });
    const shapes = node.sent.map((q) => JSON.stringify(q));
    // the transient one twice, every refused shape once
    expect(shapes.filter((s) => s.includes('flaky'))).toHaveLength(2);
    const refusedShapes = shapes.filter((s) => !s.includes('flaky'));
    expect(new Set(refusedShapes).size).toBe(refusedShapes.length);
    expect(await node.reshaped('failed')).toBe(1);
    expect((await node.metrics.invalidationsSent.get()).values.find((v) => v.labels.outcome === 'refused' && v.labels.kind === 'ban')?.value).toBe(1);
  });
});
