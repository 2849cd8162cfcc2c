// Types of redis.mjs for the purger's TypeScript tests and bench.
type Fsync = 'always' | 'everysec';
export class RedisServer {
  constructor(port: number, appendfsync?: Fsync, replicaOf?: number);
  static start(appendfsync?: Fsync, opts?: { replicaOf?: number }): Promise<RedisServer>;
  readonly port: number;
  readonly dir: string;
  get url(): string;
  start(): Promise<void>;
  kill(): Promise<void>;
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}
export class SentinelServer {
  constructor(port: number, masterName: string, primaryPort: number, password?: string);
  static start(masterName: string, primaryPort: number, opts?: { password?: string }): Promise<SentinelServer>;
  readonly port: number;
  readonly masterName: string;
  readonly password: string | undefined;
  get address(): string;
  start(): Promise<void>;
  stop(): Promise<void>;
}
