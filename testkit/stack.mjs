// The native stack a test was given by testkit/stack.sh (with_temp_stack NAME node --test FILE):
// its state directory, ports and settings come from the environment that temp_stack_env
// exported; this module only reads them and runs the stack's own scripts with them.
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

export const repo = resolve(import.meta.dirname, '..');

/**
 * givenStack({ timeoutMs, ...settings }) -> { stackDir, wpDir, env, run }
 * settings (WP_SOURCE, DEMO_POSTS, ...) are added to the environment every script gets.
 * run(script, ...args) -> { status, out }: a repository script (e.g. 'stack/up.sh') with that
 * environment; out is everything it printed.
 */
export function givenStack({ timeoutMs, ...settings }) {
  const stackDir = process.env.STACK_DIR;
  if (!stackDir || !process.env.VARNISH_PORT) {
    throw new Error('no test stack in the environment: run under testkit/stack.sh, e.g. '
      + "bash -c 'source testkit/stack.sh; with_temp_stack NAME node --test FILE' from the repository root");
  }
  const env = { ...process.env, ...Object.fromEntries(Object.entries(settings).map(([k, v]) => [k, String(v)])) };
  const run = (script, ...args) => {
    const r = spawnSync(join(repo, script), args, { cwd: repo, env, encoding: 'utf8', timeout: timeoutMs });
    return { status: r.status, out: `${r.stdout}${r.stderr}` };
  };
  return { stackDir, wpDir: join(stackDir, 'wordpress'), env, run };
}
