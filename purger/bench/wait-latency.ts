// `npm run bench:wait`: what waiting for a replica costs a webhook. A primary with one replica
// (real redis-server, appendfsync everysec), the purger started like `npm start`, one varnishd.
// POST /v1/events latency, p50/p99, with PURGER_REDIS_MIN_REPLICAS=0 and =1, on loopback:
// sequential (one webhook at a time) and 16 concurrent, 1 and 50 events per webhook.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { freePort } from '../../testkit/ports.mjs';
import { REPO_ROOT } from '../../testkit/process.mjs';
import { RedisServer } from '../../testkit/redis.mjs';
import { until } from '../../testkit/wait.mjs';
import { tagEvent } from '../../testkit/events.mjs';
import { PurgerStack, SITE, signedHeaders } from '../../testkit/purger-stack.mjs';

const REQUESTS = Number(process.env.BENCH_WAIT_REQUESTS ?? 2000);

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function measure(stack: PurgerStack, minReplicas: number, concurrency: number, perWebhook: number): Promise<{ p50_ms: number; p99_ms: number }> {
  const port = await freePort();
  const proc = stack.spawn({ PURGER_PORT: String(port), PURGER_LOG_LEVEL: 'warn', PURGER_REDIS_MIN_REPLICAS: String(minReplicas), PURGER_TENANT_EVENTS_PER_S: '0', PURGER_TENANT_BYTES_PER_S: '0', PURGER_POLL_MS: '1000' });
  const base = `http://127.0.0.1:${port}`;
  const pool = new Pool(base, { connections: concurrency });
  try {
    await until('purger ready', async () => (await fetch(`${base}/readyz`)).status === 200, 30_000);
    const times: number[] = [];
    let i = 0;
    const total = REQUESTS + 100; // the first 100 warm up
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (i < total) {
        const n = i++;
        const body = JSON.stringify({ site: SITE, events: Array.from({ length: perWebhook }, (_, j) => tagEvent([`w-${n}-${j}`])) });
        const t = performance.now();
        const res = await pool.request({ method: 'POST', path: '/v1/events', headers: signedHeaders(body), body });
        await res.body.text();
        if (res.statusCode !== 202) throw new Error(`POST answered ${res.statusCode}`);
        if (n >= 100) times.push(performance.now() - t);
      }
    }));
    times.sort((a, b) => a - b);
    return { p50_ms: +quantile(times, 0.5).toFixed(2), p99_ms: +quantile(times, 0.99).toFixed(2) };
  } finally {
    await pool.close();
    proc.kill('SIGTERM');
    await proc.exited;
  }
}

async function main(): Promise<void> {
  const stack = await PurgerStack.start({ nodes: 1, appendfsync: 'everysec' });
  const replica = await RedisServer.start('everysec', { replicaOf: stack.redis.port });
  const r = new Redis(stack.redis.url);
  try {
    await until('replica online', async () => /slave0:.*state=online/.test(await r.info('replication')), 20_000, 100);
    const out: Record<string, unknown> = { date: new Date().toISOString(), cores: cpus().length, loadavg_before: loadavg().map((x) => +x.toFixed(2)), requests_per_case: REQUESTS };
    for (const [concurrency, perWebhook] of [[1, 1], [1, 50], [16, 50]] as const) {
      const key = `concurrency_${concurrency}_events_${perWebhook}`;
      const without = await measure(stack, 0, concurrency, perWebhook);
      const withWait = await measure(stack, 1, concurrency, perWebhook);
      out[key] = { without_wait: without, with_wait_1_replica: withWait };
      console.log(key, out[key]);
    }
    out.loadavg_after = loadavg().map((x) => +x.toFixed(2));
    mkdirSync(join(REPO_ROOT, '.results/purger'), { recursive: true });
    writeFileSync(join(REPO_ROOT, '.results/purger/wait-latency.json'), `${JSON.stringify(out, null, 2)}\n`);
    console.log('written to .results/purger/wait-latency.json (make publish-results copies it to purger/bench/wait-latency.json)');
  } finally {
    r.disconnect();
    await replica.stop();
    await stack.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
