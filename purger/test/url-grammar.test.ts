// The purger's URL grammar is testdata/url-grammar.json's, the file the plugin's Url_Grammar is
// tested against too, so the two sides cannot drift apart; and a refresh URL outside it (a menu
// link written http://user@host/) is dropped and logged, never the batch refused: the batch's
// invalidations are applied all the same.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookEvent } from '../src/http/schemas.js';
import { toStoredEvent, type DroppedRefresh } from '../src/model/event-model.js';
import { MAX_URL_LENGTH, parseSiteUrl, redactUrl } from '../src/model/normalize.js';
import { startService, type Service } from '../src/service.js';
import { freePort } from '../../testkit/ports.mjs';
import { REPO_ROOT } from '../../testkit/process.mjs';
import { appliedEverywhere, expectNotCached, warm } from './helpers.js';
import { postEvents, SITE, Stack, tagEvent, urlEvent } from './support/stack.js';

interface Vectors {
  maxLength: number;
  sites: Record<string, { valid: { url: string; normalized: string }[]; invalid: { url: string; why: string }[] }>;
}
const grammar = JSON.parse(readFileSync(join(REPO_ROOT, 'testdata/url-grammar.json'), 'utf8')) as Vectors;

/** The normalized form of a URL of the grammar: `http(s)://<site><path+query>`. */
function normalized(url: string, site: string): string | undefined {
  const u = parseSiteUrl(url, site);
  return 'message' in u ? undefined : `${u.https ? 'https' : 'http'}://${site}${u.path}`;
}

describe('the URL grammar is testdata/url-grammar.json', () => {
  it('declares the same length limit', () => {
    expect(MAX_URL_LENGTH).toBe(grammar.maxLength);
  });

  for (const [site, v] of Object.entries(grammar.sites)) {
    it(`accepts the valid URLs of ${site} in their normalized form, which it accepts as is`, () => {
      for (const { url, normalized: want } of v.valid) {
        expect(normalized(url, site), url).toBe(want);
        expect(normalized(want, site), want).toBe(want);
      }
    });

    it(`refuses the invalid URLs of ${site}`, () => {
      for (const { url, why } of v.invalid) expect(normalized(url, site), `${JSON.stringify(url)} (${why})`).toBeUndefined();
    });
  }

  it('takes a URL of maxLength characters, not one more', () => {
    const base = 'http://example.com/';
    const longest = base + 'a'.repeat(grammar.maxLength - base.length);
    expect(normalized(longest, 'example.com')).toBe(longest);
    expect(normalized(`${longest}a`, 'example.com')).toBeUndefined();
  });

  it('drops every invalid refresh URL of an event (reported, credentials redacted) and keeps its valid ones', () => {
    const site = 'example.com';
    const bad = grammar.sites[site]!.invalid.map((c) => c.url);
    const good = grammar.sites[site]!.valid.filter((c) => c.normalized.startsWith('http:')).map((c) => c.url);
    const refresh = [...bad, ...good].slice(0, 50);
    expect(refresh.length).toBeGreaterThan(bad.length);
    const event = { id: 'e1', kind: 'tags', tags: ['p-1'], refresh, time: '2026-11-22T10:00:00Z' };
    expect(Value.Check(WebhookEvent, event), 'the schema lets every refresh URL through to the grammar').toBe(true);
    const dropped: DroppedRefresh[] = [];
    const stored = toStoredEvent(event as never, site, 0, 'f', 0, undefined, (d) => dropped.push(d));
    expect(stored).toMatchObject({ kind: 'tags', tags: ['p-1'], refresh: [...new Set(good.map((u) => (parseSiteUrl(u, site) as { path: string }).path))] });
    expect(dropped.map((d) => d.field)).toEqual(bad.map((_, i) => `/events/0/refresh/${i}`));
    expect(JSON.stringify(dropped)).not.toContain('secret');
  });

  it('drops a refresh URL of the other scheme than the first valid one, not the event', () => {
    const dropped: DroppedRefresh[] = [];
    const stored = toStoredEvent({ kind: 'all', refresh: ['http://user@example.com/', 'https://example.com/a/', 'http://example.com/b/', 'https://example.com/c/'] }, 'example.com', 3, 'f', 0, undefined, (d) => dropped.push(d));
    expect(stored).toMatchObject({ kind: 'all', refresh: ['/a/', '/c/'], refreshHttps: true });
    expect(dropped).toEqual([
      { field: '/events/3/refresh/0', url: 'http://…@example.com/', why: 'URLs with credentials are not accepted' },
      { field: '/events/3/refresh/2', url: 'http://example.com/b/', why: 'refresh URLs of one event share one scheme: the first is https, this one is not' },
    ]);
  });

  it('redacts credentials and queries of a URL it logs, and caps it', () => {
    expect(redactUrl('http://user:secret@example.com/a/?token=secret#x')).toBe('http://…@example.com/a/?…');
    expect(redactUrl('http://example.com/a/#secret')).toBe('http://example.com/a/');
    expect(redactUrl(`http://example.com/${'a'.repeat(300)}`)).toHaveLength(201);
  });
});

describe('a batch with refresh URLs outside the grammar', () => {
  let stack: Stack;
  let svc: Service;
  let redis: Redis;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    stack = await Stack.start({ nodes: 1 });
    redis = new Redis(stack.redis.url);
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    svc = await startService(stack.config({ PURGER_PORT: String(await freePort()) }), logger, { defaultMetrics: false });
  });

  afterAll(async () => {
    await svc?.close();
    redis?.disconnect();
    await stack?.close();
  });

  it('is accepted (202), its invalidations applied, the bad URLs dropped and logged with the site and why, no secret', async () => {
    const url = (path: string): string => `http://${SITE}${path}`;
    await warm(stack, ['/grammar/a/', '/grammar/b/']);
    const bad = [`http://user:hunter2@${SITE}/grammar/about/`, `http://${SITE}:/grammar/about/`, `http://${SITE}:0080/grammar/about/`];
    const keys = tagEvent(['p-grammar']);
    const page = urlEvent(['/grammar/a/']);
    const last = urlEvent(['/grammar/b/'], { refresh: [url('/grammar/c/'), ...bad, url('/grammar/about/')] });
    const r = await postEvents(svc.url, { site: SITE, events: [keys, page, last] });
    expect(r.status, JSON.stringify(r.json)).toBe(202);
    expect(r.json.accepted).toEqual([keys.id, page.id, last.id]);

    for (const e of [keys, page, last]) await appliedEverywhere(svc, e.id, 1);
    await expectNotCached(stack.varnishes[0]!, '/grammar/a/');
    await expectNotCached(stack.varnishes[0]!, '/grammar/b/');

    const receipt = await redis.hgetall(`purger:evt:${SITE}/${last.id}`);
    expect(((await svc.log.entry(receipt.s!)) as unknown as { refresh: string[] }).refresh).toEqual(['/grammar/c/', '/grammar/about/']);

    const warn = lines.find((l) => l.msg === 'refresh URLs outside the URL grammar dropped; the events are stored without them');
    expect(warn, JSON.stringify(lines)).toMatchObject({ level: 40, site: SITE, count: 3 });
    expect((warn!.dropped as { field: string; why: string }[]).map((d) => [d.field, d.why])).toEqual([
      ['/events/2/refresh/1', 'URLs with credentials are not accepted'],
      ['/events/2/refresh/2', `"${SITE}:" is not a host[:port] (a port is 1-65535, without leading zeros)`],
      ['/events/2/refresh/3', `"${SITE}:0080" is not a host[:port] (a port is 1-65535, without leading zeros)`],
    ]);
    expect(JSON.stringify(lines)).not.toContain('hunter2');
  });
});
