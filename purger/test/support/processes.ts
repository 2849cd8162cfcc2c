// Real parts for integration tests and the bench: redis-server, varnishd (loading the project's
// own vcl/microcache.vcl) and a small origin, each on a free loopback port, cleaned up on stop.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

/** repo root: purger/test/support → ../../.. */
export const REPO_ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createNetServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => res(port));
    });
  });
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((res) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      res(true);
    });
    s.once('error', () => res(false));
  });
}

function tempDir(name: string): string {
  const d = mkdtempSync(join(tmpdir(), `purger-${name}-`));
  chmodSync(d, 0o755);
  return d;
}

async function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill(signal);
  const t = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(t);
}

/** The store's programs: redis-server / redis-sentinel, or valkey-server / valkey-sentinel
 * (scripts/platforms.sh sets these for its Valkey cells). */
const STORE_SERVER = process.env.STORE_SERVER ?? 'redis-server';
const STORE_SENTINEL = process.env.STORE_SENTINEL ?? 'redis-sentinel';

export class RedisServer {
  private child: ChildProcess | undefined;
  readonly dir = tempDir('redis');
  constructor(
    readonly port: number,
    readonly appendfsync: 'always' | 'everysec' = 'always',
    /** start as a replica of the redis-server on this port */
    readonly replicaOf?: number,
  ) {}

  static async start(appendfsync: 'always' | 'everysec' = 'always', opts: { replicaOf?: number } = {}): Promise<RedisServer> {
    const r = new RedisServer(await freePort(), appendfsync, opts.replicaOf);
    await r.start();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.child = spawn(
      STORE_SERVER,
      [
        '--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--appendonly', 'yes', '--appendfsync', this.appendfsync, '--protected-mode', 'no',
        // replicas (and a replica promoted by Sentinel) sync at once instead of after 5 s
        '--repl-diskless-sync-delay', '0',
        ...(this.replicaOf !== undefined ? ['--replicaof', '127.0.0.1', String(this.replicaOf)] : []),
      ],
      { stdio: 'ignore' },
    );
    await waitFor(`${STORE_SERVER} on ${this.port}`, () => portOpen(this.port));
  }

  /** SIGKILL: no chance to flush anything but the fsynced AOF */
  async kill(): Promise<void> {
    await stopChild(this.child, 'SIGKILL');
  }

  /** SIGSTOP: connections stay open, nothing is answered (a replica that stops acknowledging) */
  pause(): void {
    if (this.child?.pid !== undefined && this.child.exitCode === null) process.kill(this.child.pid, 'SIGSTOP');
  }

  resume(): void {
    if (this.child?.pid !== undefined && this.child.exitCode === null) process.kill(this.child.pid, 'SIGCONT');
  }

  async stop(): Promise<void> {
    this.resume();
    await stopChild(this.child);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** One redis-sentinel monitoring `master` (quorum 2, primary declared down after 1 s). */
export class SentinelServer {
  private child: ChildProcess | undefined;
  readonly dir = tempDir('sentinel');
  constructor(
    readonly port: number,
    readonly masterName: string,
    private readonly primaryPort: number,
  ) {}

  static async start(masterName: string, primaryPort: number): Promise<SentinelServer> {
    const s = new SentinelServer(await freePort(), masterName, primaryPort);
    await s.start();
    return s;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    // Sentinel rewrites its configuration file, so it lives in the sentinel's own directory.
    const conf = join(this.dir, 'sentinel.conf');
    writeFileSync(
      conf,
      [
        `port ${this.port}`, 'bind 127.0.0.1', 'protected-mode no', `dir ${this.dir}`,
        `sentinel monitor ${this.masterName} 127.0.0.1 ${this.primaryPort} 2`,
        `sentinel down-after-milliseconds ${this.masterName} 1000`,
        `sentinel failover-timeout ${this.masterName} 10000`,
        `sentinel parallel-syncs ${this.masterName} 2`,
        '',
      ].join('\n'),
    );
    this.child = spawn(STORE_SENTINEL, [conf], { stdio: 'ignore' });
    await waitFor(`${STORE_SENTINEL} on ${this.port}`, () => portOpen(this.port));
  }

  async stop(): Promise<void> {
    await stopChild(this.child);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export class VarnishServer {
  private child: ChildProcess | undefined;
  readonly dir = tempDir('varnish');
  constructor(
    readonly port: number,
    private readonly originPort: number,
    /** when set, the entry VCL refuses PURGE/PURGEKEYS/BAN without `X-Purge-Token: <this>` (403) */
    readonly purgeToken?: string,
    /** malloc storage size */
    readonly storageMb = 64,
  ) {}

  static async start(originPort: number, opts: { purgeToken?: string; storageMb?: number } = {}): Promise<VarnishServer> {
    const v = new VarnishServer(await freePort(), originPort, opts.purgeToken, opts.storageMb);
    await v.start();
    return v;
  }

  get node(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const vcl = join(this.dir, 'test.vcl');
    writeFileSync(
      vcl,
      `vcl 4.1;\nbackend default { .host = "127.0.0.1"; .port = "${this.originPort}"; }\nacl purgers { "127.0.0.1"; }\n${this.tokenCheck()}include "${join(REPO_ROOT, 'vcl/microcache.vcl')}";\n`,
    );
    let stderr = '';
    this.child = spawn(
      'varnishd',
      [
        '-n', join(this.dir, 'n'), '-a', `127.0.0.1:${this.port}`, '-f', vcl, '-F', '-p', 'ban_lurker_age=0', '-s', `malloc,${this.storageMb}m`, '-T', 'none',
        // microcache.vcl's own includes resolve through vcl_path (as in the stack)
        '-p', `vcl_path=${join(REPO_ROOT, 'vcl')}:/usr/share/varnish/vcl`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    this.child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const child = this.child;
    await waitFor(`varnishd on ${this.port}`, async () => {
      if (child.exitCode !== null) throw new Error(`varnishd exited: ${stderr}`);
      return portOpen(this.port);
    }, 30_000);
  }

  /** runs before the project VCL's vcl_recv (VCL concatenates subs in the order they appear) */
  private tokenCheck(): string {
    if (this.purgeToken === undefined) return '';
    return `sub vcl_recv {
  if (req.method == "PURGE" || req.method == "PURGEKEYS" || req.method == "BAN") {
    if (req.http.X-Purge-Token != "${this.purgeToken}") { return (synth(403, "purge token missing or wrong")); }
  }
}
`;
  }

  /** every process of this varnishd: the manager and its cache child */
  private pids(): number[] {
    const pid = this.child?.pid;
    if (pid === undefined || this.child?.exitCode !== null) return [];
    let kids: number[] = [];
    try {
      kids = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).split(/\s+/).filter(Boolean).map(Number);
    } catch {
      // no children yet
    }
    return [pid, ...kids];
  }

  /** SIGSTOP: the node accepts connections but answers nothing (unreachable, cache kept) */
  pause(): void {
    for (const pid of this.pids()) process.kill(pid, 'SIGSTOP');
  }

  resume(): void {
    for (const pid of this.pids()) process.kill(pid, 'SIGCONT');
  }

  /** stops the whole varnishd (manager and child): its cache is gone */
  async stop(): Promise<void> {
    this.resume();
    await stopChild(this.child);
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** GET through Varnish; returns body, X-Cache and status */
  async get(host: string, path: string): Promise<{ status: number; body: string; cache: string }> {
    // undici.request, not fetch: fetch silently replaces the Host header.
    const res = await request(`http://127.0.0.1:${this.port}${path}`, { headers: { host } });
    const cache = res.headers['x-cache'];
    return { status: res.statusCode, body: await res.body.text(), cache: String(cache ?? '') };
  }
}

/**
 * Pages answer with their version (bumped by `edit`), xkey keys `p-<name>` and `l-home`, and a
 * one-hour Surrogate-Control TTL. Counts requests per path.
 */
export class Origin {
  readonly hits = new Map<string, number>();
  readonly versions = new Map<string, number>();
  private readonly slow = new Map<string, number>();
  private server: Server | undefined;
  port = 0;

  static async start(): Promise<Origin> {
    const o = new Origin();
    o.server = createServer((req, res) => {
      const path = req.url ?? '/';
      o.hits.set(path, (o.hits.get(path) ?? 0) + 1);
      const name = path.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'home';
      // The page is rendered from what the "database" holds when the request arrives (as
      // WordPress reads it), then sent, after a delay for a slowed request.
      const version = o.versions.get(path) ?? 1;
      const delay = o.slow.get(path) ?? 0;
      o.slow.delete(path);
      const send = (): void => {
        res.writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'surrogate-control': 'max-age=3600',
          xkey: `p-${name} l-home`,
        });
        res.end(`${path} v${version}\n`);
      };
      if (delay > 0) setTimeout(send, delay);
      else send();
    });
    await new Promise<void>((r) => o.server!.listen(0, '127.0.0.1', () => r()));
    const a = o.server.address();
    o.port = typeof a === 'object' && a ? a.port : 0;
    return o;
  }

  /** the next request for `path` reads the current version at once but answers `ms` later */
  slowOnce(path: string, ms: number): void {
    this.slow.set(path, ms);
  }

  edit(path: string): void {
    this.versions.set(path, (this.versions.get(path) ?? 1) + 1);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => this.server?.close(() => r()) ?? r());
  }
}
