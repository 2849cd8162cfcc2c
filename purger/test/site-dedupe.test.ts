// Deduplication is per site: site B's webhook id or event id that site A used
// first is still stored and applied; a replay within one site is still a duplicate. Receipts
// are looked up per site. Real redis-server and varnishd.
import { expect, it } from 'vitest';
import type { Service } from '../src/service.js';
import { until } from '../../testkit/wait.mjs';
import { READ_AUTH, type Stack, postEvents } from './support/stack.js';
import { servicePerFile } from './helpers.js';

const SECRET_A = `whsec_${Buffer.from('site-a-secret-0123456789abcdef').toString('base64')}`;
const SECRET_B = `whsec_${Buffer.from('site-b-secret-0123456789abcdef').toString('base64')}`;

let stack: Stack;
let svc: Service;
servicePerFile({ nodes: 1 }, {
  PURGER_SITES: 'a.test,b.test',
  PURGER_WEBHOOK_SECRETS: `a.test=${SECRET_A},b.test=${SECRET_B}`,
  PURGER_TAG_PREFIXES: 'a.test=a,b.test=b',
  PURGER_REPURGE_DELAYS_MS: '0',
}, (s, v) => ([stack, svc] = [s, v]));

const event = (site: string) => ({ id: 'evt-same-id', kind: 'urls', urls: [`http://${site}/same/`], soft: false, reason: `edit on ${site}`, time: new Date().toISOString() });

async function cached(site: string): Promise<void> {
  const v = stack.varnishes[0]!;
  await until(`${site} cached`, async () => {
    await v.get(site, '/same/');
    return (await v.get(site, '/same/')).cache === 'HIT';
  }, 10_000, 20);
}

it('two sites with their own secrets may use the same webhook id and event id: both stored and applied; a replay within a site is a duplicate', async () => {
  const v = stack.varnishes[0]!;
  await cached('a.test');
  await cached('b.test');
  const a = await postEvents(svc.url, { site: 'a.test', events: [event('a.test')] }, { id: 'msg_same_id', secret: SECRET_A });
  expect(a).toMatchObject({ status: 202, json: { accepted: ['evt-same-id'], duplicates: [] } });
  const b = await postEvents(svc.url, { site: 'b.test', events: [event('b.test')] }, { id: 'msg_same_id', secret: SECRET_B });
  expect(b).toMatchObject({ status: 202, json: { accepted: ['evt-same-id'], duplicates: [] } });
  for (const site of ['a.test', 'b.test']) {
    await until(`${site} purged`, async () => (await v.get(site, '/same/')).cache !== 'HIT', 15_000);
  }
  // a retry of A's webhook, and A's event id under a new webhook id: duplicates
  const replay = await postEvents(svc.url, { site: 'a.test', events: [event('a.test')] }, { id: 'msg_same_id', secret: SECRET_A });
  expect(replay).toMatchObject({ status: 202, json: { accepted: [], duplicates: ['evt-same-id'] } });
  const again = await postEvents(svc.url, { site: 'a.test', events: [event('a.test')] }, { id: 'msg_other', secret: SECRET_A });
  expect(again).toMatchObject({ status: 202, json: { accepted: [], duplicates: ['evt-same-id'] } });
  // receipts, per site
  for (const site of ['a.test', 'b.test']) {
    const r = await until(`${site} receipt applied`, async () => {
      const res = await svc.app.inject({ method: 'GET', url: `/v1/events/evt-same-id?site=${site}`, headers: READ_AUTH });
      return res.statusCode === 200 && res.json().nodes[0]?.state === 'applied' ? res.json() : undefined;
    }, 15_000);
    expect(r).toMatchObject({ id: 'evt-same-id', site, reason: `edit on ${site}` });
  }
  const ambiguous = await svc.app.inject({ method: 'GET', url: '/v1/events/evt-same-id', headers: READ_AUTH });
  expect(ambiguous.statusCode).toBe(409);
  expect(ambiguous.json()).toMatchObject({ error: 'ambiguous', message: expect.stringContaining('a.test, b.test') });
});

it('without ?site= a receipt is found when one site has that id', async () => {
  const e = { ...event('b.test'), id: 'evt-only-b' };
  expect((await postEvents(svc.url, { site: 'b.test', events: [e] }, { secret: SECRET_B })).status).toBe(202);
  const r = await svc.app.inject({ method: 'GET', url: '/v1/events/evt-only-b', headers: READ_AUTH });
  expect(r.statusCode).toBe(200);
  expect(r.json().site).toBe('b.test');
  expect((await svc.app.inject({ method: 'GET', url: '/v1/events/evt-only-b?site=a.test', headers: READ_AUTH })).statusCode).toBe(404);
});
