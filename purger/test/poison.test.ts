// No poison request: real varnishd nodes running the shipped VCL that refuse one shape of request
// each. One fails its VCL (Varnish's own "503 VCL failed") on a PURGEKEYS naming a marker key and
// on any ban of refusing.test; the other runs with http_req_hdr_len=1024, so a long key list gets
// Varnish's own 400. The purger splits, bans the site or gives up on that node, and goes on.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../testkit/process.mjs';
import { Varnish } from '../../testkit/varnish.mjs';
import { until } from '../../testkit/wait.mjs';
import { appliedEverywhere, counter, expectNotCached, keysFilling, receipt, warm } from './helpers.js';
import { SITE, Stack, postEvents, signedHeaders, tagEvent, urlEvent } from './support/stack.js';
import type { Service } from '../src/service.js';

const MARKER = 'p-poison-key';
const REFUSING = 'refusing.test';

// Placed before microcache.vcl (render-entry.sh --include): runs first in vcl_recv.
const POISON_VCL = `sub vcl_recv {
    if (req.method == "PURGEKEYS" && req.http.xkey-purge ~ "(^| )${MARKER}( |$)") {
        return (fail);
    }
    if (req.method == "BAN" && req.http.x-ban-host == "${REFUSING}") {
        return (fail);
    }
}
`;

let stack: Stack;
let svc: Service;
let failing: Varnish;
let short: Varnish;
let dir: string;

beforeAll(async () => {
  stack = await Stack.start({ nodes: 0 });
  dir = tempDir('poison-vcl');
  const include = join(dir, 'poison.vcl');
  writeFileSync(include, POISON_VCL);
  const backend = `127.0.0.1:${stack.origin.port}`;
  [failing, short] = await Promise.all([Varnish.start({ backend, includes: [include] }), Varnish.start({ backend, params: { http_req_hdr_len: '1024' } })]);
  stack.varnishes.push(failing, short);
  svc = await stack.service({ VARNISH_NODES: `${failing.node},${short.node}`, PURGER_SITES: `${SITE},${REFUSING}`, PURGER_REPURGE_DELAYS_MS: '0' });
  await until('worker knows both nodes', () => svc.worker!.nodeCount === 2);
});

afterAll(async () => {
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const reshaped = (node: Varnish, labels: Record<string, string> = {}) => counter(svc, 'varnish_edge_purger_reshaped_total', { node: node.node, ...labels });
const on = (nodes: { node: string; state: string; via?: string; error?: string }[], v: Varnish) => nodes.find((n) => n.node === v.node)!;

async function post(site: string, events: Record<string, unknown>[]): Promise<void> {
  expect((await postEvents(svc.url, { site, events })).status).toBe(202);
}

describe('a node whose VCL fails on one key', () => {
  it('splits the key away, bans the site for it, and applies the events after it; nothing stays cached', async () => {
    const pages = ['/poison-key/', '/poison-other/', '/after-poison/', '/bystander/'];
    await warm(stack, pages);
    const before = { split: await reshaped(failing, { how: 'split' }), hostBan: await reshaped(failing, { how: 'host-ban' }) };
    // a bulk action's keys, the marker among them
    const poison = tagEvent([...Array.from({ length: 20 }, (_, i) => `p-bulk-${i}`), MARKER, 'p-poison-other']);
    await post(SITE, [poison]);
    const after = [urlEvent(['/after-poison/']), tagEvent(['p-after-poison-key'])];
    await post(SITE, after);
    for (const e of [poison, ...after]) await appliedEverywhere(svc, e.id, 2, 30_000);

    const r = await receipt(svc, poison.id);
    expect(on(r.nodes, failing)).toMatchObject({ state: 'applied', via: 'host-ban' });
    expect(on(r.nodes, short).via).toBeUndefined();
    // (the events after it: in a batch of their own, or coalesced with it and split away from the key)
    for (const e of after) for (const n of (await receipt(svc, e.id)).nodes) expect(n.via, `${e.id} on ${n.node}`).not.toBe('host-ban');
    for (const v of stack.varnishes) for (const p of ['/poison-key/', '/poison-other/', '/after-poison/']) await expectNotCached(v, p);
    // the site ban took the rest of the site with it on that node only
    await expectNotCached(failing, '/bystander/');
    expect((await short.get(SITE, '/bystander/')).cache).toBe('HIT');

    expect(await reshaped(failing, { kind: 'purgekeys', how: 'split' })).toBeGreaterThan(before.split);
    expect(await reshaped(failing, { kind: 'purgekeys', how: 'host-ban' })).toBe(before.hostBan + 1);
    expect(await reshaped(short)).toBe(0);

    // POST /v1/receipts: the plugin's editor notice counts the nodes that applied it as a site ban
    const payload = JSON.stringify({ site: SITE, ids: [poison.id, ...after.map((e) => e.id)] });
    const summary = (await svc.app.inject({ method: 'POST', url: '/v1/receipts', headers: signedHeaders(payload), payload })).json();
    expect(summary).toMatchObject({ total: 2, live: 2, complete: true });
    expect(on(summary.nodes, failing)).toMatchObject({ state: 'applied', via: 'host-ban' });
    expect(on(summary.nodes, short).via).toBeUndefined();
    expect(on(summary.events[0].nodes, failing).via).toBe('host-ban');
  });
});

describe('a node that refuses a long header (http_req_hdr_len=1024: Varnish answers 400)', () => {
  it('gets the key list in halves until they fit; a node with the default limit takes the full header budget as sent', async () => {
    await warm(stack, ['/long-list/', '/long-list-bystander/']);
    const keys = keysFilling(7168, ['p-long-list']);
    const sent = () => counter(svc, 'purger_invalidations_sent_total', { node: failing.node, kind: 'purgekeys' });
    const refused = () => counter(svc, 'purger_invalidations_sent_total', { node: failing.node, kind: 'purgekeys', outcome: 'refused' });
    const [sentBefore, refusedBefore] = [await sent(), await refused()];
    const big = tagEvent(keys);
    await post(SITE, [big]);
    const after = tagEvent(['p-after-long-list']);
    await post(SITE, [after]);
    for (const e of [big, after]) await appliedEverywhere(svc, e.id, 2, 30_000);

    const r = await receipt(svc, big.id);
    expect(on(r.nodes, short)).toMatchObject({ state: 'applied', via: 'split' });
    expect(on(r.nodes, failing).via).toBeUndefined();
    // 7,168 bytes of keys → halves of ~3.6 KB, ~1.8 KB, then ~0.9 KB that fit: 1 + 2 + 4 splits
    expect(await reshaped(short, { kind: 'purgekeys', how: 'split' })).toBe(7);
    expect(await reshaped(short, { how: 'host-ban' })).toBe(0);
    // the full budget went to the other node as one request, accepted (with the event after it: at most one more)
    expect((await sent()) - sentBefore).toBeLessThanOrEqual(2);
    expect(await refused()).toBe(refusedBefore);
    for (const v of stack.varnishes) {
      await expectNotCached(v, '/long-list/');
      expect((await v.get(SITE, '/long-list-bystander/')).cache, v.node).toBe('HIT');
    }
  });
});

describe('a node that refuses the site ban too', () => {
  it('marks the event failed on that node only (counted as dead-lettered) and applies what follows', async () => {
    const deadBefore = await counter(svc, 'purger_events_dead_lettered_total', { node: failing.node, reason: 'refused' });
    const e = tagEvent([MARKER]);
    await post(REFUSING, [e]);
    const next = tagEvent(['p-refusing-next']);
    await post(REFUSING, [next]);
    await appliedEverywhere(svc, next.id, 2, 30_000);
    const r = await until('the event failed on one node', async () => {
      const nodes = (await receipt(svc, e.id)).nodes;
      return on(nodes, failing).state === 'failed' ? nodes : undefined;
    });
    expect(on(r, short).state).toBe('applied');
    expect(on(r, failing).error).toMatch(/^BAN to .* answered 503: 503 VCL failed \(no smaller or wider form left to send\)$/);
    expect(await counter(svc, 'purger_events_dead_lettered_total', { node: failing.node, reason: 'refused' })).toBe(deadBefore + 1);
    expect(await reshaped(failing, { kind: 'ban', how: 'failed' })).toBe(1);
  });
});
