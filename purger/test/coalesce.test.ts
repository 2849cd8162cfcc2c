import { describe, expect, it } from 'vitest';
import { coalesce, type Invalidation } from '../src/delivery/coalesce.js';
import { escapeRegex, packPrefixRegexes } from '../src/delivery/ban-expression.js';
import type { StoredEvent } from '../src/model/event-model.js';
import { requestFor } from '../src/delivery/varnish-client.js';

const prefixRegex = (p: string): string => packPrefixRegexes([p], 7168)[0]!;
const ev = (id: string, e: Partial<StoredEvent>): StoredEvent => ({
  id, site: 'example.com', kind: 'urls', soft: false, reason: '', time: '2026-11-22T00:00:00Z', acceptedAt: 0, ...e,
});
const opts = { headerBudget: 7168, urlEscalateThreshold: 2000, urlBanMin: 16 };

describe('ban-expression', () => {
  it('escapes every regex metacharacter and anchors', () => {
    expect(prefixRegex('/a.b/(x)+[y]{2}|z?*^$\\')).toBe('^/a\\.b/\\(x\\)\\+\\[y\\]\\{2\\}\\|z\\?\\*\\^\\$\\\\');
    const re = new RegExp(prefixRegex('/a.b/'));
    expect(re.test('/a.b/c')).toBe(true);
    expect(re.test('/aXb/c')).toBe(false);
    expect(re.test('/x/a.b/')).toBe(false);
  });

  it('refuses anything that could add a clause to a ban expression', () => {
    expect(() => prefixRegex('/a && obj.http.x-host ~ .')).toThrow(/space/);
    expect(() => prefixRegex('/"')).toThrow();
  });

  it('packs prefixes into anchored alternations within the budget', () => {
    const prefixes = Array.from({ length: 300 }, (_, i) => `/category/news-${i}/`);
    const out = packPrefixRegexes(prefixes, 1000);
    expect(out.length).toBeGreaterThan(1);
    for (const r of out) expect(r.length).toBeLessThanOrEqual(1000 + 8);
    const res = out.map((r) => new RegExp(r));
    for (const p of prefixes) expect(res.some((r) => r.test(`${p}page/2/`))).toBe(true);
    expect(res.some((r) => r.test('/category/news-300/'))).toBe(false);
    expect(escapeRegex('news-1')).toBe('news-1');
  });
});

describe('coalesce', () => {
  it('dedupes URLs across events and keeps hard over soft', () => {
    const plan = coalesce([
      ev('a', { paths: ['/x/', '/y/'] }),
      ev('b', { paths: ['/x/'], soft: true }),
      ev('c', { paths: ['/z/'], soft: true }),
    ], opts);
    const purges = plan.requests.filter((r) => r.kind === 'purge');
    expect(purges).toEqual([
      { kind: 'purge', site: 'example.com', soft: false, path: '/x/', eventIds: ['a', 'b'] },
      { kind: 'purge', site: 'example.com', soft: false, path: '/y/', eventIds: ['a'] },
      { kind: 'purge', site: 'example.com', soft: true, path: '/z/', eventIds: ['c'] },
    ]);
  });

  it('packs 1,000 tag events into a handful of PURGEKEYS under the header budget', () => {
    const events = Array.from({ length: 1000 }, (_, i) => ev(`e${i}`, { kind: 'tags', tags: [`wp1-p-${i}`, 'wp1-l-home'] }));
    const plan = coalesce(events, opts);
    expect(plan.requests.every((r) => r.kind === 'purgekeys')).toBe(true);
    expect(plan.requests.length).toBeLessThanOrEqual(3);
    const keys = plan.requests.flatMap((r) => (r.kind === 'purgekeys' ? r.keys : []));
    expect(new Set(keys).size).toBe(1001);
    expect(keys.length).toBe(1001);
    for (const r of plan.requests) {
      const { headers } = requestFor(r);
      expect(headers['xkey-purge']!.length).toBeLessThanOrEqual(opts.headerBudget);
    }
    expect(new Set(plan.requests.flatMap((r) => r.eventIds)).size).toBe(1000);
  });

  it('packs a burst of plain URLs into a few exact-match bans; URLs with a query stay PURGEs', () => {
    const events = Array.from({ length: 1000 }, (_, i) => ev(`u${i}`, { paths: [`/post-${i}/`] }));
    events.push(ev('q', { paths: ['/search/?s=a'] }));
    const plan = coalesce(events, opts);
    const bans = plan.requests.filter((r): r is Extract<Invalidation, { kind: 'ban' }> => r.kind === 'ban');
    expect(bans.length).toBeGreaterThan(0);
    expect(bans.length).toBeLessThanOrEqual(4);
    expect(plan.requests.filter((r) => r.kind === 'purge')).toEqual([{ kind: 'purge', site: 'example.com', soft: false, path: '/search/?s=a', eventIds: ['q'] }]);
    expect(plan.escalations).toEqual([]);
    const res = bans.map((b) => new RegExp(b.banUrl!));
    for (let i = 0; i < 1000; i++) expect(res.filter((r) => r.test(`/post-${i}/`))).toHaveLength(1);
    expect(res.some((r) => r.test('/post-1/amp/') || r.test('/post-1000/') || r.test('/x/post-1/'))).toBe(false);
    for (const b of bans) expect(b.banUrl!.length).toBeLessThanOrEqual(opts.headerBudget);
    expect(new Set(bans.flatMap((b) => b.eventIds)).size).toBe(1000);
  });

  it('never packs a URL containing " into a ban (X-Ban-Url cannot carry it)', () => {
    const events = Array.from({ length: 30 }, (_, i) => ev(`u${i}`, { paths: [`/p-${i}/`] }));
    events.push(ev('quote', { paths: ['/say-"hi"/'] }));
    const plan = coalesce(events, opts);
    expect(plan.requests.filter((r) => r.kind === 'purge')).toEqual([{ kind: 'purge', site: 'example.com', soft: false, path: '/say-"hi"/', eventIds: ['quote'] }]);
    expect(plan.requests.filter((r) => r.kind === 'ban')).toHaveLength(1);
  });

  it('sends a few URLs as PURGE requests', () => {
    const plan = coalesce(Array.from({ length: 15 }, (_, i) => ev(`u${i}`, { paths: [`/p-${i}/`] })), opts);
    expect(plan.requests).toHaveLength(15);
    expect(plan.requests.every((r) => r.kind === 'purge')).toBe(true);
  });

  it('escalates a URL burst past the threshold to one site-wide ban and says so', () => {
    const events = Array.from({ length: 1000 }, (_, i) => ev(`u${i}`, { paths: [`/post-${i}/`] }));
    const plan = coalesce(events, { ...opts, urlEscalateThreshold: 999 });
    expect(plan.requests).toHaveLength(1);
    expect(plan.requests[0]).toMatchObject({ kind: 'ban', site: 'example.com' });
    expect((plan.requests[0] as Extract<Invalidation, { kind: 'ban' }>).banUrl).toBeUndefined();
    expect(plan.requests[0]!.eventIds).toHaveLength(1000);
    expect(plan.escalations).toEqual([{ site: 'example.com', reason: 'url-burst', urls: 1000 }]);
  });

  it('lets "all" cover URLs and prefixes of the site but still sends tags', () => {
    const plan = coalesce([
      ev('a', { paths: ['/x/'] }),
      ev('b', { kind: 'prefix', paths: ['/news/'] }),
      ev('c', { kind: 'all' }),
      ev('d', { kind: 'tags', tags: ['k1'] }),
      ev('e', { site: 'other.test', paths: ['/x/'] }),
    ], opts);
    expect(plan.requests).toEqual([
      { kind: 'ban', site: 'example.com', eventIds: ['c', 'a', 'b'] },
      { kind: 'purgekeys', site: 'example.com', soft: false, keys: ['k1'], eventIds: ['d'], keyEventIds: [['d']] },
      { kind: 'purge', site: 'other.test', soft: false, path: '/x/', eventIds: ['e'] },
    ]);
  });

  it('turns prefixes into escaped, anchored X-Ban-Url values', () => {
    const plan = coalesce([ev('p', { kind: 'prefix', paths: ['/a.b/', '/c/'] })], opts);
    expect(plan.requests).toEqual([{ kind: 'ban', site: 'example.com', banUrl: '^(?:/a\\.b/|/c/)', eventIds: ['p'] }]);
    expect(requestFor(plan.requests[0]!)).toEqual({
      method: 'BAN', path: '/', headers: { host: 'example.com', 'x-ban-host': 'example.com', 'x-ban-url': '^(?:/a\\.b/|/c/)' },
    });
  });
});
