// VARNISH_DNS through the system resolver (getaddrinfo, so /etc/hosts here; Docker's embedded
// DNS under compose): the worker finds the node behind the name and really purges it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { until } from '../../testkit/wait.mjs';
import { SITE, Stack, urlEvent, postEvents } from './support/stack.js';
import { appliedEverywhere, warm } from './helpers.js';

let stack: Stack;

beforeAll(async () => {
  stack = await Stack.start({ nodes: 1 });
});

afterAll(async () => {
  await stack.close();
});

it('finds the Varnish node behind a DNS name (no static list) and purges it', async () => {
  const [varnish] = stack.varnishes;
  const port = varnish!.node.split(':').pop();
  const svc = await stack.service({ VARNISH_NODES: '', VARNISH_DNS: `localhost:${port}`, PURGER_DNS_INTERVAL_MS: '200' });
  await until('worker found the node through DNS', () => svc.worker!.nodeCount === 1);

  await warm(stack, ['/dns/', '/dns-untouched/']);
  stack.origin.edit('/dns/');
  expect((await varnish!.get(SITE, '/dns/')).body).toBe('/dns/ v1\n');
  const e = urlEvent(['/dns/']);
  expect((await postEvents(svc.url, { site: SITE, events: [e] })).status).toBe(202);
  const nodes = await appliedEverywhere(svc, e.id, 1);
  expect(nodes.map((n) => n.node)).toEqual([`127.0.0.1:${port}`]);
  expect(await varnish!.get(SITE, '/dns/')).toMatchObject({ body: '/dns/ v2\n', cache: 'MISS' });
  expect((await varnish!.get(SITE, '/dns-untouched/')).cache).toBe('HIT');
});
