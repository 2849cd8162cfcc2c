// The one way tests start the built purger as its own process: the node flags of `npm start`
// (purger/package.json), without npm's wrapper, with exactly the environment given.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { request } from './http.mjs';
import { REPO_ROOT, running } from './process.mjs';
import { until } from './wait.mjs';

export class PurgerProcess {
  /**
   * env: the whole environment besides PATH; main: the built entry point (default
   * purger/dist/main.js; a copy works when its package.json sits one folder up, as in purger/).
   */
  constructor(env, { main = join(REPO_ROOT, 'purger/dist/main.js') } = {}) {
    const dir = dirname(dirname(main));
    const start = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).scripts.start;
    const args = start.split(' ').slice(1).map((a) => (a === 'dist/main.js' ? main : a));
    /** PURGER_PORT as given ('0': the process picks one, and url says nothing useful) */
    this.port = Number(env.PURGER_PORT);
    this.url = `http://${env.PURGER_HOST ?? '127.0.0.1'}:${this.port}`;
    this.output = '';
    this.child = spawn(process.execPath, args, { cwd: dir, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (d) => { this.output += d.toString(); };
    this.child.stdout.on('data', keep);
    this.child.stderr.on('data', keep);
    /** the exit code, or the signal that ended it */
    this.exited = new Promise((r) => this.child.once('exit', (code, signal) => r(code ?? signal)));
  }

  get pid() {
    return this.child.pid;
  }

  /** Waits until `path` answers 200 (the process must listen on PURGER_PORT); fails if it exits. */
  async ready(path = '/healthz', limitMs = 30_000) {
    await until(`purger ${path} at ${this.url}`, async () => {
      if (!running(this.child)) throw new Error(`purger exited with ${this.child.exitCode ?? this.child.signalCode}: ${this.output.slice(-600)}`);
      return (await request(this.url, path, { timeoutMs: 1000 })).status === 200;
    }, limitMs);
    return this;
  }

  kill(signal = 'SIGKILL') {
    if (running(this.child)) this.child.kill(signal);
    return this.exited;
  }

  async stop() {
    await this.kill('SIGKILL');
  }
}
