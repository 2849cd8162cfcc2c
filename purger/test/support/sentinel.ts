// A Redis Sentinel deployment on loopback for tests: one primary, replicas and sentinels, all
// real processes started by the test kit (testkit/redis.mjs). Sentinels declare the primary down
// after 1 s and require a password, as the purger does.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisServer, SentinelServer } from '../../../testkit/redis.mjs';
import { until } from '../../../testkit/wait.mjs';

export const MASTER_NAME = 'purger-test';
const SENTINEL_PASSWORD = `sentinel-${randomBytes(12).toString('hex')}`;

export class SentinelTopology {
  private constructor(
    readonly servers: RedisServer[],
    readonly sentinels: SentinelServer[],
  ) {}

  static async start(opts: { replicas?: number; sentinels?: number; appendfsync?: 'always' | 'everysec' } = {}): Promise<SentinelTopology> {
    const primary = await RedisServer.start(opts.appendfsync);
    const replicas = await Promise.all(Array.from({ length: opts.replicas ?? 2 }, () => RedisServer.start(opts.appendfsync, { replicaOf: primary.port })));
    const t = new SentinelTopology([primary, ...replicas], []);
    try {
      await until('replicas in sync', async () => (await t.info(primary.port, 'replication')).includes(`connected_slaves:${replicas.length}`) && (await t.replicasOnline(primary.port)) === replicas.length, 30_000, 100);
      t.sentinels.push(...(await Promise.all(Array.from({ length: opts.sentinels ?? 3 }, () => SentinelServer.start(MASTER_NAME, primary.port, { password: SENTINEL_PASSWORD })))));
      // Sentinels find the replicas through the primary and each other through its hello channel.
      await until('sentinels know every replica and each other', async () => {
        for (const s of t.sentinels) {
          const master = (await t.sentinelCall(s.port, 'MASTER', MASTER_NAME)) as string[];
          const field = (k: string): number => Number(master[master.indexOf(k) + 1]);
          if (field('num-slaves') !== replicas.length || field('num-other-sentinels') !== t.sentinels.length - 1) return false;
        }
        return true;
      }, 30_000, 200);
    } catch (err) {
      await t.stop();
      throw err;
    }
    return t;
  }

  /** the environment that points the purger at this deployment */
  env(): Record<string, string> {
    return { REDIS_SENTINELS: this.sentinels.map((s) => s.address).join(','), REDIS_SENTINEL_MASTER: MASTER_NAME, REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD };
  }

  /** the port of the primary the sentinels currently name */
  async primaryPort(): Promise<number> {
    for (const s of this.sentinels) {
      try {
        const r = (await this.sentinelCall(s.port, 'GET-MASTER-ADDR-BY-NAME', MASTER_NAME)) as string[];
        return Number(r[1]);
      } catch {
        // try the next sentinel
      }
    }
    throw new Error('no sentinel answered');
  }

  server(port: number): RedisServer {
    const s = this.servers.find((x) => x.port === port);
    if (!s) throw new Error(`no redis-server on ${port}`);
    return s;
  }

  /** SIGKILLs the current primary; returns its port */
  async killPrimary(): Promise<number> {
    const port = await this.primaryPort();
    await this.server(port).kill();
    return port;
  }

  /** waits until every sentinel names a primary other than `oldPort` that has `replicas` replicas in sync */
  async waitForFailover(oldPort: number, replicas: number, timeoutMs = 30_000): Promise<number> {
    return until('failover to a new primary', async () => {
      const ports = await Promise.all(this.sentinels.map(async (s) => Number(((await this.sentinelCall(s.port, 'GET-MASTER-ADDR-BY-NAME', MASTER_NAME)) as string[])[1])));
      const p = ports[0]!;
      if (p === oldPort || ports.some((x) => x !== p)) return undefined;
      return (await this.replicasOnline(p)) >= replicas ? p : undefined;
    }, timeoutMs, 200);
  }

  /** a plain connection to one server (for assertions) */
  client(port: number): Redis {
    return new Redis({ port, host: '127.0.0.1', lazyConnect: false, maxRetriesPerRequest: 1 });
  }

  async info(port: number, section: string): Promise<string> {
    const r = this.client(port);
    try {
      return await r.info(section);
    } finally {
      r.disconnect();
    }
  }

  private async replicasOnline(port: number): Promise<number> {
    return ((await this.info(port, 'replication')).match(/^slave\d+:.*state=online/gm) ?? []).length;
  }

  private async sentinelCall(port: number, ...args: string[]): Promise<unknown> {
    const r = new Redis({ port, host: '127.0.0.1', password: SENTINEL_PASSWORD, maxRetriesPerRequest: 1, retryStrategy: () => null });
    try {
      return await r.call('SENTINEL', ...args);
    } finally {
      r.disconnect();
    }
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.sentinels.map((s) => s.stop()));
    await Promise.allSettled(this.servers.map((s) => s.stop()));
  }
}
