// The worst case of issue 12: a purge that lands while a fetch of the old page is in flight.
// Two defences: the VCL does not keep a page whose fetch began before the purge (proven alone by
// vcl/tests/fetch-begun-before-a-purge-is-not-kept.vtc), and the purger repeats the purge after
// 300 ms for a Varnish that would. Either way the page is fresh long before the late (here 10 s)
// repeat.
// Real varnishd, real purger, an origin whose racing fetch is slow (read before the edit,
// answered after the purge).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './support/processes.js';
import { SITE, Stack, postEvents, urlEvent } from './support/stack.js';
import type { Service } from '../src/service.js';
import { appliedEverywhere } from './helpers.js';

let stack: Stack;
let svc: Service;

beforeAll(async () => {
  stack = await Stack.start({ nodes: 1 });
  svc = await stack.service({ PURGER_REPURGE_DELAYS_MS: '300,10000' });
  await waitFor('node known', () => svc.worker!.nodeCount === 1);
});

afterAll(async () => {
  await stack.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a purge that races a fetch in flight', () => {
  it('the page is fresh within the first repeat, long before the late one', async () => {
    const varnish = stack.varnishes[0]!;
    const results: { purgedDuringFetch: boolean; oldPageKept: boolean; freshMs: number }[] = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      const path = `/race-${attempt}/`;
      // 1. A visitor's request misses; the origin reads v1 now and answers 200 ms later.
      stack.origin.slowOnce(path, 200);
      let fetchDone = false;
      const inflight = varnish.get(SITE, path).then((r) => {
        fetchDone = true;
        return r;
      });
      await waitFor('origin got the request', () => stack.origin.hits.get(path) === 1, 5000, 2);
      // 2. The editor saves; the purge reaches Varnish while that fetch is still running.
      stack.origin.edit(path);
      const edited = Date.now();
      const e = urlEvent([path]);
      expect((await postEvents(svc.url, { site: SITE, events: [e] })).status).toBe(202);
      await appliedEverywhere(svc, e.id, 1, 5000);
      const purgedDuringFetch = !fetchDone;
      // 3. The fetch lands after the purge with the old page (its visitor asked before the edit).
      expect((await inflight).body).toBe(`${path} v1\n`);
      const after = await varnish.get(SITE, path);
      const oldPageKept = purgedDuringFetch && after.body === `${path} v1\n` && after.cache === 'HIT';
      // 4. Poll as a visitor would: when does a request get the edited page?
      let freshMs = -1;
      await waitFor('fresh page', async () => {
        const started = Date.now();
        if ((await varnish.get(SITE, path)).body !== `${path} v2\n`) return false;
        freshMs = started - edited;
        return true;
      }, 5000, 20);
      results.push({ purgedDuringFetch, oldPageKept, freshMs });
      await sleep(100);
    }
    console.log(`purge racing an in-flight fetch, time to fresh (edit → first request served the edit): ${JSON.stringify(results)}`);
    // The race really happened at least once (the purge landed while the fetch ran)…
    expect(results.some((r) => r.purgedDuringFetch)).toBe(true);
    // …and every time the page was fresh long before the 10 s repeat (the old single repeat
    // came after 2 s); the < 500 ms figure on an idle machine is `npm run bench`'s race phase.
    for (const r of results) expect(r.freshMs).toBeLessThan(1500);
  });
});
