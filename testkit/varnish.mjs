// The one way tests start a varnishd: its entry VCL rendered by vcl/render-entry.sh (the template
// the stack and the images use) around the shipped vcl/microcache.vcl, run by the launcher the
// stack and the images use (stack/launch/varnishd.sh: its vcl_path and parameters), so tests
// exercise the VCL and the settings that ship, the purge token check included.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from './http.mjs';
import { freePort } from './ports.mjs';
import { REPO_ROOT, freeze, running, stopChild, tempDir } from './process.mjs';
import { portOpen, until } from './wait.mjs';

/** The project's one varnishd launcher (the fixed flags; it execs varnishd). */
const VARNISHD = join(REPO_ROOT, 'stack/launch/varnishd.sh');

/** The purge token test Varnish nodes require unless told otherwise. */
export const TEST_PURGE_TOKEN = 'varnish-purge-token-for-tests-0123';

/** The entry VCL vcl/render-entry.sh prints for these options. */
export function renderEntry({ backend, tokenFile, purgers, includes = [] }) {
  const args = ['--backend', backend, '--token-file', tokenFile];
  if (purgers !== undefined) args.push('--purgers', purgers);
  for (const inc of includes) args.push('--include', inc);
  return execFileSync(join(REPO_ROOT, 'vcl/render-entry.sh'), args, { encoding: 'utf8' });
}

export class Varnish {
  /**
   * backend: 'HOST:PORT' of the origin; token (written to a file here) or tokenFile: the purge
   * token the node requires; purgers, includes: as render-entry.sh takes them; dir: where the
   * node keeps its files (default a new temp dir, removed by destroy); storage: -s; params: -p,
   * after the launcher's own (so they win over them).
   */
  constructor({ backend, port, token = TEST_PURGE_TOKEN, tokenFile, purgers, includes, dir, storage = 'malloc,64m', params = {} }) {
    Object.assign(this, { backend, port, token, purgers, includes, storage });
    this.params = { ban_lurker_age: '0', ...params };
    this.dir = dir ?? tempDir('varnish');
    this.tokenFile = tokenFile ?? join(this.dir, 'purge_token');
    this.ownsTokenFile = tokenFile === undefined;
    /** varnishd's -n: varnishadm and varnishstat reach the node through it */
    this.workdir = join(this.dir, 'n');
  }

  static async start(opts) {
    const v = new Varnish(opts);
    await v.start();
    return v;
  }

  get node() {
    return `127.0.0.1:${this.port}`;
  }

  async start() {
    this.port ??= await freePort();
    mkdirSync(this.dir, { recursive: true });
    if (this.ownsTokenFile) writeFileSync(this.tokenFile, `${this.token}\n`, { mode: 0o644 });
    const vcl = join(this.dir, 'entry.vcl');
    writeFileSync(vcl, renderEntry(this));
    const params = Object.entries(this.params).flatMap(([k, v]) => ['-p', `${k}=${v}`]);
    let stderr = '';
    // -F: in the foreground, the child is varnishd's manager itself (the launcher execs it).
    this.child = spawn(VARNISHD, ['-F', '-n', this.workdir, '-a', this.node, '-f', vcl, '-s', this.storage, ...params], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child.stderr.on('data', (d) => { stderr = (stderr + d.toString()).slice(-4000); });
    const child = this.child;
    await until(`varnishd on ${this.port}`, async () => {
      if (!running(child)) throw new Error(`varnishd exited: ${stderr}`);
      return portOpen(this.port);
    }, 30_000);
  }

  /** SIGSTOP: the node accepts connections but answers nothing (unreachable, cache kept) */
  pause() { freeze(this.child, true); }
  resume() { freeze(this.child, false); }

  /** stops the whole varnishd (manager and child): its cache is gone */
  async stop() {
    this.resume();
    await stopChild(this.child, 'SIGTERM', 10_000);
  }

  async destroy() {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /**
   * Polls `path` every everyMs until it answers `body`; resolves to the ms from `since` (a
   * Date.now()) to the start of that request: when a visitor got the edited page.
   */
  async freshAfter(host, path, body, since, limitMs = 30_000, everyMs = 10) {
    let ms;
    await until(`${path} answers the edited page on ${this.node}`, async () => {
      const started = Date.now();
      if ((await this.get(host, path)).body !== body) return false;
      ms = started - since;
      return true;
    }, limitMs, everyMs);
    return ms;
  }

  /** GET through the node with Host: host; the answer plus its X-Cache. */
  async get(host, path, opts = {}) {
    const r = await request(`http://${this.node}`, path, { host, ...opts });
    return { ...r, cache: String(r.headers['x-cache'] ?? '') };
  }
}
