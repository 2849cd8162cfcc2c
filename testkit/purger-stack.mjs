// The purger's surroundings for its tests and its bench: Redis (or a deployment the caller
// started), the test origin, N varnishd nodes requiring the purge token, and the
// environment that points a purger at them; purger processes started from it are stopped with
// it. purger/test/support/stack.ts adds purger services in the test's own process.
import { Origin } from './origin.mjs';
import { PurgerProcess } from './purger.mjs';
import { RedisServer } from './redis.mjs';
import { signHeaders } from './sign.mjs';
import { TEST_PURGE_TOKEN, Varnish } from './varnish.mjs';

export const TEST_SECRET = 'whsec_cHVyZ2VyLXRlc3Qtc2VjcmV0LUEtMDEyMzQ1Njc4OWFi';
export const TEST_TOKEN = 'operator-token-0123456789';
export const TEST_READ_TOKEN = 'read-token-0123456789-abcdef';
/** headers for receipts, /metrics and /openapi.json */
export const READ_AUTH = { authorization: `Bearer ${TEST_READ_TOKEN}` };
export const SITE = 'example.test';

/** Headers of a webhook signed with the test secret (or opts.secret). */
export const signedHeaders = (body, { secret = TEST_SECRET, ...opts } = {}) => signHeaders(secret, body, opts);

export class PurgerStack {
  processes = [];

  constructor(redis, origin, varnishes, baseEnv, store) {
    Object.assign(this, { redis, origin, varnishes, baseEnv, store });
  }

  /**
   * opts: nodes (default 2), purgeToken (every node requires it; default TEST_PURGE_TOKEN),
   * storageMb, appendfsync, logLevel, env (added to the purger's), store (a Redis deployment
   * the caller started, such as a Sentinel topology: {servers, env(), stop()}; its first server
   * is `redis`, and it is stopped with the stack).
   */
  static async start(opts = {}) {
    const store = opts.store;
    const redis = store ? store.servers[0] : await RedisServer.start(opts.appendfsync);
    const origin = await Origin.start();
    const token = opts.purgeToken ?? TEST_PURGE_TOKEN;
    const varnishes = await Promise.all(Array.from({ length: opts.nodes ?? 2 }, () => Varnish.start({ backend: `127.0.0.1:${origin.port}`, token, storage: `malloc,${opts.storageMb ?? 64}m` })));
    const env = {
      REDIS_URL: redis.url,
      PURGER_WEBHOOK_SECRETS: TEST_SECRET,
      PURGER_OPERATOR_TOKEN: TEST_TOKEN,
      PURGER_READ_TOKEN: TEST_READ_TOKEN,
      PURGER_SITES: SITE,
      VARNISH_NODES: varnishes.map((v) => v.node).join(','),
      VARNISH_PURGE_TOKEN: token,
      PURGER_REDIS_PREFIX: 'purger',
      PURGER_LOG_LEVEL: opts.logLevel ?? process.env.PURGER_TEST_LOG_LEVEL ?? 'silent',
      PURGER_POLL_MS: '200',
      PURGER_RETRY_BASE_MS: '50',
      PURGER_RETRY_MAX_MS: '500',
      PURGER_NODE_TIMEOUT_MS: '1000',
      ...store?.env(),
      ...opts.env,
    };
    return new PurgerStack(redis, origin, varnishes, env, store);
  }

  /** runs the built service exactly as `npm start` does, in its own process */
  spawn(env = {}) {
    const p = new PurgerProcess({ ...this.baseEnv, PURGER_PORT: '0', ...env });
    this.processes.push(p);
    return p;
  }

  async close() {
    await Promise.allSettled(this.processes.map((p) => p.stop()));
    await Promise.allSettled(this.varnishes.map((v) => v.destroy()));
    await this.origin.stop();
    if (this.store) await this.store.stop();
    else await this.redis.stop();
  }
}
