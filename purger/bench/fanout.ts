// Fan-out phase of `npm run bench`: one purger process (as `npm start`) and N real varnishd nodes
// (small malloc storage each). Measures a 1,000-event burst (time from the first POST to the
// event applied on the last node, per node too, and requests per node), the sustained rate
// (accepted → applied on every node), accept→applied p50/p99 at a paced 500 events/s, and the
// same burst with one node stopped (SIGSTOP): the time to the other nodes.
import { loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { eventMix, type TestEvent } from '../../testkit/events.mjs';
import { freePort } from '../../testkit/ports.mjs';
import { until } from '../../testkit/wait.mjs';
import { PurgerStack, READ_AUTH, SITE, signedHeaders } from '../../testkit/purger-stack.mjs';
import { receiptTimes } from './receipt-times.js';
import { compareIds } from '../src/store/stream-log.js';

export interface FanoutResult {
  nodes: number;
  burst_1000: { to_last_node_ms: number; to_first_node_ms: number; per_node_ms: number[]; requests_per_node: number[] };
  burst_1000_one_node_stopped: { to_last_running_node_ms: number; running_nodes: number } | undefined;
  sustained: { seconds: number; events: number; applied_per_s: number };
  paced_500_per_s: { events: number; p50_ms: number; p99_ms: number; max_ms: number };
  loadavg_1m: { start: number; end: number };
}

const BATCH = 50;

function quantile(sorted: number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

const makeEvents = (n: number, tag: string): TestEvent[] => eventMix(SITE, n, `f-${tag}`);

export async function fanout(nodes: number, opts: { sustainedS: number; pacedS: number }): Promise<FanoutResult> {
  const load0 = loadavg()[0]!;
  const stack = await PurgerStack.start({ nodes, appendfsync: 'everysec', storageMb: 16 });
  const port = await freePort();
  const proc = stack.spawn({ PURGER_PORT: String(port), PURGER_LOG_LEVEL: 'warn', PURGER_TENANT_EVENTS_PER_S: '0', PURGER_TENANT_BYTES_PER_S: '0', PURGER_POLL_MS: '1000', PURGER_RETRY_BASE_MS: '200', PURGER_RETRY_MAX_MS: '5000', PURGER_NODE_TIMEOUT_MS: '5000' });
  const base = `http://127.0.0.1:${port}`;
  const pool = new Pool(base, { connections: 16 });
  const redis = new Redis(stack.redis.url);
  const post = async (events: unknown[]): Promise<void> => {
    const body = JSON.stringify({ site: SITE, events });
    const res = await pool.request({ method: 'POST', path: '/v1/events', headers: signedHeaders(body), body });
    await res.body.text();
    if (res.statusCode !== 202) throw new Error(`POST /v1/events answered ${res.statusCode}`);
  };
  const lastId = async (): Promise<string> => (await redis.xrevrange('purger:log', '+', '-', 'COUNT', 1))[0]![0];
  const applied = async (on = stack.varnishes, timeoutMs = 120_000): Promise<void> => {
    const last = await lastId();
    await until('nodes applied the whole log', async () => {
      const p = redis.pipeline();
      for (const v of on) p.hget(`purger:node:${v.node}`, 'cursor');
      const res = (await p.exec()) ?? [];
      return res.every(([, c]) => compareIds(String(c ?? '0-0'), last) >= 0);
    }, timeoutMs, 5);
  };
  /** per node, the latest applied time (ms) among these events' receipts; and per event, accepted→applied on all */
  const receipts = async (ids: string[]): Promise<{ perNodeLast: number[]; latencies: number[] }> => {
    const times = await receiptTimes(redis, SITE, ids, stack.varnishes.map((v) => v.node));
    const perNodeLast = stack.varnishes.map((_, n) => Math.max(0, ...times.map((e) => e.applied[n]!)));
    return { perNodeLast, latencies: times.map((e) => Math.max(...e.applied) - e.acceptedAt).sort((a, b) => a - b) };
  };
  const requestsPerNode = async (): Promise<number[]> => {
    const text = await (await fetch(`${base}/metrics`, { headers: READ_AUTH })).text();
    const out = new Map<string, number>();
    for (const m of text.matchAll(/^purger_invalidations_sent_total\{node="([^"]+)",kind="[^"]+",outcome="ok",lane="main"\} (\d+)/gm)) {
      out.set(m[1]!, (out.get(m[1]!) ?? 0) + Number(m[2]));
    }
    return stack.varnishes.map((v) => out.get(v.node) ?? 0);
  };
  const burst = async (): Promise<{ started: number; ids: string[] }> => {
    const events = makeEvents(1000, 'burst');
    const started = Date.now();
    await Promise.all([post(events.slice(0, 500)), post(events.slice(500))]);
    return { started, ids: events.map((e) => e.id) };
  };
  const quiet = (): Promise<void> => new Promise((r) => setTimeout(r, 2500)); // the repurges of the previous phase pass

  try {
    await until('purger ready', async () => (await fetch(`${base}/readyz`)).status === 200, 30_000);
    for (const v of stack.varnishes) for (let i = 0; i < 50; i++) await v.get(SITE, `/post-${i}/`);
    await post(makeEvents(BATCH, 'warmup'));
    await applied();
    await quiet();

    // 1. The 1,000-event burst.
    const req0 = await requestsPerNode();
    const b = await burst();
    await applied();
    const req1 = await requestsPerNode();
    const { perNodeLast } = await receipts(b.ids);
    const perNode = perNodeLast.map((t) => t - b.started);
    const burstResult = {
      to_last_node_ms: Math.max(...perNode),
      to_first_node_ms: Math.min(...perNode),
      per_node_ms: perNode,
      requests_per_node: req1.map((n, i) => n - req0[i]!),
    };
    await quiet();

    // 2. The same burst with one node stopped: the others must not wait for it.
    let stopped: FanoutResult['burst_1000_one_node_stopped'];
    if (nodes > 1) {
      const slow = stack.varnishes[0]!;
      slow.pause();
      const s = await burst();
      const running = stack.varnishes.slice(1);
      await applied(running, 60_000);
      const at = Date.now();
      slow.resume();
      stopped = { to_last_running_node_ms: at - s.started, running_nodes: running.length };
      await applied();
      await quiet();
    }

    // 3. Sustained: 16 webhooks of 50 events in flight for sustainedS.
    const t0 = Date.now();
    let sent = 0;
    const stopAt = t0 + opts.sustainedS * 1000;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (Date.now() < stopAt) {
        await post(makeEvents(BATCH, 's'));
        sent += BATCH;
      }
    }));
    await applied();
    const sustained = { seconds: opts.sustainedS, events: sent, applied_per_s: Math.round(sent / ((Date.now() - t0) / 1000)) };
    await quiet();

    // 4. Paced 500 events/s: 10 events every 20 ms.
    const ids: string[] = [];
    const start = Date.now();
    const inflight: Promise<void>[] = [];
    for (let tick = 0; Date.now() - start < opts.pacedS * 1000; tick++) {
      const events = makeEvents(10, 'p');
      ids.push(...events.map((e) => e.id));
      inflight.push(post(events));
      await new Promise((r) => setTimeout(r, Math.max(0, start + (tick + 1) * 20 - Date.now())));
    }
    await Promise.all(inflight);
    await applied();
    const { latencies } = await receipts(ids);
    const paced = { events: ids.length, p50_ms: quantile(latencies, 0.5), p99_ms: quantile(latencies, 0.99), max_ms: latencies[latencies.length - 1]! };
    return {
      nodes,
      burst_1000: burstResult,
      burst_1000_one_node_stopped: stopped,
      sustained,
      paced_500_per_s: paced,
      loadavg_1m: { start: +load0.toFixed(2), end: +loadavg()[0]!.toFixed(2) },
    };
  } finally {
    for (const v of stack.varnishes) v.resume();
    redis.disconnect();
    await pool.close();
    proc.kill('SIGTERM');
    await Promise.race([proc.exited, new Promise((r) => setTimeout(r, 10_000))]);
    await stack.close();
  }
}
