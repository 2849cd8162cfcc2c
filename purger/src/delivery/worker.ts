// The worker role: subscribes to the live channel, keeps one NodeDelivery per Varnish node, and
// wakes them on every published event, on Redis reconnects and on a poll timer (pub/sub drops
// what is published while disconnected; the cursors into the log make that harmless).
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config/load.js';
import { NodeDelivery } from './node-delivery.js';
import { NodeDiscovery, type NodeSet, type Resolver } from './discovery.js';
import { PageRefresher } from './page-refresher.js';
import { removeNodeSeries, type Metrics } from '../metrics.js';
import type { LogEntry, StreamLog } from '../store/stream-log.js';
import { VarnishClient } from './varnish-client.js';

const TRACK_MAX = 100_000;

export class Worker {
  readonly deliveries = new Map<string, NodeDelivery>();
  private readonly discovery: NodeDiscovery;
  private readonly tracking = new Map<string, { acceptedAt: number; remaining: number }>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly config: Config,
    private readonly log: StreamLog,
    private readonly subscriber: Redis,
    private readonly logger: Logger,
    private readonly metrics: Metrics,
    resolver?: Resolver,
  ) {
    this.discovery = new NodeDiscovery(config.varnishNodes, config.varnishDns, config.dnsIntervalMs, (n) => this.setNodes(n), logger, resolver);
  }

  get nodeCount(): number {
    return this.deliveries.size;
  }

  async start(): Promise<void> {
    this.subscriber.on('message', () => this.wakeAll());
    // On every (re)connect: (re)subscribe (also when the first attempt failed because Redis was
    // down at start), then replay from the cursors, which covers whatever pub/sub dropped.
    const subscribe = (): Promise<void> =>
      this.subscriber.subscribe(this.log.channel).then(
        () => undefined,
        (err: unknown) => this.logger.warn({ err: String(err) }, 'cannot subscribe yet; will subscribe when Redis is back'),
      );
    this.subscriber.on('ready', () => {
      // (wake again once subscribed: what was published between the reconnect and the
      // SUBSCRIBE, e.g. on a new primary after a failover, is read from the log then)
      void subscribe().then(() => this.wakeAll());
      this.wakeAll();
    });
    if (this.subscriber.status === 'ready') await subscribe();
    // After the command connection comes back (perhaps to a new primary), every node re-reads
    // its cursors from Redis: the old primary may have taken the last commits with it.
    let wasReady = this.log.redis.status === 'ready';
    this.log.redis.on('ready', () => {
      if (wasReady) for (const d of this.deliveries.values()) d.resync();
      wasReady = true;
    });
    await this.discovery.start();
    this.timer = setInterval(() => void this.tick(), this.config.pollMs).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.discovery.stop();
    await Promise.all([...this.deliveries.values()].map((d) => d.stop()));
    this.deliveries.clear();
  }

  wakeAll(): void {
    for (const d of this.deliveries.values()) d.wake();
  }

  private setNodes(nodes: NodeSet): void {
    if (this.stopped) return;
    for (const [key, d] of this.deliveries) {
      if (!nodes.has(key)) {
        this.deliveries.delete(key);
        this.logger.info({ node: key }, 'node removed');
        // Its series go once its loops stopped (nothing writes them after that), unless the
        // node came back meanwhile: a removed node must not keep reporting its last values.
        void d.stop().then(() => {
          if (!this.deliveries.has(key)) return removeNodeSeries(this.metrics, key);
        });
      }
    }
    for (const [key, a] of nodes) {
      if (this.deliveries.has(key)) continue;
      const client = new VarnishClient(key, a.host, a.port, {
        connections: this.config.nodeConcurrency,
        timeoutMs: this.config.nodeTimeoutMs,
        purgeToken: this.config.varnishPurgeToken,
        refreshConnections: this.config.refreshConcurrency,
      });
      const refresher = this.config.refreshConcurrency > 0 ? new PageRefresher(key, client, this.config.refreshConcurrency, this.metrics, this.logger) : undefined;
      const d = new NodeDelivery(key, client, this.log, this.config, this.logger, this.metrics, {
        onApplied: (_node, entries) => this.applied(entries),
      }, refresher);
      this.deliveries.set(key, d);
      void d.start();
    }
    void this.log.heartbeat([...nodes.keys()]).catch(() => undefined);
  }

  /** Counts per event how many nodes applied it; observes accept→applied-everywhere latency. */
  private applied(entries: LogEntry[]): void {
    const now = Date.now();
    const nodes = this.deliveries.size;
    for (const e of entries) {
      let t = this.tracking.get(e.streamId);
      if (!t) {
        if (this.tracking.size >= TRACK_MAX) {
          const oldest = this.tracking.keys().next().value;
          if (oldest !== undefined) this.tracking.delete(oldest);
        }
        t = { acceptedAt: e.event.acceptedAt, remaining: nodes };
        this.tracking.set(e.streamId, t);
      }
      if (--t.remaining <= 0) {
        this.tracking.delete(e.streamId);
        this.metrics.appliedLatency.observe((now - t.acceptedAt) / 1000);
      }
    }
  }

  private async tick(): Promise<void> {
    try {
      await this.log.heartbeat([...this.deliveries.keys()]);
      const head = await this.log.headSeq();
      for (const [key, d] of this.deliveries) this.metrics.backlog.set({ node: key }, Math.max(0, head - d.appliedSeq));
    } catch {
      // Redis down: readiness and redis_connected say so; the deliveries retry on their own.
    }
  }
}
