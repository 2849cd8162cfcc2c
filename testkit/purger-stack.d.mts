// Types of purger-stack.mjs for the purger's TypeScript tests and bench.
import type { Origin } from './origin.mjs';
import type { PurgerProcess } from './purger.mjs';
import type { RedisServer } from './redis.mjs';
import type { Varnish } from './varnish.mjs';

export const TEST_SECRET: string;
export const TEST_TOKEN: string;
export const TEST_READ_TOKEN: string;
export const READ_AUTH: { authorization: string };
export const SITE: string;
export function signedHeaders(body: string, opts?: { id?: string; timestamp?: number; secret?: string }): Record<string, string>;

/** A Redis deployment the caller started (a Sentinel topology). */
export interface StartedStore {
  readonly servers: RedisServer[];
  env(): Record<string, string>;
  stop(): Promise<void>;
}

export interface PurgerStackOptions {
  nodes?: number;
  purgeToken?: string;
  storageMb?: number;
  appendfsync?: 'always' | 'everysec';
  logLevel?: string;
  env?: Record<string, string>;
  store?: StartedStore;
}

export class PurgerStack {
  protected constructor(redis: RedisServer, origin: Origin, varnishes: Varnish[], baseEnv: Record<string, string>, store?: StartedStore);
  static start(opts?: PurgerStackOptions): Promise<PurgerStack>;
  readonly redis: RedisServer;
  readonly origin: Origin;
  readonly varnishes: Varnish[];
  readonly baseEnv: Record<string, string>;
  readonly store?: StartedStore;
  processes: PurgerProcess[];
  spawn(env?: Record<string, string>): PurgerProcess;
  close(): Promise<void>;
}
