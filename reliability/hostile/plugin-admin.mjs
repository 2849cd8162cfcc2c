// The plugin's admin actions over real HTTP on the stack's WordPress: anonymous visitors, a
// subscriber and an editor (no manage_options), and an administrator without a nonce, with a
// forged nonce or with the nonce of another action, are all refused and send no invalidation;
// the administrator with the page's own nonce succeeds (so the check can fail). No page shown to
// an anonymous visitor or a non-admin user contains the webhook secret, the operator token or
// the purger's address, and the admin settings page does not print the secret either.
import { randomUUID } from 'node:crypto';
import { request } from '../../testkit/http.mjs';
import { until } from '../../testkit/wait.mjs';
import { assert, storedCount } from '../lib/common.mjs';
import { createUser, login, restAuth } from '../lib/wordpress.mjs';

export const title = 'hostile: plugin admin actions need the capability and a nonce; no secret shown';

export async function run(ctx) {
  const { env, log } = ctx;
  const auth = restAuth(ctx);
  const wp = (path, opts = {}) => request(env.origin, path, { host: env.site, ...opts });
  const tag = randomUUID().slice(0, 8);
  const pw = `Rel-${randomUUID()}`;
  await createUser(env, auth, `rel-sub-${tag}`, 'subscriber', pw);
  await createUser(env, auth, `rel-ed-${tag}`, 'editor', pw);
  const cookies = {
    anonymous: '',
    subscriber: await login(env, `rel-sub-${tag}`, pw),
    editor: await login(env, `rel-ed-${tag}`, pw),
    admin: await login(env, 'admin', env.secrets.ADMIN_PASSWORD),
  };

  // The administrator's real nonces, from the settings page and the admin bar.
  const page = await wp('/wp-admin/options-general.php?page=varnish-edge', { headers: { cookie: cookies.admin } });
  assert(page.status === 200, `settings page for the admin: ${page.status}`);
  const nonceOf = (action) => new RegExp(`name="action" value="${action}"[\\s\\S]*?name="_wpnonce" value="([0-9a-f]+)"`).exec(page.body)?.[1];
  const front = await wp('/', { headers: { cookie: cookies.admin } });
  const bar = front.body.replace(/&#0?38;|&amp;/g, '&');
  const linkNonce = (scope) => new RegExp(`action=varnish_edge_purge&scope=${scope}[^'"]*?_wpnonce=([0-9a-f]+)`).exec(bar)?.[1];
  const nonces = { test: nonceOf('varnish_edge_test'), flush: nonceOf('varnish_edge_flush_outbox'), purgeAll: linkNonce('all'), purgeUrl: linkNonce('url') };
  for (const [k, v] of Object.entries(nonces)) assert(v, `no ${k} nonce found for the admin: the plugin's admin UI changed`);

  const post = (cookie, action, nonce) => wp('/wp-admin/admin-post.php', {
    method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ action, ...(nonce ? { _wpnonce: nonce } : {}) }).toString(),
  });
  const purge = (cookie, scope, nonce) => wp(`/wp-admin/admin-post.php?action=varnish_edge_purge&scope=${scope}${nonce ? `&_wpnonce=${nonce}` : ''}`, { headers: { cookie } });

  const storedBefore = await storedCount(env, 'purger');
  const refusals = [];
  const refused = async (who, what, res) => {
    const r = await res;
    // Refused = WordPress stops with 400/403 (wp_die), or sends an anonymous visitor to log in.
    const ok = [400, 403].includes(r.status) || (who === 'anonymous' && r.status === 302 && /wp-login\.php/.test(r.headers.location || ''));
    assert(ok, `${who} ${what}: ${r.status} ${r.headers.location || ''}, want refused`);
    refusals.push(`${who} ${what} → ${r.status}`);
  };
  for (const who of ['anonymous', 'subscriber', 'editor']) {
    await refused(who, 'test connection', post(cookies[who], 'varnish_edge_test', nonces.test));
    await refused(who, 'deliver outbox', post(cookies[who], 'varnish_edge_flush_outbox', nonces.flush));
    await refused(who, 'purge all', purge(cookies[who], 'all', nonces.purgeAll));
    await refused(who, 'purge all (no nonce)', purge(cookies[who], 'all'));
    const settings = await wp('/wp-admin/options-general.php?page=varnish-edge', { headers: { cookie: cookies[who] } });
    assert(settings.status !== 200 || !settings.body.includes('varnish-edge-settings'), `${who} sees the settings page`);
    const save = await wp('/wp-admin/options.php', { method: 'POST', headers: { cookie: cookies[who], 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ option_page: 'varnish_edge', action: 'update', _wpnonce: nonces.test, 'varnish_edge_settings[purger_url]': 'http://evil.example' }).toString() });
    assert(save.status !== 302 || /wp-login\.php/.test(save.headers.location || ''), `${who} saved plugin settings: ${save.status} ${save.headers.location}`);
  }
  await refused('admin', 'test connection without nonce', post(cookies.admin, 'varnish_edge_test'));
  await refused('admin', 'deliver outbox with a forged nonce', post(cookies.admin, 'varnish_edge_flush_outbox', '0123456789'));
  await refused('admin', 'purge all without nonce', purge(cookies.admin, 'all'));
  await refused('admin', 'purge all with the purge-url nonce', purge(cookies.admin, 'all', nonces.purgeUrl));
  await refused('admin', 'purge all with the test-connection nonce', purge(cookies.admin, 'all', nonces.test));
  await new Promise((r) => setTimeout(r, 1000));
  assert((await storedCount(env, 'purger')) === storedBefore, 'a refused admin action sent an invalidation');

  // The administrator with the real nonce: accepted, and an event reaches the purger.
  const okRes = await purge(cookies.admin, 'all', nonces.purgeAll);
  assert(okRes.status === 302, `admin purge with its nonce: ${okRes.status}`);
  await until('the admin purge reaches the purger', async () => (await storedCount(env, 'purger')) > storedBefore, 30_000, 200);

  // Secrets: never in what anonymous visitors or non-admins get; the secret not even for admins.
  const secrets = {
    'webhook secret': env.secrets.WEBHOOK_SECRET, 'webhook key': env.secrets.WEBHOOK_SECRET.replace(/^whsec_/, ''),
    'operator token': env.secrets.OPERATOR_TOKEN, 'redis password': env.secrets.REDIS_PASSWORD, 'db password': env.secrets.DB_PASSWORD,
  };
  const purgerAddr = `127.0.0.1:${env.purgerPort}`;
  const views = {
    anonymous: ['/', '/feed/', '/wp-json/', '/wp-json/wp/v2/settings', '/wp-login.php', '/?rest_route=/'],
    subscriber: ['/', '/wp-admin/', '/wp-admin/profile.php', '/wp-json/', '/wp-json/wp/v2/settings', '/wp-admin/site-health.php', '/wp-admin/options-general.php?page=varnish-edge'],
    editor: ['/', '/wp-admin/', '/wp-admin/edit.php', '/wp-json/wp/v2/settings', '/wp-admin/site-health.php', '/wp-admin/options-general.php?page=varnish-edge'],
    admin: ['/wp-admin/options-general.php?page=varnish-edge', '/wp-admin/site-health.php', '/wp-admin/site-health.php?tab=debug'],
  };
  let pages = 0;
  for (const [who, paths] of Object.entries(views)) {
    for (const p of paths) {
      const viaEdge = who === 'anonymous';
      const r = await request(viaEdge ? env.edge : env.origin, p, { host: env.site, headers: cookies[who] ? { cookie: cookies[who] } : {} });
      const text = `${JSON.stringify(r.headers)}\n${r.body}`;
      pages++;
      for (const [name, value] of Object.entries(secrets)) assert(!text.includes(value), `${who} ${p} shows the ${name}`);
      if (who !== 'admin') assert(!text.includes(purgerAddr), `${who} ${p} shows the purger's address`);
    }
  }
  log(`${refusals.length} admin actions refused (no capability, no/forged/wrong nonce); the admin with the page's nonce purged; ${pages} pages checked for secrets`);
  return { refused: refusals.length, refusals, adminWithNonceAccepted: true, pagesCheckedForSecrets: pages, secretsShown: 0 };
}
