// The test kit's purger surroundings (testkit/purger-stack.mjs: Redis, the origin, varnishd
// nodes, purger processes) plus purger services in the test's own process, and the test
// constants, signer and event builders bound to the stack's site and secret.
import { loadConfig, type Config } from '../../src/config/load.js';
import type { Resolver } from '../../src/delivery/discovery.js';
import { createLogger } from '../../src/logger.js';
import { startService, type Service } from '../../src/service.js';
import { freePort } from '../../../testkit/ports.mjs';
import { PurgerStack, SITE, TEST_SECRET, type PurgerStackOptions } from '../../../testkit/purger-stack.mjs';
import { postEvents as post, urlEvent as urlEventOn } from '../../../testkit/events.mjs';
import { SentinelTopology } from './sentinel.js';

export { READ_AUTH, SITE, TEST_READ_TOKEN, TEST_SECRET, TEST_TOKEN, signedHeaders } from '../../../testkit/purger-stack.mjs';
export { eventId, tagEvent } from '../../../testkit/events.mjs';

export interface StackOptions extends PurgerStackOptions {
  /** Redis as a primary with two replicas behind three sentinels (the purger connects through them) */
  sentinel?: boolean;
}

export class Stack extends PurgerStack {
  services: Service[] = [];

  private constructor(base: PurgerStack) {
    super(base.redis, base.origin, base.varnishes, base.baseEnv, base.store);
  }

  static override async start(opts: StackOptions = {}): Promise<Stack> {
    const sentinel = opts.sentinel ? await SentinelTopology.start({ appendfsync: opts.appendfsync }) : undefined;
    return new Stack(await PurgerStack.start({ ...opts, ...(sentinel ? { store: sentinel } : {}) }));
  }

  /** set with `sentinel: true`; `redis` is then its first primary */
  get sentinel(): SentinelTopology | undefined {
    return this.store as SentinelTopology | undefined;
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

  async stopService(s: Service): Promise<void> {
    this.services = this.services.filter((x) => x !== s);
    await s.close();
  }

  override async close(): Promise<void> {
    await Promise.allSettled(this.services.map((s) => s.close()));
    await super.close();
  }
}

export interface PostResult {
  status: number;
  json: Record<string, unknown>;
}

/** POST /v1/events signed with the test secret (or opts.secret). */
export async function postEvents(baseUrl: string, body: unknown, opts: { id?: string; timestamp?: number; secret?: string } = {}): Promise<PostResult> {
  const r = await post(baseUrl, body, { secret: TEST_SECRET, ...opts });
  return { status: r.status, json: r.json ?? {} };
}

/** A hard invalidation of paths on the stack's site. */
export const urlEvent = (paths: string[], extra: Record<string, unknown> = {}) => urlEventOn(SITE, paths, extra);
