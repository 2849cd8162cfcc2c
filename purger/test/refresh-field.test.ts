// The `refresh` field of an event (docs/protocol.md §1): the grammar of `urls`, stored with the
// event in the log, kept out of the receipt; a URL outside the grammar is dropped, not refused.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SITE, Stack, TEST_TOKEN, signedHeaders, tagEvent, urlEvent } from './support/stack.js';
import type { Service } from '../src/service.js';

let stack: Stack;
let svc: Service;
let redis: Redis;

beforeAll(async () => {
  stack = await Stack.start({ nodes: 0 });
  svc = await stack.service({ PURGER_ROLE: 'ingest' });
  redis = new Redis(stack.redis.url);
});

afterAll(async () => {
  redis.disconnect();
  await stack.close();
});

const url = (path: string): string => `http://${SITE}${path}`;

function post(events: unknown[]) {
  const payload = JSON.stringify({ site: SITE, events });
  return svc.app.inject({ method: 'POST', url: '/v1/events', headers: signedHeaders(payload), payload });
}

/** The event as the log holds it. */
async function stored(id: string): Promise<Record<string, unknown>> {
  const receipt = await redis.hgetall(`purger:evt:${SITE}/${id}`);
  const entry = await svc.log.entry(receipt.s!);
  return entry as unknown as Record<string, unknown>;
}

describe('the refresh field', () => {
  it('is stored with the event as paths, duplicates dropped, priority order kept, and not in the receipt', async () => {
    const e = urlEvent(['/post/'], { refresh: [url('/post/'), 'http://EXAMPLE.test/?s=x', url('/'), url('/post/')] });
    const r = await post([e]);
    expect(r.statusCode).toBe(202);
    expect((await stored(e.id)).refresh).toEqual(['/post/', '/?s=x', '/']);
    expect(await stored(e.id)).not.toHaveProperty('refreshHttps');
    const receipt = await redis.hgetall(`purger:evt:${SITE}/${e.id}`);
    expect(receipt.m).not.toContain('refresh');
  });

  it('remembers https URLs, so nodes fill the copy https readers get; one scheme per event, the others dropped', async () => {
    const e = tagEvent(['p-9'], { refresh: ['https://example.test/post/', 'https://example.test/'] });
    expect((await post([e])).statusCode).toBe(202);
    expect(await stored(e.id)).toMatchObject({ refresh: ['/post/', '/'], refreshHttps: true });
    const mixed = tagEvent(['p-10'], { refresh: ['https://example.test/a/', url('/b/')] });
    expect((await post([mixed])).statusCode).toBe(202);
    expect(await stored(mixed.id)).toMatchObject({ tags: ['p-10'], refresh: ['/a/'], refreshHttps: true });
  });

  it('is allowed on every kind, may be empty, and an event without it is stored without it', async () => {
    const events = [
      tagEvent(['p-1'], { refresh: [url('/a/')] }),
      { ...tagEvent([]), kind: 'prefix', tags: undefined, urls: [url('/category/')], refresh: [url('/category/')] },
      { ...tagEvent([]), kind: 'all', tags: undefined, refresh: [url('/')] },
      tagEvent(['p-2'], { refresh: [] }),
      tagEvent(['p-3']),
    ];
    expect((await post(events)).statusCode).toBe(202);
    expect((await stored(events[2]!.id)).refresh).toEqual(['/']);
    expect(await stored(events[3]!.id)).not.toHaveProperty('refresh');
    expect(await stored(events[4]!.id)).not.toHaveProperty('refresh');
  });

  it('drops, never refuses, a refresh URL that is off-site, not absolute, not printable ASCII, too long or empty', async () => {
    for (const bad of ['http://other.test/x/', '/relative/', 'ftp://example.test/x', url('/caf\u00e9/'), url(`/${'a'.repeat(2048)}`), '', 'http://user@example.test/x/']) {
      const events = [tagEvent(['p-1']), tagEvent(['p-2'], { refresh: [url('/ok/'), bad] })];
      const r = await post(events);
      expect(r.statusCode, bad).toBe(202);
      expect(r.json().accepted, bad).toEqual(events.map((e) => e.id));
      expect(await stored(events[1]!.id), bad).toMatchObject({ tags: ['p-2'], refresh: ['/ok/'] });
    }
  });

  it('answers 400 for more than 50 URLs or a list that is not one', async () => {
    const many = Array.from({ length: 51 }, (_, i) => url(`/p-${i}/`));
    const r = await post([tagEvent(['p-1'], { refresh: many })]);
    expect(r.statusCode).toBe(400);
    expect(r.json()).toEqual({ error: 'invalid', field: '/events/0/refresh', message: 'too many refresh URLs: at most 50 per event, most important first' });
    expect((await post([tagEvent(['p-1'], { refresh: many.slice(0, 50) })])).statusCode).toBe(202);
    const notList = await post([tagEvent(['p-1'], { refresh: url('/a/') })]);
    expect(notList.statusCode).toBe(400);
    expect(notList.json().field).toBe('/events/0/refresh');
  });

  it('is taken by the operator route too, a URL of another host dropped', async () => {
    const payload = { site: SITE, events: [{ kind: 'all', refresh: [url('/'), 'http://elsewhere.test/'] }] };
    const ok = await svc.app.inject({ method: 'POST', url: '/v1/purge', headers: { authorization: `Bearer ${TEST_TOKEN}` }, payload });
    expect(ok.statusCode).toBe(202);
    expect((await stored(ok.json().accepted[0])).refresh).toEqual(['/']);
  });
});
