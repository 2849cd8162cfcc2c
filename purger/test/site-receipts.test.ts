// POST /v1/receipts: a site reads where its events stand on every node, with a secret allowed for
// that site, against real redis-server and varnishd (three nodes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../testkit/wait.mjs';
import { appliedEverywhere, counter } from './helpers.js';
import { READ_AUTH, SITE, Stack, TEST_SECRET, postEvents, signedHeaders, urlEvent } from './support/stack.js';
import type { Service } from '../src/service.js';

const OTHER_SECRET = 'whsec_cHVyZ2VyLXRlc3Qtc2VjcmV0LUItcm90YXRlZC05ODc2';

let stack: Stack;
let svc: Service;

beforeAll(async () => {
  stack = await Stack.start({ nodes: 3 });
  svc = await stack.service({
    PURGER_SITES: `${SITE},other.test`,
    PURGER_WEBHOOK_SECRETS: `${SITE}=${TEST_SECRET},other.test=${OTHER_SECRET}`,
    PURGER_TAG_PREFIXES: `${SITE}=wp1,other.test=wp2`,
  });
  await until('worker knows 3 nodes', () => svc.worker!.nodeCount === 3);
});

afterAll(async () => {
  await stack.close();
});

function receipts(body: unknown, opts: { secret?: string; headers?: Record<string, string> } = {}) {
  const payload = JSON.stringify(body);
  return svc.app.inject({ method: 'POST', url: '/v1/receipts', headers: { ...signedHeaders(payload, { secret: opts.secret }), ...opts.headers }, payload });
}

const received = () => counter(svc, 'purger_events_received_total');

describe('POST /v1/receipts authentication', () => {
  it('needs a signature by a secret allowed for the site; bearer tokens do not do; none of it counts as received events', async () => {
    const before = await received();
    const body = { site: SITE, ids: ['a'] };
    const payload = JSON.stringify(body);
    const unsigned = await svc.app.inject({ method: 'POST', url: '/v1/receipts', headers: { 'content-type': 'application/json', ...READ_AUTH }, payload });
    expect(unsigned.statusCode).toBe(401);
    expect(unsigned.json()).toEqual({ error: 'signature', message: 'missing webhook-id header' });
    const wrong = await receipts(body, { secret: 'whsec_d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldA==' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().message).toContain('no webhook-signature entry matches');
    const tampered = await svc.app.inject({ method: 'POST', url: '/v1/receipts', headers: signedHeaders(payload), payload: payload.replace('"a"', '"b"') });
    expect(tampered.statusCode).toBe(401);
    const otherSite = await receipts(body, { secret: OTHER_SECRET });
    expect(otherSite.statusCode).toBe(403);
    expect(otherSite.json()).toEqual({ error: 'forbidden_site', field: '/site', message: `the secret that signed this request is not allowed to read the receipts of site "${SITE}"` });
    expect((await receipts({ site: 'other.test', ids: ['a'] }, { secret: OTHER_SECRET })).statusCode).toBe(200);
    expect((await receipts(body)).statusCode).toBe(200);
    expect(await received()).toBe(before);
  });
});

describe('POST /v1/receipts body', () => {
  it('answers 400 naming the field for no ids, more than 100, a bad id, an unknown field or a bad site', async () => {
    const cases: [unknown, string, RegExp][] = [
      [{ site: SITE, ids: [] }, '/ids', /at least 1/],
      [{ site: SITE, ids: Array.from({ length: 101 }, (_, i) => `id-${i}`) }, '/ids', /at most 100/],
      [{ site: SITE, ids: ['ok', 'not ok'] }, '/ids/1', /must match/],
      [{ site: SITE, ids: ['a'], extra: 1 }, '/extra', /unknown field/],
      [{ ids: ['a'] }, '/site', /missing required field "site"/],
      [{ site: 'Example.test', ids: ['a'] }, '/site', /normalized host/],
    ];
    for (const [body, field, message] of cases) {
      const r = await receipts(body);
      expect(r.statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(r.json()).toMatchObject({ error: 'invalid', field, message: expect.stringMatching(message) });
    }
    expect((await receipts({ site: SITE, ids: Array.from({ length: 100 }, (_, i) => `id-${i}`) })).statusCode).toBe(200);
  });
});

describe('POST /v1/receipts answer', () => {
  it('lists unknown ids as missing: not complete, every node pending', async () => {
    const r = await receipts({ site: SITE, ids: ['never-sent-1', 'never-sent-2', 'never-sent-1'] });
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body).toMatchObject({ site: SITE, total: 3, live: 0, complete: false, missing: ['never-sent-1', 'never-sent-2'], events: [] });
    expect(body.nodes.map((n: { state: string }) => n.state)).toEqual(['pending', 'pending', 'pending']);
    expect(body).not.toHaveProperty('ms');
  });

  it('is complete once every node applied every event: live on 3 of 3, in ms from the earliest change to the last node', async () => {
    const changed = Date.now();
    const first = urlEvent(['/live-1/'], { time: new Date(changed - 40).toISOString() });
    const second = urlEvent(['/live-2/'], { time: new Date(changed).toISOString() });
    expect((await postEvents(svc.url, { site: SITE, events: [first, second] })).status).toBe(202);
    for (const e of [first, second]) await appliedEverywhere(svc, e.id, 3);

    const r = await receipts({ site: SITE, ids: [second.id, first.id, 'unknown-id'] });
    expect(r.json()).toMatchObject({ total: 3, live: 3, complete: false, missing: ['unknown-id'] });
    const body = (await receipts({ site: SITE, ids: [second.id, first.id] })).json();
    expect(body).toMatchObject({ site: SITE, total: 3, live: 3, complete: true, missing: [], changedAt: first.time });
    const ats = body.nodes.map((n: { at: string }) => Date.parse(n.at));
    expect(body.nodes.map((n: { state: string }) => n.state)).toEqual(['applied', 'applied', 'applied']);
    expect(Date.parse(body.liveAt)).toBe(Math.max(...ats));
    expect(body.ms).toBe(Date.parse(body.liveAt) - Date.parse(first.time));
    expect(body.ms).toBeGreaterThanOrEqual(0);
    // each event's receipt is the one GET /v1/events/:id gives
    for (const [i, id] of [second.id, first.id].entries()) {
      const one = await svc.app.inject({ method: 'GET', url: `/v1/events/${id}?site=${SITE}`, headers: READ_AUTH });
      expect(body.events[i]).toEqual(one.json());
    }
  });

  it('names a node that has not applied it yet and a node that is down with its error', async () => {
    const [, slow, down] = stack.varnishes;
    await down!.stop();
    slow!.pause();
    try {
      const e = urlEvent(['/partial/']);
      expect((await postEvents(svc.url, { site: SITE, events: [e] })).status).toBe(202);
      const body = await until('applied on the running node; the stopped one marked down', async () => {
        const b = (await receipts({ site: SITE, ids: [e.id] })).json();
        const d = b.nodes.find((n: { node: string }) => n.node === down!.node);
        return b.live === 1 && d?.error ? b : undefined;
      });
      expect(body).toMatchObject({ total: 3, live: 1, complete: false, missing: [] });
      expect(body).not.toHaveProperty('ms');
      expect(body).not.toHaveProperty('liveAt');
      const byNode = Object.fromEntries(body.nodes.map((n: { node: string }) => [n.node, n]));
      expect(byNode[stack.varnishes[0]!.node]).toMatchObject({ state: 'applied', at: expect.any(String) });
      expect(byNode[slow!.node]).toMatchObject({ state: 'pending' });
      expect(byNode[down!.node]).toMatchObject({ state: 'pending', error: expect.stringContaining('ECONNREFUSED'), detail: expect.stringMatching(/^node failing since .*; retrying$/) });
    } finally {
      slow!.resume();
    }
  });
});
