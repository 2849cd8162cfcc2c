// Hostile input at the edge, end to end on the stack's Varnish: PURGE, PURGEKEYS and BAN from
// outside `acl purgers` (a client on 127.0.0.2; the stack's ACL is 127.0.0.1 and ::1) are
// refused and invalidate nothing, a forged X-Forwarded-For does not help, and debug headers are
// not shown to outsiders. From inside the ACL, a PURGE without the purger's token, with a wrong
// one, or relayed (forwarding headers) is refused too. With the token it works, so the check
// can fail.
// (The VCL alone is proven by vcl/tests/invalidation-refused-outside-acl.vtc and
// debug-headers-not-shown-to-outsiders.vtc; this runs the deployed entry VCL.)
import { request } from '../../testkit/http.mjs';
import { assert, varnishBans } from '../lib/common.mjs';
import { postPaths, warm } from '../lib/cluster.mjs';

export const title = 'hostile: invalidation and debug headers refused outside the ACL';

const OUTSIDE = '127.0.0.2';

/** One request from a given local address, to the stack's Varnish. */
const from = (address, env, method, path, headers = {}) =>
  request(`http://127.0.0.1:${env.varnishPort}`, path, { method, headers, host: env.site, localAddress: address, timeoutMs: 10_000 });

export async function run({ env, log }) {
  const edge = { node: env.edge, get: (p, o = {}) => request(env.edge, p, { host: env.site, ...o }) };
  const [post] = await postPaths(env, 1);
  const page = post.path;
  await warm([edge], [page]);
  const inside = await from('127.0.0.1', env, 'GET', page, { 'x-cache-debug': '1' });
  const keys = String(inside.headers.xkey || '').split(/\s+/).filter(Boolean);
  assert(keys.length > 0 && inside.headers['x-url'], 'a trusted client with X-Cache-Debug sees no xkey/x-url: the debug check could not fail');
  const key = keys.find((k) => k.includes(`-${post.id}`)) ?? keys[0];
  const bansBefore = varnishBans(`${env.dir}/varnish`).length;

  const attempts = [
    ['PURGE', page, {}],
    ['PURGE', page, { 'x-purge-mode': 'soft' }],
    ['PURGE', page, { 'x-forwarded-for': '127.0.0.1' }],
    ['PURGEKEYS', '/', { 'xkey-purge': key }],
    ['PURGEKEYS', '/', { 'xkey-softpurge': key }],
    ['BAN', '/', { 'x-ban-host': env.site }],
    ['BAN', '/', { 'x-ban-host': env.site, 'x-ban-url': '^/' }],
    ['BAN', '/', { 'x-ban-host': env.site, 'x-forwarded-for': '127.0.0.1', 'x-real-ip': '127.0.0.1' }],
  ];
  const refused = [];
  for (const [method, path, headers] of attempts) {
    const r = await from(OUTSIDE, env, method, path, headers);
    assert(r.status === 403, `${method} ${path} ${JSON.stringify(headers)} from ${OUTSIDE}: ${r.status}, want 403`);
    refused.push(`${method} ${Object.keys(headers).join(',') || '-'}`);
  }
  const after = await edge.get(page);
  assert(after.headers['x-cache'] === 'HIT', `the page was invalidated by an outsider (X-Cache ${after.headers['x-cache']})`);
  const bansAfter = varnishBans(`${env.dir}/varnish`).length;
  assert(bansAfter <= bansBefore, `an outsider added a ban (${bansBefore} -> ${bansAfter})`);

  const internal = ['xkey', 'x-url', 'x-host', 'surrogate-control', 'x-backend-health'];
  const leaked = [];
  for (const headers of [{ 'x-cache-debug': '1' }, { 'x-cache-debug': '1', 'x-forwarded-for': '127.0.0.1' }, {}]) {
    for (const p of [page, '/', '/feed/']) {
      const r = await from(OUTSIDE, env, 'GET', p, headers);
      for (const h of internal) if (r.headers[h] !== undefined) leaked.push(`${p} ${h}`);
    }
  }
  assert(leaked.length === 0, `internal headers shown to an outsider: ${leaked.join(', ')}`);

  // Inside the ACL an address is not enough: the purger's token is needed, and a request that
  // came through a relay (forwarding headers) is refused even with it.
  const token = env.secrets.VARNISH_PURGE_TOKEN;
  assert(token, 'the stack has no VARNISH_PURGE_TOKEN: the token checks could not fail');
  const insideAttempts = [
    ['no token', {}],
    ['a wrong token', { 'x-purge-token': `${token}x` }],
    ['the token, relayed (X-Forwarded-For)', { 'x-purge-token': token, 'x-forwarded-for': '203.0.113.7' }],
    ['the token, relayed (Forwarded)', { 'x-purge-token': token, forwarded: 'for=203.0.113.7' }],
  ];
  for (const [what, headers] of insideAttempts) {
    const r = await from('127.0.0.1', env, 'PURGE', page, headers);
    assert(r.status === 403, `PURGE from 127.0.0.1 with ${what}: ${r.status}, want 403`);
    assert(!r.body.includes('127.0.0.1'), `the refusal echoes the client address: ${r.body.slice(0, 200)}`);
    refused.push(`PURGE inside the ACL with ${what}`);
  }
  assert((await edge.get(page)).headers['x-cache'] === 'HIT', 'a refused PURGE from inside the ACL invalidated the page');

  // The same purge from inside the ACL with the token works: the refusals above are the checks, not a broken request.
  const ok = await from('127.0.0.1', env, 'PURGE', page, { 'x-purge-token': token });
  assert(ok.status === 200 && (await edge.get(page)).headers['x-cache'] !== 'HIT', `PURGE from 127.0.0.1 with the token: ${ok.status}, page not purged`);
  log(`${refused.length} invalidation attempts refused with 403 (${attempts.length} from ${OUTSIDE}, ${insideAttempts.length} from inside without a valid, unrelayed token); nothing invalidated; no internal header leaked on ${3 * 3} debug requests`);
  return { refusedAttempts: refused.length, attempts: refused, leakedHeaders: 0, bansAdded: bansAfter - bansBefore };
}
