// A native stack of its own for the stack tests that run stack/*.sh steps one by one
// (site-check, core-refresh): a new state directory, free loopback ports, and run(script, ...args)
// with that environment. The caller stops what it started and removes stackDir.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePorts } from '../../testkit/ports.mjs';

export const repo = resolve(import.meta.dirname, '../..');

/**
 * scratchStack(name, { wpSource, demoPosts, timeoutMs }) -> Promise of { stackDir, wpDir, env, run }
 * run(script, ...args) -> { status, out }: a repository script (e.g. 'stack/up.sh') with the
 * stack's environment; out is everything it printed.
 */
export async function scratchStack(name, { wpSource, demoPosts, timeoutMs }) {
  const stackDir = mkdtempSync(join(tmpdir(), `${name}-stack.`));
  chmodSync(stackDir, 0o755);   // services running as other users reach their directories
  const [varnish, web, purger, redis] = (await freePorts(4)).map(String);
  const env = {
    ...process.env, STACK_DIR: stackDir, VARNISH_PORT: varnish, WEB_PORT: web, PURGER_PORT: purger, REDIS_PORT: redis,
    SITE_HOST: `localhost:${varnish}`, STACK_SKIP_DEPS: '1', DEMO_POSTS: String(demoPosts), WP_SOURCE: wpSource,
  };
  const run = (script, ...args) => {
    const r = spawnSync(join(repo, script), args, { cwd: repo, env, encoding: 'utf8', timeout: timeoutMs });
    return { status: r.status, out: `${r.stdout}${r.stderr}` };
  };
  return { stackDir, wpDir: join(stackDir, 'wordpress'), env, run };
}
