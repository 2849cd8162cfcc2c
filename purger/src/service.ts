// Composition root: wires config, Redis, the log, metrics, the HTTP app and the worker for the
// configured role, and shuts them down in order.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { buildApp, type App } from './http/app.js';
import { ConfigError, type Config } from './config/load.js';
import { LogTrimmer } from './store/log-trimmer.js';
import { memoryFitProblem } from './config/memory-fit.js';
import type { Resolver } from './delivery/discovery.js';
import { createMetrics, type Metrics } from './metrics.js';
import { createRedis, redisTarget } from './store/redis-connection.js';
import { StreamLog } from './store/stream-log.js';
import { Worker } from './delivery/worker.js';

export interface Service {
  app: App;
  worker: Worker | undefined;
  redis: Redis;
  metrics: Metrics;
  log: StreamLog;
  /** the address the HTTP server listens on */
  url: string;
  close(): Promise<void>;
}

export interface ServiceOptions {
  defaultMetrics?: boolean;
  resolver?: Resolver;
  /** the caps turned out not to fit Redis's maxmemory once Redis, unreachable at start, answered (main: exit 2) */
  onFatal?: (err: ConfigError) => void;
}

/**
 * Starts the configured role. Rejects with a ConfigError (nothing left running) when the per-site
 * caps cannot fit Redis's maxmemory (memory-fit.ts).
 */
export async function startService(config: Config, logger: Logger, opts: ServiceOptions = {}): Promise<Service> {
  const metrics = createMetrics({ defaults: opts.defaultMetrics ?? true });
  metrics.redisConnected.set(0);
  const redis = createRedis(config, logger, metrics, 'cmd');
  // With WAIT, appends get their own connection: WAIT blocks the connection it runs on, and the
  // worker's reads and commits must not queue behind it.
  const writer = config.redisMinReplicas > 0 && config.role !== 'worker' ? createRedis(config, logger, metrics, 'write') : undefined;
  const log = new StreamLog(redis, config.redisPrefix, {
    maxLen: config.streamMaxLen,
    maxAgeS: config.streamMaxAgeS,
    dedupeTtlS: config.dedupeTtlS,
    minReplicas: config.redisMinReplicas,
    waitMs: config.redisWaitMs,
  }, writer);
  logger.info({ ...redisTarget(config), minReplicas: config.redisMinReplicas, logMaxLen: config.streamMaxLen }, 'connecting to Redis');
  metrics.sources.redisMemory = () => (redis.status === 'ready' ? log.memory() : Promise.resolve(undefined));
  await redis.connect().catch((err: Error) => logger.warn({ err: err.message }, 'Redis not reachable at start; retrying in the background'));
  await writer?.connect().catch(() => undefined);
  if (redis.status === 'ready') await warnIfNotPersistent(redis, logger);
  if (redis.status === 'ready') await warnIfNoMaxmemory(redis, logger);
  if (config.role !== 'worker' && config.redisMaxmemory === undefined) {
    if (redis.status === 'ready') {
      const misfit = await memoryMisfit(config, log);
      if (misfit) {
        redis.disconnect();
        writer?.disconnect();
        throw misfit;
      }
    } else {
      // Checked once Redis answers; a misfit then stops the process like at start.
      redis.once('ready', () => {
        void memoryMisfit(config, log).then((misfit) => {
          if (!misfit) return;
          logger.fatal({ err: misfit.message }, 'the per-site caps do not fit Redis maxmemory');
          opts.onFatal?.(misfit);
        });
      });
    }
  }
  // Every role trims: at maxmemory the appends (and their trim) are refused.
  const trimmer = new LogTrimmer(log, config.trimIntervalMs, logger);
  trimmer.start();

  let worker: Worker | undefined;
  let subscriber: Redis | undefined;
  if (config.role !== 'ingest') {
    subscriber = createRedis(config, logger, metrics, 'sub');
    await subscriber.connect().catch(() => undefined);
    worker = new Worker(config, log, subscriber, logger, metrics, opts.resolver);
    await worker.start();
  }

  const app = await buildApp({ config, redis, log, metrics, logger, workerNodes: worker ? () => worker.nodeCount : undefined });
  const url = await app.listen({ host: config.host, port: config.port });
  logger.info({ url, role: config.role, sites: config.sites, secrets: config.webhookSecrets.length }, 'purger listening');

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      // Stop taking requests (in-flight ones finish), then stop delivery (in-flight requests to
      // Varnish finish; the rest stays in the log for the next start), then Redis.
      await app.close();
      await worker?.stop();
      await trimmer.stop();
      await Promise.allSettled([redis.quit(), subscriber?.quit(), writer?.quit()]);
      redis.disconnect();
      writer?.disconnect();
      subscriber?.disconnect();
    })());
  return { app, worker, redis, metrics, log, url, close };
}

/** The fit of the caps against Redis's maxmemory (INFO memory: readable where CONFIG is disabled); 0 = none set, nothing to check. */
async function memoryMisfit(config: Config, log: StreamLog): Promise<ConfigError | undefined> {
  let maxBytes: number;
  try {
    maxBytes = (await log.memory()).maxBytes;
  } catch {
    return undefined; // Redis went away again; the 503s say so
  }
  if (maxBytes === 0) return undefined;
  const problem = memoryFitProblem(config, maxBytes, 'Redis maxmemory');
  return problem === undefined ? undefined : new ConfigError([`${problem} (or set PURGER_REDIS_MAXMEMORY to the memory the purger may use)`]);
}

async function warnIfNotPersistent(redis: Redis, logger: Logger): Promise<void> {
  try {
    const res = (await redis.call('CONFIG', 'GET', 'appendonly')) as string[];
    if (res[1] !== 'yes') {
      logger.warn('Redis runs without appendonly: accepted events survive a Redis restart only up to the last RDB snapshot; enable appendonly yes');
    }
  } catch {
    // CONFIG may be disabled on managed Redis; nothing to check then.
  }
}

/** Without maxmemory one tenant can grow Redis until the host kills it; with an evicting policy
 * Redis would silently drop the log. Only noeviction turns a full Redis into 503s the sender retries. */
async function warnIfNoMaxmemory(redis: Redis, logger: Logger): Promise<void> {
  try {
    const max = (await redis.call('CONFIG', 'GET', 'maxmemory')) as string[];
    const policy = (await redis.call('CONFIG', 'GET', 'maxmemory-policy')) as string[];
    if (max[1] === '0') logger.warn('Redis has no maxmemory: a flood of events can exhaust the host; set maxmemory with maxmemory-policy noeviction');
    if (policy[1] !== 'noeviction') logger.error({ policy: policy[1] }, 'Redis maxmemory-policy is not noeviction: at maxmemory Redis would evict log entries, receipts and cursors silently; set noeviction');
  } catch {
    // CONFIG may be disabled on managed Redis.
  }
}
