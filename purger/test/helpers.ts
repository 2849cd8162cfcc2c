import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Varnish } from '../../testkit/varnish.mjs';
import { until } from '../../testkit/wait.mjs';
import { READ_AUTH, SITE, Stack, type StackOptions } from './support/stack.js';
import type { Service } from '../src/service.js';

/**
 * Fetches each page through every node until it is a cache HIT. The VCL does not keep a page
 * whose fetch began before an invalidation arrived (the purger's repurges of earlier events
 * included), so while invalidations are flowing it may take more than one fetch.
 */
export async function warm(stack: Stack, paths: string[], nodes: Varnish[] = stack.varnishes): Promise<void> {
  for (const v of nodes) {
    for (const p of paths) {
      await until(`${p} cached on ${v.node}`, async () => {
        await v.get(SITE, p);
        return (await v.get(SITE, p)).cache === 'HIT';
      }, 10_000, 20);
    }
  }
}

/**
 * The page was not served from the cache: the next request fetched it from the origin (MISS).
 * Where a test turns the purger's repurges on, a repurge can land while this very fetch runs;
 * the VCL then delivers it once without keeping it (PASS, and it says why). Nothing else passes.
 */
export async function expectNotCached(v: Varnish, path: string): Promise<void> {
  const r = await v.get(SITE, path);
  if (r.cache === 'PASS') expect(r.headers['x-cache-reason'], `${path} on ${v.node}: a PASS for another reason`).toBe('fetch began before an invalidation');
  else expect(r.cache, `${path} on ${v.node}`).toBe('MISS');
}

export interface NodeReceipt {
  node: string;
  state: string;
  invalidated?: number;
  via?: string;
  error?: string;
}

export async function receipt(svc: Service, id: string): Promise<{ nodes: NodeReceipt[] }> {
  const r = await svc.app.inject({ method: 'GET', url: `/v1/events/${id}`, headers: READ_AUTH });
  expect(r.statusCode).toBe(200);
  return r.json();
}

/** Waits until the event is applied on `count` nodes (all stack nodes by default). */
export async function appliedEverywhere(svc: Service, id: string, count: number, timeoutMs = 20_000): Promise<NodeReceipt[]> {
  return until(`event ${id} applied on ${count} nodes`, async () => {
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

/**
 * Starts a Stack and a Redis client on its store before the file's tests and closes both after
 * them; `use` hands them to the file.
 */
export function stackPerFile(opts: StackOptions, use: (stack: Stack, redis: Redis) => void): void {
  let stack: Stack | undefined;
  let redis: Redis | undefined;
  beforeAll(async () => {
    stack = await Stack.start(opts);
    redis = new Redis(stack.redis.url);
    use(stack, redis);
  });
  afterAll(async () => {
    // a test may have capped Redis's memory: lifted, the store shuts down cleanly
    await redis?.config('SET', 'maxmemory', '0').catch(() => undefined);
    redis?.disconnect();
    await stack?.close();
  });
}

/**
 * Starts a Stack and one purger service with `env` before the file's tests (once its worker knows
 * every node) and closes them after; `use` hands them to the file.
 */
export function servicePerFile(opts: StackOptions, env: Record<string, string>, use: (stack: Stack, svc: Service) => void): void {
  let stack: Stack | undefined;
  beforeAll(async () => {
    stack = await Stack.start(opts);
    const svc = await stack.service(env);
    const nodes = stack.varnishes.length;
    if (nodes > 0) await until(`worker knows ${nodes} node(s)`, () => svc.worker!.nodeCount === nodes);
    use(stack, svc);
  });
  afterAll(async () => {
    await stack?.close();
  });
}

/** Keys (`named` first, then fillers) whose space-separated list is exactly `bytes` long. */
export function keysFilling(bytes: number, named: string[]): string[] {
  const keys = [...named];
  let size = named.join(' ').length;
  for (let i = 0; size < bytes; i++) {
    const room = bytes - size - (keys.length > 0 ? 1 : 0);
    // (keys of 60 characters, the last one up to 80 long: what is left)
    const key = `p-fill-${i}-`.padEnd(room <= 80 ? room : 60, 'x');
    size += (keys.length > 0 ? 1 : 0) + key.length;
    keys.push(key);
  }
  expect(keys.join(' ')).toHaveLength(bytes);
  return keys;
}
