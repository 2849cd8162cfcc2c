// Hostile request headers at the origin, end to end with the stack's deployed entry VCL: a
// varnishd (conf/stack.vcl, backends moved to a tiny recording HTTP server on loopback) gets
// every scheme, host, method and client-address header a client can invent on a cacheable GET
// (a miss) and, after the 1 s TTL, on the request that starts the background refresh. The origin
// must see only the allowlisted headers (vcl/README.md), X-Forwarded-For = the client's address,
// one representative User-Agent per device class where the page varies on it (clients still see
// Vary: User-Agent), and a page whose Cache-Control says no-cache is not kept for its
// Surrogate-Control day. (The VCL alone: vcl/tests/origin-gets-only-allowlisted-headers-on-cacheable-fetches.vtc,
// origin-sees-the-client-address-only.vtc, vary-user-agent-keeps-one-copy-per-device-class.vtc,
// cache-control-no-cache-caps-surrogate-control-at-the-default-ttl.vtc.)
import http from 'node:http';
import { request } from '../../testkit/http.mjs';
import { freePort } from '../../testkit/ports.mjs';
import { sleep, until } from '../../testkit/wait.mjs';
import { assert, VarnishNode } from '../lib/common.mjs';

export const title = 'hostile: only allowlisted request headers reach the origin on cacheable fetches';

const HOSTILE = {
  'x-forwarded-ssl': 'on', 'cf-visitor': '{"scheme":"https"}', 'cloudfront-forwarded-proto': 'https',
  'x-proto': 'SSL', 'x-forwarded-scheme': 'https', 'front-end-https': 'on', 'x-url-scheme': 'https',
  'x-host': 'evil.example', 'x-forwarded-prefix': '/evil', 'x-http-method': 'DELETE',
  'x-method-override': 'DELETE', 'x-http-method-override': 'PUT', 'x-forwarded-host': 'evil.example',
  'x-forwarded-port': '444', 'x-forwarded-server': 'evil', forwarded: 'for=203.0.113.9;proto=https',
  'x-original-url': '/wp-admin/', 'x-rewrite-url': '/wp-admin/', origin: 'https://evil.example',
  'accept-language': 'fr', referer: 'https://evil.example/', 'x-forwarded-for': '203.0.113.9',
  'x-real-ip': '203.0.113.9', 'true-client-ip': '203.0.113.9', 'client-ip': '203.0.113.9',
  'cf-connecting-ip': '203.0.113.9', 'fastly-client-ip': '203.0.113.9', 'x-cluster-client-ip': '203.0.113.9',
  'x-invented-7c1f': 'poison', 'x-wp-nonce': 'abc', 'x-purge-token': 'guess',
};
// What a cacheable fetch may carry (vcl/README.md, "Request headers on cacheable fetches");
// Connection/Content-Length are transport.
const ALLOWED = /^(host|user-agent|accept|accept-encoding|x-forwarded-for|x-forwarded-proto|x-varnish|x-vinyl|x-mc-[a-z0-9-]+|connection|content-length)$/;
const DESKTOP_UA = /Windows NT 10\.0; Win64; x64.*Chrome\/[0-9.]+ Safari/;
const MOBILE_UA = /Android.*Mobile Safari/;

function recordingOrigin(port) {
  const seen = [];
  const server = http.createServer((req, res) => {
    if (req.url === '/robots.txt') { res.end('User-agent: *\n'); return; }
    seen.push({ url: req.url, headers: { ...req.headers }, at: Date.now() });
    const h = { 'content-type': 'text/html; charset=UTF-8' };
    if (req.url.startsWith('/ua/')) h.vary = 'Accept-Encoding, User-Agent';
    if (req.url.startsWith('/nonce/')) Object.assign(h, { 'surrogate-control': 'max-age=86400', 'cache-control': 'no-cache, must-revalidate, max-age=0' });
    res.writeHead(200, h);
    res.end(`<p>${req.url} ${seen.length} ${req.headers['user-agent'] ?? ''}</p>`);
  });
  return new Promise((r) => server.listen(port, '127.0.0.1', () => r({ seen, close: () => new Promise((c) => server.close(c)) })));
}

const get = (node, path, headers) => request(`http://${node}`, path, { headers, host: 'hostile.example', localAddress: '127.0.0.1', timeoutMs: 10_000 });

export async function run({ log, env }) {
  const originPort = await freePort();
  const origin = await recordingOrigin(originPort);
  const edge = new VarnishNode(env, 'origin-headers', await freePort(), { origin: `127.0.0.1:${originPort}` });
  try {
    await edge.start();
    const desktop = 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0';
    const wait = (url, n) => until(`${n} origin request(s) for ${url}`, () => origin.seen.filter((s) => s.url === url).length >= n, 10_000);

    // A miss, then (past the 1 s TTL) the request that starts the background refresh.
    const page = '/hostile/';
    const first = await get(edge.node, page, { ...HOSTILE, 'user-agent': desktop, accept: 'text/html', 'accept-encoding': 'gzip' });
    assert(first.status === 200, `miss: ${first.status}`);
    await sleep(1500);
    const stale = await get(edge.node, page, { ...HOSTILE, 'user-agent': desktop, accept: 'text/html', 'accept-encoding': 'gzip' });
    assert(stale.status === 200 && stale.body === first.body, 'the request after the TTL was not served the stale copy');
    await wait(page, 2);
    const fetches = origin.seen.filter((s) => s.url === page);
    const leaked = [];
    for (const [i, f] of fetches.entries()) {
      const kind = i === 0 ? 'miss' : 'background refresh';
      for (const name of Object.keys(f.headers)) if (!ALLOWED.test(name)) leaked.push(`${kind}: ${name}`);
      assert(f.headers['x-forwarded-for'] === '127.0.0.1', `${kind}: X-Forwarded-For ${f.headers['x-forwarded-for']}, want the client's 127.0.0.1`);
      assert(f.headers['x-forwarded-proto'] === 'http', `${kind}: X-Forwarded-Proto ${f.headers['x-forwarded-proto']}`);
      assert(f.headers.accept === 'text/html', `${kind}: Accept ${f.headers.accept} not passed on`);
      assert(DESKTOP_UA.test(f.headers['user-agent'] ?? ''), `${kind}: the origin saw User-Agent ${f.headers['user-agent']}, not the desktop representative`);
    }
    assert(leaked.length === 0, `headers outside the allowlist reached the origin: ${leaked.join(', ')}`);

    // Vary: User-Agent: one copy per device class, the origin sees the class' representative.
    const ua = '/ua/';
    const d1 = await get(edge.node, ua, { 'user-agent': desktop });
    const d2 = await get(edge.node, ua, { 'user-agent': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15' });
    const m1 = await get(edge.node, ua, { 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1' });
    const m2 = await get(edge.node, ua, { 'user-agent': 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/121.0.0.0 Mobile Safari/537.36' });
    const uaFetches = origin.seen.filter((s) => s.url === ua);
    assert(uaFetches.length === 2, `${uaFetches.length} origin fetches for 2 desktop and 2 mobile browsers, want 2 (one per class)`);
    assert(DESKTOP_UA.test(uaFetches[0].headers['user-agent']) && MOBILE_UA.test(uaFetches[1].headers['user-agent']), `the origin saw ${uaFetches.map((f) => f.headers['user-agent']).join(' | ')}, not the representatives`);
    assert(d1.body === d2.body && m1.body === m2.body && d1.body !== m1.body, 'desktops and phones do not get their own class\' copy');
    for (const r of [d1, m1]) assert(/user-agent/i.test(r.headers.vary ?? ''), `client Vary ${r.headers.vary}: Vary: User-Agent not passed on`);

    // Cache-Control: no-cache under a day-long Surrogate-Control: shared 1 s at most.
    const nonce = '/nonce/';
    await get(edge.node, nonce, {});
    await get(edge.node, nonce, {});
    const withinTtl = origin.seen.filter((s) => s.url === nonce).length;
    await sleep(1500);
    await get(edge.node, nonce, {});
    await wait(nonce, 2);
    const nonceFetches = origin.seen.filter((s) => s.url === nonce);
    const keptMs = nonceFetches[1].at - nonceFetches[0].at;
    assert(withinTtl === 1, `no-cache page fetched ${withinTtl} times within its second, want 1 (shared)`);

    log(`${Object.keys(HOSTILE).length} hostile headers on a miss and a background refresh: none reached the origin; X-Forwarded-For = 127.0.0.1; 4 browsers -> ${uaFetches.length} origin fetches (one per device class); no-cache page refetched after ${keptMs} ms despite Surrogate-Control: max-age=86400`);
    return {
      hostileHeadersSent: Object.keys(HOSTILE).length, cacheableFetchesChecked: fetches.length, leakedHeaders: leaked.length,
      originHeaders: Object.keys(fetches[0].headers).sort(), xForwardedFor: fetches[0].headers['x-forwarded-for'],
      deviceClassFetches: uaFetches.length, browsers: 4, noCacheRefetchedAfterMs: keptMs,
    };
  } finally {
    await edge.destroy();
    await origin.close();
  }
}
