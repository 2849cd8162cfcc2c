// Redis settings: one server or Sentinel, credentials, the replica wait and the log's memory cap.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_LOG_MAX_BYTES, LOG_ENTRY_BYTES, loadConfig } from '../src/config/load.js';
import { redisOptions, redisTarget } from '../src/store/redis-connection.js';

const base = { PURGER_ROLE: 'worker', VARNISH_NODES: 'v:80' };

function problems(env: Record<string, string>): string {
  try {
    loadConfig({ ...base, ...env });
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).problems.join('\n');
  }
  throw new Error('expected a ConfigError');
}

describe('Redis through Sentinel', () => {
  it('is off by default: one server from REDIS_URL, no replica wait', () => {
    const c = loadConfig(base);
    expect(c.redisSentinel).toBeUndefined();
    expect(c.redisMinReplicas).toBe(0);
    expect(redisOptions(c)).toMatchObject({ host: '127.0.0.1', port: 6379, db: 0 });
    expect(redisOptions(c).sentinels).toBeUndefined();
  });

  it('reads the sentinels and the master name; waits for one replica by default', () => {
    const c = loadConfig({ ...base, REDIS_SENTINELS: '10.0.0.1:26379, sentinel-b:26380,[::1]:26381', REDIS_SENTINEL_MASTER: 'mymaster', REDIS_SENTINEL_PASSWORD: 's3nt-pass', REDIS_URL: 'redis://:s3cr3t-pass@ignored:6379/2' });
    expect(c.redisSentinel).toEqual({
      sentinels: [{ host: '10.0.0.1', port: 26379 }, { host: 'sentinel-b', port: 26380 }, { host: '::1', port: 26381 }],
      masterName: 'mymaster',
      password: 's3nt-pass',
    });
    expect(c.redisMinReplicas).toBe(1);
    expect(c.redisWaitMs).toBe(500);
    const o = redisOptions(c);
    expect(o).toMatchObject({ name: 'mymaster', role: 'master', password: 's3cr3t-pass', sentinelPassword: 's3nt-pass', db: 2, failoverDetector: true });
    expect(o.sentinels).toEqual([{ host: '10.0.0.1', port: 26379 }, { host: 'sentinel-b', port: 26380 }, { host: '::1', port: 26381 }]);
    // a demoted primary's READONLY reconnects (to the new primary) and resends
    expect((o.reconnectOnError as (e: Error) => unknown)(new Error('READONLY You can\'t write against a read only replica.'))).toBe(2);
    expect((o.reconnectOnError as (e: Error) => unknown)(new Error('ERR other'))).toBe(false);
    // logs name addresses, never the password
    expect(JSON.stringify(redisTarget(c))).not.toMatch(/s3cr3t|s3nt/);
  });

  it('takes the passwords from dedicated variables or files, and the replica wait from the environment', () => {
    const dir = mkdtempSync(join(tmpdir(), 'purger-cfg-'));
    writeFileSync(join(dir, 'sp'), 'sentinel-secret\n');
    const c = loadConfig({
      ...base, REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_MASTER: 'm', REDIS_PASSWORD: 'data-secret',
      REDIS_SENTINEL_PASSWORD_FILE: join(dir, 'sp'), PURGER_REDIS_MIN_REPLICAS: '2', PURGER_REDIS_WAIT_MS: '250',
    });
    expect(redisOptions(c)).toMatchObject({ password: 'data-secret', sentinelPassword: 'sentinel-secret' });
    expect(c.redisMinReplicas).toBe(2);
    expect(c.redisWaitMs).toBe(250);
    expect(loadConfig({ ...base, REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_MASTER: 'm', REDIS_SENTINEL_PASSWORD: 'sp', PURGER_REDIS_MIN_REPLICAS: '0' }).redisMinReplicas).toBe(0);
    expect(loadConfig({ ...base, PURGER_REDIS_MIN_REPLICAS: '1' }).redisMinReplicas).toBe(1);
  });

  it('refuses half a Sentinel setup, bad addresses and two passwords, naming the variable and never the secret', () => {
    expect(problems({ REDIS_SENTINELS: 's:26379' })).toContain('REDIS_SENTINEL_MASTER: required with REDIS_SENTINELS');
    expect(problems({ REDIS_SENTINEL_MASTER: 'm' })).toContain('REDIS_SENTINELS: required with REDIS_SENTINEL_MASTER');
    expect(problems({ REDIS_SENTINELS: 's:26379,nope', REDIS_SENTINEL_MASTER: 'm' })).toContain('REDIS_SENTINELS: "nope" is not host:port');
    expect(problems({ REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_MASTER: 'bad name' })).toContain('REDIS_SENTINEL_MASTER="bad name"');
    const p = problems({ REDIS_URL: 'redis://:url-secret@r:6379', REDIS_PASSWORD: 'var-secret', REDIS_SENTINEL_PASSWORD: 'lonely-secret', PURGER_REDIS_WAIT_MS: '5' });
    expect(p).toContain('REDIS_PASSWORD and a password in REDIS_URL: set one, not both');
    expect(p).toContain('REDIS_SENTINEL_PASSWORD: set only with REDIS_SENTINELS');
    expect(p).toContain('PURGER_REDIS_WAIT_MS=5');
    expect(p).not.toMatch(/url-secret|var-secret|lonely-secret/);
  });

  it('refuses sentinels without their password, naming the setting', () => {
    expect(problems({ REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_MASTER: 'm', REDIS_PASSWORD: 'data-secret' })).toContain('REDIS_SENTINEL_PASSWORD: required with REDIS_SENTINELS');
    // an empty file is no password either
    const dir = mkdtempSync(join(tmpdir(), 'purger-cfg-'));
    writeFileSync(join(dir, 'empty'), '\n');
    const p = problems({ REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_MASTER: 'm', REDIS_SENTINEL_PASSWORD_FILE: join(dir, 'empty') });
    expect(p).toContain('the file is empty');
    expect(p).toContain('REDIS_SENTINEL_PASSWORD: required with REDIS_SENTINELS');
  });
});

describe('log bounded by memory', () => {
  it('caps the log at the memory budget over the cost of an entry', () => {
    expect(loadConfig(base).streamMaxLen).toBe(Math.floor(DEFAULT_LOG_MAX_BYTES / LOG_ENTRY_BYTES));
    expect(loadConfig({ ...base, PURGER_LOG_MAX_BYTES: String(30 * 1024 * 1024) }).streamMaxLen).toBe(Math.floor((30 * 1024 * 1024) / LOG_ENTRY_BYTES));
    // an explicit PURGER_STREAM_MAXLEN still applies when it is the lower of the two
    expect(loadConfig({ ...base, PURGER_STREAM_MAXLEN: '1000' }).streamMaxLen).toBe(1000);
    expect(loadConfig({ ...base, PURGER_STREAM_MAXLEN: '100000000', PURGER_LOG_MAX_BYTES: '3000000' }).streamMaxLen).toBe(10_000);
    expect(problems({ PURGER_LOG_MAX_BYTES: '1000' })).toContain('PURGER_LOG_MAX_BYTES=1000: must be between 65536');
  });

  it('the default log and a day of receipts at the default per-site rate fit the stack\'s 512 MB maxmemory', () => {
    const c = loadConfig(base);
    const logBytes = c.streamMaxLen * LOG_ENTRY_BYTES;
    const receiptsBytes = c.tenantLimits.events.perS * c.dedupeTtlS * 800;
    expect(logBytes + receiptsBytes).toBeLessThan(0.85 * 512 * 1024 * 1024);
  });
});
