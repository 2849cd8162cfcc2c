// What the launchers share about their child processes: a private directory, stopping with a
// grace period, and the whole process tree for SIGSTOP/SIGCONT.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (testkit/..). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** A new directory under the system's temp dir, readable by services that drop privileges. */
export function tempDir(name) {
  const d = mkdtempSync(join(tmpdir(), `testkit-${name}-`));
  chmodSync(d, 0o755);
  return d;
}

/** Whether a child process is still running. */
export const running = (child) => child !== undefined && child.exitCode === null && child.signalCode === null;

/** Signals the child, then SIGKILLs it after graceMs; resolves once it has exited. */
export async function stopChild(child, signal = 'SIGTERM', graceMs = 5000) {
  if (!running(child)) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(t);
}

/** The child and its direct children (varnishd's manager and cache process, say). */
export function processTree(child) {
  if (!running(child)) return [];
  let kids = [];
  try {
    kids = execFileSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' }).split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // no children (yet)
  }
  return [child.pid, ...kids];
}

/** SIGSTOP (true) or SIGCONT (false) to the whole tree: connections are accepted, nothing answers. */
export function freeze(child, stopped) {
  for (const pid of processTree(child)) process.kill(pid, stopped ? 'SIGSTOP' : 'SIGCONT');
}
