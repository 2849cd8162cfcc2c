// A whole test stack: redis-server, an origin, N varnishd nodes and the purger service (any role),
// plus a client that signs webhooks like the WordPress plugin does.
import { randomUUID } from 'node:crypto';
import { loadConfig, type Config } from '../../src/config.js';
import type { Resolver } from '../../src/discovery.js';
import { createLogger } from '../../src/logger.js';
import { startService, type Service } from '../../src/service.js';
import { signHeaders } from '../../../testkit/sign.mjs';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Origin, REPO_ROOT, RedisServer, VarnishServer, freePort } from './processes.js';
import { SentinelTopology } from './sentinel.js';

export const TEST_SECRET = 'whsec_cHVyZ2VyLXRlc3Qtc2VjcmV0LUEtMDEyMzQ1Njc4OWFi';
export const TEST_TOKEN = 'operator-token-0123456789';
export const TEST_READ_TOKEN = 'read-token-0123456789-abcdef';
/** headers for receipts, /metrics and /openapi.json */
export const READ_AUTH = { authorization: `Bearer ${TEST_READ_TOKEN}` };
export const SITE = 'example.test';

/** Signed like a sender would, by the test kit's independent Standard Webhooks library. */
export function signedHeaders(body: string, opts: { id?: string; timestamp?: number; secret?: string } = {}): Record<string, string> {
  return signHeaders(opts.secret ?? TEST_SECRET, body, { id: opts.id ?? `msg_${randomUUID()}`, timestamp: opts.timestamp ?? Math.floor(Date.now() / 1000) });
}

export interface StackOptions {
  nodes?: number;
  env?: Record<string, string>;
  logLevel?: string;
  appendfsync?: 'always' | 'everysec';
  /** per node: the X-Purge-Token its entry VCL requires (undefined: none) */
  purgeTokens?: (string | undefined)[];
  /** malloc storage of each varnishd (default 64 MB) */
  storageMb?: number;
  /** Redis as a primary with two replicas behind three sentinels (the purger connects through them) */
  sentinel?: boolean;
}

export class Stack {
  services: Service[] = [];
  processes: PurgerProcess[] = [];
  private constructor(
    readonly redis: RedisServer,
    readonly origin: Origin,
    readonly varnishes: VarnishServer[],
    readonly baseEnv: Record<string, string>,
    /** set with `sentinel: true`; `redis` is then its first primary */
    readonly sentinel?: SentinelTopology,
  ) {}

  static async start(opts: StackOptions = {}): Promise<Stack> {
    const sentinel = opts.sentinel ? await SentinelTopology.start({ appendfsync: opts.appendfsync }) : undefined;
    const redis = sentinel ? sentinel.servers[0]! : await RedisServer.start(opts.appendfsync);
    const origin = await Origin.start();
    const varnishes = await Promise.all(Array.from({ length: opts.nodes ?? 2 }, (_, i) => VarnishServer.start(origin.port, { purgeToken: opts.purgeTokens?.[i], ...(opts.storageMb ? { storageMb: opts.storageMb } : {}) })));
    const env: Record<string, string> = {
      REDIS_URL: redis.url,
      PURGER_WEBHOOK_SECRETS: TEST_SECRET,
      PURGER_OPERATOR_TOKEN: TEST_TOKEN,
      PURGER_READ_TOKEN: TEST_READ_TOKEN,
      PURGER_SITES: SITE,
      VARNISH_NODES: varnishes.map((v) => v.node).join(','),
      PURGER_REDIS_PREFIX: 'purger',
      PURGER_LOG_LEVEL: opts.logLevel ?? process.env.PURGER_TEST_LOG_LEVEL ?? 'silent',
      PURGER_POLL_MS: '200',
      PURGER_RETRY_BASE_MS: '50',
      PURGER_RETRY_MAX_MS: '500',
      PURGER_NODE_TIMEOUT_MS: '1000',
      ...sentinel?.env(),
      ...opts.env,
    };
    return new Stack(redis, origin, varnishes, env, sentinel);
  }

  config(env: Record<string, string> = {}): Config {
    return loadConfig({ ...this.baseEnv, ...env });
  }

  /** starts a purger service with the stack's environment plus `env` */
  async service(env: Record<string, string> = {}, opts: { resolver?: Resolver } = {}): Promise<Service> {
    const config = this.config({ PURGER_PORT: String(await freePort()), ...env });
    const s = await startService(config, createLogger(config.logLevel), { defaultMetrics: false, ...opts });
    this.services.push(s);
    return s;
  }

  /** runs the built service exactly as `npm start` does, in its own process */
  spawn(env: Record<string, string> = {}): PurgerProcess {
    const p = new PurgerProcess({ ...this.baseEnv, PURGER_PORT: '0', ...env });
    this.processes.push(p);
    return p;
  }

  async stopService(s: Service): Promise<void> {
    this.services = this.services.filter((x) => x !== s);
    await s.close();
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.processes.map((p) => p.stop()));
    await Promise.allSettled(this.services.map((s) => s.close()));
    await Promise.allSettled(this.varnishes.map((v) => v.destroy()));
    await this.origin.stop();
    if (this.sentinel) await this.sentinel.stop();
    else await this.redis.stop();
  }
}

export interface PostResult {
  status: number;
  json: Record<string, unknown>;
}

export async function postEvents(baseUrl: string, body: unknown, opts: { id?: string; timestamp?: number; secret?: string } = {}): Promise<PostResult> {
  const text = JSON.stringify(body);
  const res = await fetch(`${baseUrl}/v1/events`, { method: 'POST', headers: signedHeaders(text, opts), body: text });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

let counter = 0;
export function eventId(prefix = 'evt'): string {
  return `${prefix}-${process.pid}-${Date.now()}-${counter++}`;
}

export function urlEvent(paths: string[], extra: Record<string, unknown> = {}) {
  return { id: eventId(), kind: 'urls', urls: paths.map((p) => `http://${SITE}${p}`), soft: false, reason: 'test', time: new Date().toISOString(), ...extra };
}

export function tagEvent(tags: string[], extra: Record<string, unknown> = {}) {
  return { id: eventId(), kind: 'tags', tags, soft: false, reason: 'test', time: new Date().toISOString(), ...extra };
}

export class PurgerProcess {
  readonly child: ChildProcess;
  output = '';
  readonly exited: Promise<number | null>;

  constructor(env: Record<string, string>) {
    // The same node flags as `npm start` (package.json), without npm's wrapper process.
    const start = (JSON.parse(readFileSync(join(REPO_ROOT, 'purger/package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
    const args = start.split(' ').slice(1);
    this.child = spawn(process.execPath, args, {
      cwd: join(REPO_ROOT, 'purger'),
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout?.on('data', (d: Buffer) => (this.output += d.toString()));
    this.child.stderr?.on('data', (d: Buffer) => (this.output += d.toString()));
    this.exited = new Promise((r) => this.child.once('exit', (code) => r(code)));
  }

  kill(signal: NodeJS.Signals): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }

  async stop(): Promise<void> {
    this.kill('SIGKILL');
    await this.exited;
  }
}
