// Prometheus metrics, one registry per process (tests build several apps in one process).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface RedisMemory {
  usedBytes: number;
  /** 0 = no maxmemory configured */
  maxBytes: number;
  streamEntries: number;
}

/** Read at scrape time: set by the parts that own the numbers (ingest limiter, Redis). */
export interface MetricSources {
  tenantBudget?: () => { site: string; limit: string; ratio: number }[];
  redisMemory?: () => Promise<RedisMemory | undefined>;
}

export function createMetrics(opts: { defaults?: boolean } = {}) {
  const registry = new Registry();
  const sources: MetricSources = {};
  let memory: Promise<RedisMemory | undefined> | undefined;
  // One INFO + XLEN per scrape, shared by the gauges below.
  const readMemory = (): Promise<RedisMemory | undefined> => (memory ??= (sources.redisMemory?.() ?? Promise.resolve(undefined)).catch(() => undefined).finally(() => setTimeout(() => (memory = undefined), 0)));
  if (opts.defaults ?? true) collectDefaultMetrics({ register: registry, prefix: 'purger_process_' });
  const r = [registry];
  return {
    registry,
    sources,
    tenantRejections: new Counter({
      name: 'purger_tenant_rejections_total',
      help: 'Webhook batches refused with 429 because the site exceeded its ingest cap, by site and limit (events, bytes)',
      labelNames: ['site', 'limit'] as const,
      registers: r,
    }),
    tenantBudget: new Gauge({
      name: 'purger_tenant_budget_ratio',
      help: 'Share of the per-site ingest burst still available (1 = full, 0 = the next batch gets 429), by site and limit; alert well above 0',
      labelNames: ['site', 'limit'] as const,
      registers: r,
      collect() {
        for (const b of sources.tenantBudget?.() ?? []) this.set({ site: b.site, limit: b.limit }, b.ratio);
      },
    }),
    redisUsedMemory: new Gauge({
      name: 'purger_redis_used_memory_bytes',
      help: 'Redis used_memory (INFO memory) at scrape time',
      registers: r,
      async collect() {
        const m = await readMemory();
        if (m) this.set(m.usedBytes);
      },
    }),
    redisMaxMemory: new Gauge({
      name: 'purger_redis_maxmemory_bytes',
      help: 'Redis maxmemory (0 = none set: Redis can grow until the host runs out)',
      registers: r,
      async collect() {
        const m = await readMemory();
        if (m) this.set(m.maxBytes);
      },
    }),
    redisMemoryRatio: new Gauge({
      name: 'purger_redis_memory_used_ratio',
      help: 'used_memory / maxmemory (at 1 Redis refuses writes and the API answers 503); 0 when no maxmemory is set. Alert at 0.8',
      registers: r,
      async collect() {
        const m = await readMemory();
        if (m) this.set(m.maxBytes > 0 ? m.usedBytes / m.maxBytes : 0);
      },
    }),
    streamEntries: new Gauge({
      name: 'purger_log_entries',
      help: 'Entries in the durable log (the Redis stream)',
      registers: r,
      async collect() {
        const m = await readMemory();
        if (m) this.set(m.streamEntries);
      },
    }),
    eventsReceived: new Counter({
      name: 'purger_events_received_total',
      help: 'Events received by the API, by outcome (accepted, duplicate, invalid, unauthorized, forbidden, rate_limited, unavailable, unreplicated, redis_full, too_large)',
      labelNames: ['outcome'] as const,
      registers: r,
    }),
    invalidationsSent: new Counter({
      name: 'purger_invalidations_sent_total',
      help: 'Invalidation requests sent to Varnish, by node, kind (purge, purgekeys, ban), outcome (ok; retry: failed transiently, sent again later; refused: the node will never accept it as built, sent reshaped) and lane (main, repurge-<delay ms>)',
      labelNames: ['node', 'kind', 'outcome', 'lane'] as const,
      registers: r,
    }),
    varnishDuration: new Histogram({
      name: 'purger_varnish_request_duration_seconds',
      help: 'Duration of invalidation requests to Varnish',
      labelNames: ['node'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: r,
    }),
    appliedLatency: new Histogram({
      name: 'purger_event_applied_seconds',
      help: 'Time from an event accepted by the API to applied on every node this worker serves',
      buckets: [0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers: r,
    }),
    backlog: new Gauge({
      name: 'purger_node_backlog',
      help: 'Events in the log not yet applied on the node',
      labelNames: ['node'] as const,
      registers: r,
    }),
    nodeUp: new Gauge({
      name: 'purger_node_up',
      help: '1 when the last request to the node succeeded, 0 while it is failing',
      labelNames: ['node'] as const,
      registers: r,
    }),
    redisConnected: new Gauge({
      name: 'purger_redis_connected',
      help: '1 when the Redis command connection is ready',
      registers: r,
    }),
    escalations: new Counter({
      name: 'purger_escalations_total',
      help: 'URL bursts escalated to a site-wide ban',
      labelNames: ['reason'] as const,
      registers: r,
    }),
    logOverruns: new Counter({
      name: 'purger_log_overruns_total',
      help: 'Times a node cursor fell off the end of the log and the node got a site-wide ban instead',
      labelNames: ['node'] as const,
      registers: r,
    }),
    deadLettered: new Counter({
      name: 'purger_events_dead_lettered_total',
      help: 'Log entries a node skipped because they can never be sent (reason: unplannable = an unsafe ban, malformed = no readable event, refused = the node refused every form of their invalidation, a site-wide ban included); their receipts say failed',
      labelNames: ['node', 'reason'] as const,
      registers: r,
    }),
    refreshes: new Counter({
      // (the name the deployment's dashboards and the freshness bench read)
      name: 'varnish_edge_purger_refreshes_total',
      help: 'Pages a node was asked to re-fetch after an invalidation, by node and outcome (fetched: from the origin; cached: a reader had already refilled it; skipped: not requested recently; failed; dropped: the queue was full)',
      labelNames: ['node', 'outcome'] as const,
      registers: r,
    }),
    reshaped: new Counter({
      // (named like varnish_edge_purger_refreshes_total, for the same dashboards)
      name: 'varnish_edge_purger_reshaped_total',
      help: 'Invalidations a node refused as built (a 4xx but 403/408/429, 500, 501, 505, a 503 "VCL failed"), by node, kind of the refused request (purge, purgekeys, ban) and how it went out instead (split: its keys in two halves; host-ban: a ban of the whole site; failed: a refused site ban, its events not applied on the node)',
      labelNames: ['node', 'kind', 'how'] as const,
      registers: r,
    }),
    backlogSkips: new Counter({
      name: 'purger_backlog_skips_total',
      help: 'Times a node came back after a restart (connection refused) and its stale backlog was skipped',
      labelNames: ['node'] as const,
      registers: r,
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** Drops every series labelled with this node (a node discovery no longer lists). */
export async function removeNodeSeries(metrics: Metrics, node: string): Promise<void> {
  const labelled = [metrics.invalidationsSent, metrics.backlog, metrics.nodeUp, metrics.logOverruns, metrics.backlogSkips, metrics.deadLettered, metrics.refreshes, metrics.reshaped];
  for (const m of labelled) {
    for (const v of (await m.get()).values) {
      if (v.labels.node === node) m.remove(v.labels as never);
    }
  }
  metrics.varnishDuration.remove({ node });
}
