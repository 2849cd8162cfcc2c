// WordPress of the stack: REST edits with the application password run.sh created, the
// plugin's outbox (read from MariaDB over the stack's socket), logins with cookies.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request } from '../../testkit/http.mjs';

const run = promisify(execFile);

export function restAuth(ctx) {
  if (!ctx.appPassword) throw new Error('REL_APP_PASSWORD is not set (run through reliability/run.sh)');
  return `Basic ${Buffer.from(`admin:${ctx.appPassword}`).toString('base64')}`;
}

/** Updates a post's content through the origin's REST API (the plugin sends its events). */
export async function editPost(env, auth, id, content) {
  const r = await request(env.origin, `/wp-json/wp/v2/posts/${id}`, { method: 'POST', host: env.site, headers: { authorization: auth }, body: { content }, timeoutMs: 60_000 });
  if (r.status !== 200) throw new Error(`edit post ${id}: ${r.status} ${r.body.slice(0, 200)}`);
  return JSON.parse(r.body);
}

/** SQL against the stack's MariaDB as the local superuser (unix socket authentication). */
export async function sql(env, query) {
  const { stdout } = await run('mariadb', ['--no-defaults', `--socket=${join(env.dir, 'run/mysqld/mysqld.sock')}`, '-N', '-B', 'wordpress', '-e', query], { timeout: 20_000 });
  return stdout.trim();
}

export const outboxRows = async (env) => Number(await sql(env, 'SELECT COUNT(*) FROM wp_varnish_edge_outbox'));

/** Logs in through wp-login.php on the origin; returns the Cookie header value. */
export async function login(env, user, password) {
  const r = await request(env.origin, '/wp-login.php', {
    method: 'POST', host: env.site,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: 'wordpress_test_cookie=WP%20Cookie%20check' },
    body: new URLSearchParams({ log: user, pwd: password, 'wp-submit': 'Log In', redirect_to: '/wp-admin/', testcookie: '1' }).toString(),
  });
  const cookies = (r.headers['set-cookie'] || []).map((c) => c.split(';')[0]).filter((c) => !c.endsWith('=deleted'));
  if (r.status !== 302 || !cookies.some((c) => c.startsWith('wordpress_logged_in_'))) throw new Error(`login as ${user} failed: ${r.status}`);
  return cookies.join('; ');
}

/** Creates a user with `role` through the REST API (admin application password). */
export async function createUser(env, auth, username, role, password) {
  const r = await request(env.origin, '/wp-json/wp/v2/users', {
    method: 'POST', host: env.site, headers: { authorization: auth },
    body: { username, password, email: `${username}@example.invalid`, roles: [role] },
  });
  if (r.status !== 201) throw new Error(`create user ${username}: ${r.status} ${r.body.slice(0, 200)}`);
  return JSON.parse(r.body);
}
