// redis-server and redis-sentinel (or valkey-server / valkey-sentinel: STORE_SERVER and
// STORE_SENTINEL, set by scripts/platforms.sh for its Valkey cells) on free loopback ports, run by
// the launcher the stack and the images use (stack/launch/redis-server.sh: the program, and the
// store's fixed flags: append-only, no snapshots, noeviction).
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './ports.mjs';
import { REPO_ROOT, freeze, stopChild, tempDir } from './process.mjs';
import { portOpen, until } from './wait.mjs';

const LAUNCHER = join(REPO_ROOT, 'stack/launch/redis-server.sh');

/** Starts the launcher with `args` (it execs the server: the child is the server) and waits until it listens on port. */
async function listen(what, args, port) {
  const child = spawn(LAUNCHER, args, { stdio: 'ignore' });
  await until(`${what} on ${port}`, () => portOpen(port));
  return child;
}

export class RedisServer {
  dir = tempDir('redis');

  /** appendfsync: 'always' | 'everysec'; replicaOf: start as a replica of the server on that port */
  constructor(port, appendfsync = 'always', replicaOf = undefined) {
    Object.assign(this, { port, appendfsync, replicaOf });
  }

  static async start(appendfsync = 'always', { replicaOf } = {}) {
    const r = new RedisServer(await freePort(), appendfsync, replicaOf);
    await r.start();
    return r;
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start() {
    this.child = await listen('the store (redis-server.sh)', [
      '--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--appendfsync', this.appendfsync, '--protected-mode', 'no',
      // replicas (and a replica promoted by Sentinel) sync at once instead of after 5 s
      '--repl-diskless-sync-delay', '0',
      ...(this.replicaOf !== undefined ? ['--replicaof', '127.0.0.1', String(this.replicaOf)] : []),
    ], this.port);
  }

  /** SIGKILL: no chance to flush anything but the fsynced AOF */
  async kill() { await stopChild(this.child, 'SIGKILL'); }

  /** SIGSTOP: connections stay open, nothing is answered (a replica that stops acknowledging) */
  pause() { freeze(this.child, true); }
  resume() { freeze(this.child, false); }

  async stop() {
    this.resume();
    await stopChild(this.child);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * One sentinel monitoring `masterName` (quorum 2, primary declared down after 1 s), requiring
 * `password` (requirepass: also what it sends the other sentinels), as the purger demands.
 */
export class SentinelServer {
  dir = tempDir('sentinel');

  constructor(port, masterName, primaryPort, password) {
    Object.assign(this, { port, masterName, primaryPort, password });
  }

  static async start(masterName, primaryPort, { password } = {}) {
    const s = new SentinelServer(await freePort(), masterName, primaryPort, password);
    await s.start();
    return s;
  }

  get address() {
    return `127.0.0.1:${this.port}`;
  }

  async start() {
    // Sentinel rewrites its configuration file, so it lives in the sentinel's own directory.
    const conf = join(this.dir, 'sentinel.conf');
    const m = this.masterName;
    writeFileSync(conf, [
      `port ${this.port}`, 'bind 127.0.0.1', 'protected-mode no', `dir ${this.dir}`,
      ...(this.password !== undefined ? [`requirepass ${this.password}`] : []),
      `sentinel monitor ${m} 127.0.0.1 ${this.primaryPort} 2`, `sentinel down-after-milliseconds ${m} 1000`,
      `sentinel failover-timeout ${m} 10000`, `sentinel parallel-syncs ${m} 2`, '',
    ].join('\n'), { mode: 0o600 });
    this.child = await listen('the sentinel (redis-server.sh --sentinel)', ['--sentinel', conf], this.port);
  }

  async stop() {
    await stopChild(this.child);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
