// The origin's hardening on the native stack, each row on the running stack:
//   client address   through Varnish, PHP sees the client's own address (a client on 127.0.0.2),
//                    whatever X-Forwarded-For it forged; straight to the origin (from 127.0.0.3) a
//                    forged X-Forwarded-For is ignored; an anonymous comment is recorded with the
//                    client's address and held for moderation
//   uploads PHP      a .php dropped into wp-content/uploads is refused at the edge and at the
//                    origin, never executed
//   wp-cron/xmlrpc   /wp-cron.php and /xmlrpc.php are refused from outside (the stack runs cron
//                    itself; xmlrpc is opt-in, WEB_XMLRPC=1)
//   secrets          no php-fpm worker has the admin password or the webhook secret in its
//                    environment, nor has the PHP the cron runner starts
//   build lock       the purger build's lock creates nothing in TMPDIR and follows no link planted
//                    there, and still holds builds one at a time (local-privileges.mjs)
// Every row runs; the check fails naming each row that failed. The probes (a PHP file in the
// docroot, one in uploads, a mu-plugin for the cron run) are this temporary stack's, removed after.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request } from '../../testkit/http.mjs';
import { assert } from '../lib/common.mjs';
import { postPaths } from '../lib/cluster.mjs';
import { purgerBuildLock } from './local-privileges.mjs';

export const title = 'hostile: the origin sees real client addresses, runs no uploaded PHP, no public cron, no secrets in PHP';

const exec = promisify(execFile);
const CLIENT = '127.0.0.2';
const DIRECT = '127.0.0.3';
const FORGED = '203.0.113.9';

/** One request from a given local address; returns {status, body}. */
const from = (address, port, env, method, path, { headers = {}, body } = {}) =>
  request(`http://127.0.0.1:${port}`, path, { method, headers, body, host: env.site, localAddress: address, timeoutMs: 20_000 });

const sha = (v) => createHash('sha256').update(String(v)).digest('hex');
const sql = async (env, q) => (await exec(join(env.repo, 'stack/ctl.sh'), ['sql', q], { env: process.env })).stdout.trim();

export async function run({ env, log }) {
  const wp = join(env.dir, 'wordpress');
  const tag = randomBytes(6).toString('hex');
  const rows = [];
  const row = async (name, fn) => {
    try { const said = await fn(); rows.push({ name, ok: true }); log(`ok    ${name}${said ? `: ${said}` : ''}`); } catch (e) { rows.push({ name, ok: false, error: e.message }); log(`FAIL  ${name}: ${e.message}`); }
  };

  // ── client address ──
  const probe = `/oh-probe-${tag}.php`;
  writeFileSync(join(wp, probe), "<?php header('Cache-Control: no-store, private'); echo json_encode(['remote' => $_SERVER['REMOTE_ADDR'], 'env' => array_map(fn ($v) => hash('sha256', (string) $v), getenv())]);\n", { mode: 0o644 });
  try {
    await row('client address through Varnish is the client\'s', async () => {
      const r = await from(CLIENT, env.varnishPort, env, 'GET', `${probe}?a=${tag}`, { headers: { 'x-forwarded-for': FORGED, 'x-real-ip': FORGED } });
      assert(r.status === 200, `the probe answered ${r.status} through Varnish`);
      const seen = JSON.parse(r.body).remote;
      assert(seen === CLIENT, `PHP saw REMOTE_ADDR ${seen} for a client on ${CLIENT} (forged X-Forwarded-For ${FORGED})`);
      return `${CLIENT} seen as ${seen}`;
    });
    await row('a forged X-Forwarded-For straight to the origin is ignored', async () => {
      const r = await from(DIRECT, env.webPort, env, 'GET', `${probe}?b=${tag}`, { headers: { 'x-forwarded-for': FORGED } });
      assert(r.status === 200, `the probe answered ${r.status} at the origin`);
      const seen = JSON.parse(r.body).remote;
      assert(seen === DIRECT, `PHP saw REMOTE_ADDR ${seen} for a direct client on ${DIRECT} sending X-Forwarded-For ${FORGED}`);
      return `${DIRECT} seen as ${seen}`;
    });
    await row('no php-fpm worker has a secret in its environment', async () => {
      const secrets = { ADMIN_PASSWORD: env.secrets.ADMIN_PASSWORD, WEBHOOK_SECRET: env.secrets.WEBHOOK_SECRET };
      assert(Object.values(secrets).every((v) => v && v.length >= 16), 'the secrets read back too short: the row could not fail');
      // What PHP's getenv() answers in a request...
      const r = await from('127.0.0.1', env.webPort, env, 'GET', `${probe}?c=${tag}`);
      const hashes = new Set(Object.values(JSON.parse(r.body).env));
      // ...and every pool process's environment, as root reads it.
      const master = Number(readFileSync(join(env.dir, 'run/php-fpm.pid'), 'utf8').trim());
      const pids = [master, ...(await exec('pgrep', ['-P', String(master)])).stdout.split(/\s+/).filter(Boolean).map(Number)];
      assert(pids.length > 1, 'no php-fpm worker: the row could not fail');
      const found = [];
      for (const [k, v] of Object.entries(secrets)) {
        if (hashes.has(sha(v))) found.push(`${k} in getenv()`);
        for (const pid of pids) {
          let environ = '';
          try { environ = readFileSync(`/proc/${pid}/environ`, 'latin1'); } catch { continue; }
          if (environ.includes(v)) found.push(`${k} in /proc/${pid}/environ`);
        }
      }
      assert(found.length === 0, found.join(', '));
      return `${pids.length} processes, getenv() with ${hashes.size} variables`;
    });
  } finally {
    rmSync(join(wp, probe), { force: true });
  }

  await row('the cron runner\'s PHP has no admin password or webhook secret in its environment', async () => {
    const plugin = join(wp, 'wp-content/mu-plugins', `zz-oh-probe-${tag}.php`);
    writeFileSync(plugin, "<?php if (PHP_SAPI === 'cli') { fwrite(STDOUT, 'oh-probe-env ' . json_encode(array_map(fn ($v) => hash('sha256', (string) $v), getenv())) . \"\\n\"); }\n", { mode: 0o644 });
    let out;
    try {
      out = (await exec(join(env.repo, 'stack/ctl.sh'), ['wp', 'cron'], { env: process.env, timeout: 120_000 })).stdout;
    } finally {
      rmSync(plugin, { force: true });
    }
    const line = out.split('\n').find((l) => l.startsWith('oh-probe-env '));
    assert(line, 'the cron run did not load the probe: the row could not fail');
    const hashes = new Set(Object.values(JSON.parse(line.slice('oh-probe-env '.length))));
    const found = ['ADMIN_PASSWORD', 'WEBHOOK_SECRET'].filter((k) => hashes.has(sha(env.secrets[k])));
    assert(found.length === 0, `in the cron run's environment: ${found.join(', ')}`);
    return `${hashes.size} variables, none a secret`;
  });

  await row('an anonymous comment through Varnish: the client\'s address, held for moderation', async () => {
    const [post] = await postPaths(env, 1);
    const text = `Origin hardening ${tag}`;
    const form = new URLSearchParams({ comment_post_ID: String(post.id), author: `Visitor ${tag}`, email: `v${tag}@example.com`, comment: text }).toString();
    const r = await from(CLIENT, env.varnishPort, env, 'POST', '/wp-comments-post.php', { headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': FORGED }, body: form });
    assert(r.status === 302, `POST /wp-comments-post.php answered ${r.status}: ${r.body.slice(0, 200)}`);
    const got = await sql(env, `SELECT comment_author_IP, comment_approved FROM wp_comments WHERE comment_content = '${text}'`);
    const [ip, approved] = got.split('\t');
    const wrong = [];
    if (ip !== CLIENT) wrong.push(`recorded from ${ip}, not ${CLIENT}`);
    if (approved !== '0') wrong.push(`published at once (comment_approved=${approved}), not held for moderation`);
    assert(wrong.length === 0, wrong.join('; '));
    return `${ip}, approved=${approved}`;
  });

  // ── uploads PHP ──
  await row('PHP under wp-content/uploads is refused, never executed', async () => {
    const names = [`oh-probe-${tag}.php`, `oh-probe-${tag}.PHP`, `oh-probe-${tag}.phtml`];
    const dir = join(wp, 'wp-content/uploads');
    for (const n of names) writeFileSync(join(dir, n), '<?php echo "exec" . "uted-" . (6 * 7);\n', { mode: 0o644 });
    const seen = [];
    try {
      for (const n of names) {
        for (const [where, port] of [['edge', env.varnishPort], ['origin', env.webPort]]) {
          const r = await from('127.0.0.1', port, env, 'GET', `/wp-content/uploads/${n}?${tag}`);
          seen.push(`${where} ${n.replace(tag, '*')} ${r.status}`);
          assert(!r.body.includes('executed-42'), `${where}: /wp-content/uploads/${n} was executed`);
          assert(r.status === 403 || r.status === 404, `${where}: /wp-content/uploads/${n} answered ${r.status} (source served?)`);
        }
      }
    } finally {
      for (const n of names) rmSync(join(dir, n), { force: true });
    }
    return seen.join(', ');
  });

  // ── wp-cron, xmlrpc ──
  await row('/wp-cron.php and /xmlrpc.php are refused from outside', async () => {
    const seen = [];
    for (const path of ['/wp-cron.php', '/xmlrpc.php']) {
      for (const [where, port, address] of [['edge', env.varnishPort, CLIENT], ['origin', env.webPort, DIRECT]]) {
        const r = await from(address, port, env, path === '/xmlrpc.php' ? 'POST' : 'GET', `${path}?${tag}`,
          path === '/xmlrpc.php' ? { headers: { 'content-type': 'text/xml' }, body: '<?xml version="1.0"?><methodCall><methodName>system.listMethods</methodName></methodCall>' } : {});
        seen.push(`${where} ${path} ${r.status}`);
        assert(r.status === 403, `${where}: ${path} answered ${r.status}, not 403`);
      }
    }
    return seen.join(', ');
  });

  // ── the purger build's lock ──
  await row('the purger build lock: nothing in TMPDIR, a planted link not followed, builds one at a time', async () => purgerBuildLock(env));

  const failed = rows.filter((r) => !r.ok);
  assert(failed.length === 0, `${failed.length} of ${rows.length} rows failed: ${failed.map((r) => `${r.name} (${r.error})`).join('; ')}`);
  return { rows: rows.length };
}
