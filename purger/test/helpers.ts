import { expect } from 'vitest';
import { waitFor, type VarnishServer } from './support/processes.js';
import { READ_AUTH, SITE, type Stack } from './support/stack.js';
import type { Service } from '../src/service.js';

/**
 * Fetches each page through every node until it is a cache HIT. The VCL does not keep a page
 * whose fetch began before an invalidation arrived (the purger's repeats of earlier events
 * included), so while invalidations are flowing it may take more than one fetch.
 */
export async function warm(stack: Stack, paths: string[], nodes: VarnishServer[] = stack.varnishes): Promise<void> {
  for (const v of nodes) {
    for (const p of paths) {
      await waitFor(`${p} cached on ${v.node}`, async () => {
        await v.get(SITE, p);
        return (await v.get(SITE, p)).cache === 'HIT';
      }, 10_000, 20);
    }
  }
}

/**
 * The page was not served from the cache: fetched from the origin (MISS) or, when one of the
 * purger's repeats of the invalidation landed during that fetch, fetched and not kept (PASS: the
 * VCL keeps no page whose fetch began before an invalidation).
 */
export async function expectNotCached(v: VarnishServer, path: string): Promise<void> {
  expect(['MISS', 'PASS'], `${path} on ${v.node}`).toContain((await v.get(SITE, path)).cache);
}

export interface NodeReceipt {
  node: string;
  state: string;
  invalidated?: number;
}

export async function receipt(svc: Service, id: string): Promise<{ nodes: NodeReceipt[] }> {
  const r = await svc.app.inject({ method: 'GET', url: `/v1/events/${id}`, headers: READ_AUTH });
  expect(r.statusCode).toBe(200);
  return r.json();
}

/** Waits until the event is applied on `count` nodes (all stack nodes by default). */
export async function appliedEverywhere(svc: Service, id: string, count: number, timeoutMs = 20_000): Promise<NodeReceipt[]> {
  return waitFor(`event ${id} applied on ${count} nodes`, async () => {
    const r = await receipt(svc, id);
    const applied = r.nodes.filter((n) => n.state === 'applied');
    return applied.length >= count ? r.nodes : undefined;
  }, timeoutMs);
}

/** Sum of a counter in the service's registry, filtered by labels. */
export async function counter(svc: Service, name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = await svc.metrics.registry.getSingleMetric(name)?.get();
  if (!m) return 0;
  return m.values
    .filter((v) => Object.entries(labels).every(([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want))
    .reduce((a, v) => a + v.value, 0);
}
