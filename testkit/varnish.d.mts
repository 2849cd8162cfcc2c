// Types of varnish.mjs for the purger's TypeScript tests and bench.
import type { Answer, RequestOptions } from './http.mjs';

export const TEST_PURGE_TOKEN: string;
export interface EntryOptions {
  backend: string;
  tokenFile: string;
  purgers?: string;
  includes?: string[];
}
export function renderEntry(opts: EntryOptions): string;

export interface VarnishOptions {
  backend: string;
  port?: number;
  token?: string;
  tokenFile?: string;
  purgers?: string;
  includes?: string[];
  dir?: string;
  storage?: string;
  params?: Record<string, string>;
}

export class Varnish {
  constructor(opts: VarnishOptions);
  static start(opts: VarnishOptions): Promise<Varnish>;
  readonly backend: string;
  port: number;
  readonly dir: string;
  readonly workdir: string;
  readonly tokenFile: string;
  get node(): string;
  start(): Promise<void>;
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
  destroy(): Promise<void>;
  freshAfter(host: string, path: string, body: string, since: number, limitMs?: number, everyMs?: number): Promise<number>;
  get(host: string, path: string, opts?: RequestOptions): Promise<Answer & { cache: string }>;
}
