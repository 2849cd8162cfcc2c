// Least privilege on the native stack (stack/lib.sh): started by root, no service runs as root
// unless it must hand work to an unprivileged user (nginx's and php-fpm's masters, the wp-cron
// timer loop), and each runs as its own user: the PHP pool and nginx's workers as the web user,
// MariaDB as mysql, Redis as redis, the purger as its own system user, varnishd as its own users.
// A local process of another user (nobody) cannot reach php-fpm's or MariaDB's socket, read or
// list the logs (the access log holds password-reset keys), or read wp-config.php and the
// secrets. Started by any other user, nothing of the stack may run as root. The purger build's
// lock (stack/services/purger.sh, run by root on make up) creates nothing in a shared temporary
// directory and follows no link planted there (purgerBuildLock, also a row of origin-hardening).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assert } from '../lib/common.mjs';

export const title = 'hostile: services run unprivileged; a local user reaches no socket, log or secret';

/** Every process of the ps table: pid → { ppid, user, comm }. */
function processes() {
  const out = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,user:32=,comm='], { encoding: 'utf8' });
  const map = new Map();
  for (const line of out.trim().split('\n')) {
    const [pid, ppid, user, ...comm] = line.trim().split(/\s+/);
    map.set(Number(pid), { ppid: Number(ppid), user, comm: comm.join(' ') });
  }
  return map;
}

/** A service's recorded pid and all its descendants. */
function tree(all, pid) {
  const out = [];
  const todo = [pid];
  while (todo.length) {
    const p = todo.pop();
    if (!all.has(p)) continue;
    out.push({ pid: p, ...all.get(p) });
    for (const [c, row] of all) if (row.ppid === p) todo.push(c);
  }
  return out;
}

/** Runs a command as nobody; returns its exit status and output. */
function asNobody(...cmd) {
  const r = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--', ...cmd], { encoding: 'utf8', timeout: 10_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

// Debian's interpreter: one under /root (pyenv) would fail for nobody whatever the socket allows.
const PYTHON = '/usr/bin/python3';
const CONNECT = "import socket, sys\ns = socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\nprint('connected')";

/**
 * `stack/services/purger.sh build` with TMPDIR a fresh directory where the lock file of old
 * (purger-build-<md5 of the purger dir>.lock) is a link planted to a file that does not exist: the
 * build must create neither the link's target nor anything else there. And the lock still holds:
 * while something holds purger/'s lock, the build waits for it.
 */
export async function purgerBuildLock(env) {
  const dir = join(env.repo, 'purger');
  const tmp = mkdtempSync(join(tmpdir(), 'lock-plant.'));
  const victim = join(tmp, 'victim-owned-by-root');
  const md5 = execFileSync('bash', ['-c', 'printf %s "$1" | md5sum | cut -c1-12', '-', dir], { encoding: 'utf8' }).trim();
  symlinkSync(victim, join(tmp, `purger-build-${md5}.lock`));
  const holder = spawn('flock', [dir, 'sleep', '3'], { stdio: 'ignore' });
  try {
    const t0 = Date.now();
    spawnSync('sleep', ['0.3']);   // the holder takes the lock first
    const r = spawnSync(join(env.repo, 'stack/services/purger.sh'), ['build'], { env: { ...process.env, TMPDIR: tmp }, encoding: 'utf8', timeout: 600_000 });
    const waited = Date.now() - t0;
    // Judged on the lock alone: a build that fails after taking it (purger/ being edited) still shows it.
    const built = r.status === 0 ? 'built' : 'the build itself failed';
    assert(!existsSync(victim), `the build followed the link planted in TMPDIR and created ${victim}`);
    const extra = readdirSync(tmp).filter((f) => f !== `purger-build-${md5}.lock`);
    assert(extra.length === 0, `the build created ${extra.join(', ')} in TMPDIR`);
    assert(waited >= 2500, `the build did not wait for the holder of purger/'s lock (${waited} ms)`);
    return `nothing created in TMPDIR; the build waited ${waited} ms for the lock's holder (${built})`;
  } finally {
    holder.kill();
    rmSync(tmp, { recursive: true, force: true });
  }
}

export async function run({ env, log }) {
  const all = processes();
  const pidOf = (name) => Number(readFileSync(join(env.dir, 'run', `${name}.pid`), 'utf8').trim());
  const services = ['mariadb', 'redis', 'php-fpm', 'nginx', 'purger', 'varnish', 'wp-cron'];
  const users = {};
  for (const svc of services) {
    const procs = tree(all, pidOf(svc)).filter((p) => !/^(sleep|timeout|bash|php)$/.test(p.comm) || p.pid === pidOf(svc));
    assert(procs.length > 0, `no process for ${svc}`);
    users[svc] = [...new Set(procs.map((p) => p.user))].sort();
  }
  log(`users per service: ${JSON.stringify(users)}`);

  if (process.getuid() !== 0) {
    for (const [svc, u] of Object.entries(users)) assert(!u.includes('root'), `${svc} runs as root although the stack was not started by root`);
    return { root: false, users };
  }

  const only = (svc, allowed) => {
    const extra = users[svc].filter((u) => !allowed.includes(u));
    assert(extra.length === 0, `${svc} runs as ${extra.join(', ')}; allowed: ${allowed.join(', ')}`);
  };
  only('mariadb', ['mysql']);
  only('redis', ['redis']);
  only('purger', ['varnish-edge']);
  only('php-fpm', ['root', 'www-data']);   // the master hands requests to the pool
  only('nginx', ['root', 'www-data']);     // the master binds and hands connections to the workers
  only('varnish', ['varnish', 'vcache']);
  only('wp-cron', ['root']);                // the timer loop; its PHP runs as the web user (below)
  const poolWorkers = tree(all, pidOf('php-fpm')).filter((p) => p.pid !== pidOf('php-fpm'));
  assert(poolWorkers.length > 0 && poolWorkers.every((p) => p.user === 'www-data'), 'the PHP pool does not run as www-data');
  const nginxWorkers = tree(all, pidOf('nginx')).filter((p) => p.pid !== pidOf('nginx'));
  assert(nginxWorkers.length > 0 && nginxWorkers.every((p) => p.user === 'www-data'), "nginx's workers do not run as www-data");

  // WordPress's CLI scripts (install, cron) run as the web user: what PHP reports.
  const phpUser = execFileSync('bash', ['-c', 'source stack/lib.sh; as_user "$WEB_USER" php -r "echo posix_getpwuid(posix_geteuid())[\'name\'];"'], { cwd: env.repo, encoding: 'utf8' }).trim();
  assert(phpUser === 'www-data', `stack PHP scripts run as ${phpUser}`);

  // A local process of another user.
  const refused = [];
  const sockets = [join(env.dir, 'run/php-fpm.sock'), join(env.dir, 'run/mysqld/mysqld.sock')];
  for (const s of sockets) {
    assert(statSync(s).isSocket(), `${s} is not a socket: the check could not fail`);
    assert((statSync(s).mode & 0o002) === 0 || (statSync(join(s, '..')).mode & 0o005) === 0, `${s} is reachable and world-writable`);
    const r = asNobody(PYTHON, '-c', CONNECT, s);
    assert(r.status !== 0 && /PermissionError/.test(r.out), `nobody connected to ${s}: ${r.out.trim()}`);
    refused.push(`connect ${s.replace(env.dir, '')}`);
  }
  const logDir = join(env.dir, 'log');
  const ls = asNobody('ls', logDir);
  assert(ls.status !== 0 && /Permission denied/.test(ls.out), `nobody listed ${logDir}: ${ls.out.trim()}`);
  const files = [...readdirSync(logDir).map((f) => join(logDir, f)), join(env.dir, 'wordpress/wp-config.php'), join(env.dir, 'secrets.env'), join(env.dir, 'conf/redis.conf')];
  assert(files.some((f) => f.endsWith('nginx-access.log')), 'no access log: the check could not fail');
  for (const f of files) {
    const mode = statSync(f).mode;
    assert((mode & 0o006) === 0, `${f.replace(env.dir, '')} is readable or writable by everyone (mode ${(mode & 0o777).toString(8)})`);
    const r = asNobody('cat', f);
    assert(r.status !== 0 && /Permission denied/.test(r.out), `nobody read ${f}`);
    refused.push(`read ${f.replace(env.dir, '')}`);
  }
  // The control: the web user does reach php-fpm's and MariaDB's sockets (the check can fail).
  for (const s of sockets) {
    const r = spawnSync('setpriv', ['--reuid=www-data', '--regid=www-data', '--init-groups', '--', PYTHON, '-c', CONNECT, s], { encoding: 'utf8' });
    assert(r.status === 0, `the web user cannot connect to ${s}: ${r.stderr}`);
  }
  log(`${refused.length} attempts by nobody refused; the web user reaches both sockets`);
  log(`purger build lock: ${await purgerBuildLock(env)}`);
  return { root: true, users, refused: refused.length };
}
