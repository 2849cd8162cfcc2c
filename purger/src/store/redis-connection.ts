// Redis connections from the configuration: one server (REDIS_URL) or the primary that Redis
// Sentinel names (REDIS_SENTINELS + REDIS_SENTINEL_MASTER). Failover is ioredis's own: on a lost
// connection it asks the sentinels for the current primary, and `failoverDetector` makes it
// reconnect as soon as the sentinels announce a switch. Credentials go in as options, never into
// a log line.
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config/load.js';
import type { Metrics } from '../metrics.js';

/** cmd: commands; sub: the subscriber; write: appends followed by WAIT */
export type ConnectionName = 'cmd' | 'sub' | 'write';

type RedisSettings = Pick<Config, 'redisUrl' | 'redisPassword' | 'redisSentinel'>;

const retryStrategy = (times: number): number => Math.min(100 * 2 ** Math.min(times, 6), 2000);

/** ioredis options for this configuration (without the per-connection ones). */
export function redisOptions(config: RedisSettings): RedisOptions {
  const url = new URL(config.redisUrl);
  const db = Number(url.pathname.replace(/^\//, '') || 0) || 0;
  const password = config.redisPassword ?? (url.password !== '' ? decodeURIComponent(url.password) : undefined);
  const username = url.username !== '' ? decodeURIComponent(url.username) : undefined;
  const tls = url.protocol === 'rediss:' ? {} : undefined;
  const common: RedisOptions = {
    ...(password !== undefined ? { password } : {}),
    ...(username !== undefined ? { username } : {}),
    db,
    ...(tls ? { tls } : {}),
    retryStrategy,
  };
  const s = config.redisSentinel;
  if (!s) return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 6379), ...common };
  return {
    ...common,
    sentinels: s.sentinels.map((a) => ({ host: a.host, port: a.port })),
    name: s.masterName,
    role: 'master',
    sentinelPassword: s.password,
    ...(tls ? { enableTLSForSentinelMode: true } : {}),
    // Reconnect when the sentinels announce +switch-master, not only when the old primary's
    // connection breaks (a primary that is demoted but alive would keep answering READONLY).
    failoverDetector: true,
    sentinelRetryStrategy: retryStrategy,
    // A demoted primary answers writes with READONLY: reconnect (asks the sentinels) and resend.
    reconnectOnError: (err: Error) => (/^READONLY/.test(err.message) ? 2 : false),
  };
}

/** Where Redis is, for logs: addresses only. */
export function redisTarget(config: RedisSettings): Record<string, unknown> {
  const s = config.redisSentinel;
  if (s) return { sentinels: s.sentinels.map((a) => `${a.host}:${a.port}`), master: s.masterName };
  const url = new URL(config.redisUrl);
  return { redis: `${url.protocol}//${url.host}${url.pathname}` };
}

export function createRedis(config: RedisSettings, logger: Logger, metrics: Metrics, name: ConnectionName): Redis {
  const redis = new Redis({
    ...redisOptions(config),
    lazyConnect: true,
    // Commands fail fast while disconnected (the API answers 503) instead of queueing in memory;
    // the subscriber only has its SUBSCRIBE, which may wait for the connection.
    enableOfflineQueue: name === 'sub',
    maxRetriesPerRequest: 1,
    commandTimeout: 5000,
    connectionName: `purger-${name}`,
  });
  let down = false;
  redis.on('ready', () => {
    if (name === 'cmd') metrics.redisConnected.set(1);
    if (down) logger.info({ connection: name }, 'Redis connection restored');
    down = false;
  });
  redis.on('error', (err: Error) => {
    if (!down) logger.warn({ connection: name, err: err.message }, 'Redis connection error; reconnecting');
    down = true;
  });
  redis.on('close', () => {
    if (name === 'cmd') metrics.redisConnected.set(0);
  });
  return redis;
}
