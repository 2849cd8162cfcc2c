// An invalidation that lands while a fetch of the old page is in flight, with the purger's
// repurges off: the VCL alone must not keep a page whose fetch began before the invalidation of
// its host (PURGE for a URL event, PURGEKEYS with X-Purge-Host for a tag event). The visitor
// who asked before the edit gets the old page; the next request fetches the edited one.
// Real varnishd, real purger, an origin whose racing fetch is slow (read before the edit,
// answered after the invalidation).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../testkit/wait.mjs';
import { SITE, Stack, postEvents, tagEvent, urlEvent } from './support/stack.js';
import type { Service } from '../src/service.js';
import { appliedEverywhere } from './helpers.js';

let stack: Stack;
let svc: Service;

beforeAll(async () => {
  stack = await Stack.start({ nodes: 1 });
  svc = await stack.service({ PURGER_REPURGE_DELAYS_MS: '0' });
  await until('node known', () => svc.worker!.nodeCount === 1);
});

afterAll(async () => {
  await stack.close();
});

describe('an invalidation that races a fetch in flight, without repurges', () => {
  for (const kind of ['url', 'tag'] as const) {
    it(`a page fetched during a ${kind} invalidation is not kept: the next request gets the edit`, async () => {
      const varnish = stack.varnishes[0]!;
      let raced = 0;
      for (let attempt = 0; attempt < 4; attempt++) {
        const path = `/race-${kind}-${attempt}/`;
        // 1. A visitor's request misses; the origin reads v1 now and answers 500 ms later.
        stack.origin.slowOnce(path, 500);
        let fetchDone = false;
        const inflight = varnish.get(SITE, path).then((r) => {
          fetchDone = true;
          return r;
        });
        await until('origin got the request', () => stack.origin.hits.get(path) === 1, 5000, 2);
        // 2. The editor saves; the invalidation reaches Varnish while that fetch is still running.
        stack.origin.edit(path);
        const e = kind === 'url' ? urlEvent([path]) : tagEvent([`p-race-${kind}-${attempt}`]);
        expect((await postEvents(svc.url, { site: SITE, events: [e] })).status).toBe(202);
        await appliedEverywhere(svc, e.id, 1, 5000);
        const purgedDuringFetch = !fetchDone;
        // 3. The fetch lands with the old page, served to the visitor who asked before the edit…
        const first = await inflight;
        expect(first.body).toBe(`${path} v1\n`);
        if (purgedDuringFetch) {
          raced++;
          // …and not kept.
          expect(first.cache).toBe('PASS');
          expect(first.headers['x-cache-reason']).toBe('fetch began before an invalidation');
        }
        // 4. No repurge will come: the very next request must fetch the edited page, which is kept.
        expect(await varnish.get(SITE, path)).toMatchObject({ body: `${path} v2\n`, cache: 'MISS' });
        expect(await varnish.get(SITE, path)).toMatchObject({ body: `${path} v2\n`, cache: 'HIT' });
      }
      // The race really happened (the invalidation landed while the fetch ran).
      expect(raced).toBeGreaterThan(0);
    });
  }
});
