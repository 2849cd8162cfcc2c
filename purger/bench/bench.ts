// `npm run bench`: ingest → Redis → worker → 2 varnishd, all real, on loopback, bounded in time,
// then the fan-out to 1, 3 and 10 varnishd (fanout.ts).
// Prints and writes sustained events/s, accept→applied latency p50/p99 at a paced 500 events/s,
// purger RSS, and requests sent to Varnish per event, plus a 1,000-event burst, to
// .results/purger/results.json at the repository root (gitignored; `make publish-results` copies
// it to purger/bench/results.json).
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus, loadavg, release } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { eventMix, type TestEvent } from '../../testkit/events.mjs';
import { freePort } from '../../testkit/ports.mjs';
import { REPO_ROOT } from '../../testkit/process.mjs';
import { until } from '../../testkit/wait.mjs';
import { PurgerStack, READ_AUTH, SITE, signedHeaders } from '../../testkit/purger-stack.mjs';
import { DEFAULT_REPURGE_DELAYS_MS } from '../src/config/load.js';
import { compareIds } from '../src/store/stream-log.js';
import { fanout, type FanoutResult } from './fanout.js';
import { receiptTimes } from './receipt-times.js';

const SUSTAINED_S = Number(process.env.BENCH_SUSTAINED_S ?? 10);
const PACED_S = Number(process.env.BENCH_PACED_S ?? 10);
const BATCH = 50; // events per webhook request
const CONCURRENCY = 16;
const RACES = Number(process.env.BENCH_RACES ?? 20);
/** the purger's repurge schedule in this run (BENCH_REPURGE_DELAYS_MS overrides the default) */
const REPURGE_DELAYS = (process.env.BENCH_REPURGE_DELAYS_MS ?? DEFAULT_REPURGE_DELAYS_MS.join(',')).split(',').filter((d) => d !== '' && d !== '0').map(Number);
const LAST_REPURGE_MS = Math.max(0, ...REPURGE_DELAYS);
/** fan-out phase: node counts (BENCH_FANOUT_NODES=1,3,10; empty = skip) and its shorter phases */
const FANOUT_NODES = (process.env.BENCH_FANOUT_NODES ?? '1,3,10').split(',').filter((x) => x.trim() !== '').map(Number);
const FANOUT_SUSTAINED_S = Number(process.env.BENCH_FANOUT_SUSTAINED_S ?? 5);
const FANOUT_PACED_S = Number(process.env.BENCH_FANOUT_PACED_S ?? 5);

const makeEvents = (n: number, tag: string): TestEvent[] => eventMix(SITE, n, `b-${tag}`);

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function main(): Promise<void> {
  const stack = await PurgerStack.start({ nodes: 2, appendfsync: 'everysec' });
  const port = await freePort();
  const proc = stack.spawn({ ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}), ...(process.env.BENCH_ROLE ? { PURGER_ROLE: process.env.BENCH_ROLE } : {}), ...(process.env.BENCH_REPURGE_DELAYS_MS ? { PURGER_REPURGE_DELAYS_MS: process.env.BENCH_REPURGE_DELAYS_MS } : {}), PURGER_PORT: String(port), PURGER_LOG_LEVEL: 'warn', PURGER_TENANT_EVENTS_PER_S: '0', PURGER_TENANT_BYTES_PER_S: '0', PURGER_POLL_MS: '1000', PURGER_RETRY_BASE_MS: '200', PURGER_RETRY_MAX_MS: '5000', PURGER_NODE_TIMEOUT_MS: '5000' });
  const base = `http://127.0.0.1:${port}`;
  const pool = new Pool(base, { connections: CONCURRENCY });
  const redis = new Redis(stack.redis.url);
  let maxRss = 0;
  const rssTimer = setInterval(() => {
    try {
      maxRss = Math.max(maxRss, rssMb(proc.child.pid!));
    } catch {
      /* exited */
    }
  }, 100);
  const postMs: number[] = [];
  const post = async (events: unknown[]): Promise<number> => {
    const body = JSON.stringify({ site: SITE, events });
    const started = performance.now();
    const res = await pool.request({ method: 'POST', path: '/v1/events', headers: signedHeaders(body), body });
    await res.body.text();
    postMs.push(performance.now() - started);
    if (res.statusCode !== 202) throw new Error(`POST /v1/events answered ${res.statusCode}`);
    return events.length;
  };
  /** requests Varnish answered 2xx, per node (or per `node lane` with byLane) */
  const requestsSent = async (byLane = false): Promise<Record<string, number>> => {
    const text = await (await fetch(`${base}/metrics`, { headers: READ_AUTH })).text();
    const out: Record<string, number> = {};
    for (const m of text.matchAll(/^purger_invalidations_sent_total\{node="([^"]+)",kind="[^"]+",outcome="ok",lane="([^"]+)"\} (\d+)/gm)) {
      const k = byLane ? `${m[1]} ${m[2]}` : m[1]!;
      out[k] = (out[k] ?? 0) + Number(m[3]);
    }
    return out;
  };
  const allApplied = async (timeoutMs: number): Promise<number> => {
    const last = (await redis.xrevrange('purger:log', '+', '-', 'COUNT', 1))[0]![0];
    await until('every node applied the whole log', async () => {
      for (const v of stack.varnishes) {
        if (compareIds((await redis.hget(`purger:node:${v.node}`, 'cursor')) ?? '0-0', last) < 0) return false;
      }
      return true;
    }, timeoutMs, 5);
    return Date.now();
  };
  /** waits until every repurge lane of every node has passed the end of the log */
  const allRepurged = async (timeoutMs: number): Promise<void> => {
    const last = (await redis.xrevrange('purger:log', '+', '-', 'COUNT', 1))[0]![0];
    await until('every repurge lane passed the whole log', async () => {
      for (const v of stack.varnishes) {
        for (const d of REPURGE_DELAYS) {
          if (compareIds((await redis.hget(`purger:node:${v.node}`, `repurge:${d}`)) ?? '0-0', last) < 0) return false;
        }
      }
      return true;
    }, timeoutMs, 20);
  };
  const latencies = async (ids: string[]): Promise<number[]> => {
    const times = await receiptTimes(redis, SITE, ids, stack.varnishes.map((v) => v.node));
    return times.map((e) => Math.max(...e.applied) - e.acceptedAt).sort((a, b) => a - b);
  };

  let closed = false;
  const close = async (): Promise<void> => {
    closed = true;
    clearInterval(rssTimer);
    redis.disconnect();
    await pool.close();
    proc.kill('SIGTERM');
    await Promise.race([proc.exited, new Promise((r) => setTimeout(r, 10_000))]);
    await stack.close();
  };
  try {
    await until('purger ready', async () => (await fetch(`${base}/readyz`)).status === 200, 30_000);
    // Warm a realistic cache: pages tagged like the events.
    for (const v of stack.varnishes) for (let i = 0; i < 200; i++) await v.get(SITE, `/post-${i}/`);
    await post(makeEvents(BATCH, 'warmup'));
    await allApplied(30_000);

    // 1. Sustained: as fast as the API accepts, CONCURRENCY requests in flight, for SUSTAINED_S.
    const before1 = await requestsSent();
    const t0 = Date.now();
    let sent = 0;
    const stopAt = t0 + SUSTAINED_S * 1000;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < stopAt) {
        const n = await post(makeEvents(BATCH, 's')); // (not `sent += await …`: that loses updates)
        sent += n;
      }
    }));
    const acceptedMs = Date.now() - t0;
    const postSorted = postMs.splice(0).sort((a, b) => a - b);
    const appliedAt = await allApplied(120_000);
    const after1 = await requestsSent();
    const sustained = {
      events: sent,
      accepted_per_s: Math.round(sent / (acceptedMs / 1000)),
      applied_per_s: Math.round(sent / ((appliedAt - t0) / 1000)),
      drain_ms_after_last_accept: appliedAt - t0 - acceptedMs,
      webhook_response_ms: { p50: +quantile(postSorted, 0.5).toFixed(1), p99: +quantile(postSorted, 0.99).toFixed(1) },
      requests_per_event_per_node: Object.fromEntries(stack.varnishes.map((v) => [v.node, +(((after1[v.node] ?? 0) - (before1[v.node] ?? 0)) / sent).toFixed(4)])),
    };
    console.log('sustained', sustained);
    await new Promise((r) => setTimeout(r, LAST_REPURGE_MS + 500)); // let the repurges of phase 1 pass

    // 2. Paced 500 events/s: 10 events every 20 ms; latency from accepted to applied on both nodes.
    const pacedIds: string[] = [];
    const pacedStart = Date.now();
    const inflight: Promise<number>[] = [];
    for (let tick = 0; Date.now() - pacedStart < PACED_S * 1000; tick++) {
      const events = makeEvents(10, 'p');
      pacedIds.push(...events.map((e) => e.id));
      inflight.push(post(events));
      const next = pacedStart + (tick + 1) * 20;
      await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
    }
    await Promise.all(inflight);
    await allApplied(60_000);
    const lat = await latencies(pacedIds);
    const paced = {
      events: pacedIds.length,
      rate_per_s: Math.round(pacedIds.length / ((Date.now() - pacedStart) / 1000)),
      p50_ms: quantile(lat, 0.5),
      p99_ms: quantile(lat, 0.99),
      max_ms: lat[lat.length - 1],
    };
    console.log('paced', paced);
    await new Promise((r) => setTimeout(r, LAST_REPURGE_MS + 500));

    // 3. Burst: 1,000 events at once (two 500-event webhooks), requests per node: the first
    // pass, and everything including each repurge (after the last repurge delay).
    await allRepurged(30_000); // the paced phase's repurges are not counted as the burst's
    const before3 = await requestsSent();
    const before3Lanes = await requestsSent(true);
    const burst = makeEvents(1000, 'burst');
    await Promise.all([post(burst.slice(0, 500)), post(burst.slice(500))]);
    await allApplied(30_000);
    const after3 = await requestsSent();
    await allRepurged(30_000);
    const after3Lanes = await requestsSent(true);
    const burstResult = {
      events: 1000,
      requests_per_node: Object.fromEntries(stack.varnishes.map((v) => [v.node, (after3[v.node] ?? 0) - (before3[v.node] ?? 0)])),
      // (the key keeps its name: scripts/figures.py and the published results read it)
      requests_per_node_and_lane_with_repeats: Object.fromEntries(Object.keys(after3Lanes).map((k) => [k, after3Lanes[k]! - (before3Lanes[k] ?? 0)])),
    };
    console.log('burst', burstResult);

    // 4. The worst case: a purge that lands while a slow fetch (200 ms) of the old page is in
    // flight. The VCL does not keep a page whose fetch began before the purge; where it would
    // (an older VCL), only a repurge removes it. Time from the edit to the first request
    // (polling every 10 ms) that gets the edited page.
    const races: { purged_during_fetch: boolean; old_page_kept: boolean; fresh_ms: number }[] = [];
    for (let i = 0; i < RACES; i++) {
      const v = stack.varnishes[i % stack.varnishes.length]!;
      const path = `/race-${i}/`;
      stack.origin.slowOnce(path, 200);
      let done = false;
      const inflight = v.get(SITE, path).then(() => (done = true));
      await until('origin got the request', () => stack.origin.hits.get(path) === 1, 5000, 1);
      stack.origin.edit(path);
      const edited = Date.now();
      const id = `race-${i}-${Date.now()}`;
      await post([{ id, kind: 'urls', urls: [`http://${SITE}${path}`], soft: false, reason: 'bench race', time: new Date().toISOString() }]);
      await until('purge applied', async () => (await redis.hget(`purger:evt:${SITE}/${id}`, `n:${v.node}`)) !== null, 10_000, 2);
      const purgedDuringFetch = !done;
      await inflight;
      const oldPageKept = purgedDuringFetch && (await v.get(SITE, path)).body === `${path} v1\n`;
      const fresh = await v.freshAfter(SITE, path, `${path} v2\n`, edited);
      races.push({ purged_during_fetch: purgedDuringFetch, old_page_kept: oldPageKept, fresh_ms: fresh });
    }
    const raced = races.filter((r) => r.purged_during_fetch).map((r) => r.fresh_ms).sort((a, b) => a - b);
    const race = {
      races: RACES,
      purged_during_fetch: raced.length,
      old_page_kept_after_the_purge: races.filter((r) => r.old_page_kept).length,
      fresh_ms_when_purged_during_fetch: { p50: quantile(raced, 0.5), max: raced[raced.length - 1] },
      fresh_ms_all: { max: Math.max(...races.map((r) => r.fresh_ms)) },
    };
    console.log('race', race);

    // 5. Fan-out to 1, 3 and 10 nodes, each with its own stack (the 2-node stack stops first).
    await close();
    const fan: Record<string, FanoutResult> = {};
    for (const n of FANOUT_NODES) {
      fan[String(n)] = await fanout(n, { sustainedS: FANOUT_SUSTAINED_S, pacedS: FANOUT_PACED_S });
      console.log(`fanout ${n}`, JSON.stringify(fan[String(n)]));
    }

    const results = {
      date: new Date().toISOString(),
      machine: { cores: cpus().length, cpu: cpus()[0]?.model, kernel: release(), node: process.version, loadavg_1m_at_end: +loadavg()[0]!.toFixed(2) },
      setup: { varnish_nodes: 2, redis_appendfsync: 'everysec', events_per_request: BATCH, client_concurrency: CONCURRENCY, repurge_delays_ms: REPURGE_DELAYS },
      sustained,
      paced_500_per_s: paced,
      burst_1000: burstResult,
      purge_racing_a_fetch: race,
      purger_max_rss_mb: Math.round(maxRss * 10) / 10,
      fanout: fan,
      /** 1,000-event burst: time from the first POST to the last of 10 nodes applying it */
      ...(fan['10'] ? { purger_10_nodes_burst_ms: fan['10'].burst_1000.to_last_node_ms } : {}),
      targets: {
        sustained_ge_5000_per_s: sustained.applied_per_s >= 5000,
        p99_lt_50ms_at_500_per_s: paced.p99_ms < 50,
        rss_lt_150mb: maxRss < 150,
        burst_le_10_requests_per_node: Object.values(burstResult.requests_per_node).every((n) => n <= 10),
        race_worst_case_lt_500ms: race.fresh_ms_all.max < 500,
        ...(fan['1'] && fan['10'] ? { ten_nodes_burst_lt_3x_one_node: fan['10'].burst_1000.to_last_node_ms < 3 * fan['1'].burst_1000.to_last_node_ms } : {}),
      },
    };
    mkdirSync(join(REPO_ROOT, '.results/purger'), { recursive: true });
    writeFileSync(join(REPO_ROOT, '.results/purger/results.json'), `${JSON.stringify(results, null, 2)}\n`);
    console.log(JSON.stringify(results, null, 2));
    console.log('written to .results/purger/results.json (make publish-results copies it to purger/bench/results.json)');
  } finally {
    if (!closed) await close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
