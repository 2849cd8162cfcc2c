// Minimal HTTP client of the stale-page audit (make audit): connects to one address while sending
// another site's Host header (what Varnish and the origin see), never follows redirects, keeps
// connections alive. Node's built-in http/https only. The tests use it too, through
// testkit/http.mjs, so this production tool never imports test code.
import http from 'node:http';
import https from 'node:https';

// An idle connection is closed after 4 s, before Varnish's timeout_idle (5 s) closes it: reusing
// one the server is closing at that moment ends in "socket hang up" (seen on a busy machine).
const pool = { keepAlive: true, maxSockets: 8, timeout: 4000 };
const agents = { 'http:': new http.Agent(pool), 'https:': new https.Agent(pool) };

/**
 * request(base, path, opts) -> {status, headers, body, ms}
 * base: where to connect ("http://127.0.0.1:8080"); opts.host: Host header to send;
 * opts.method, opts.headers, opts.body (string or object -> JSON), opts.timeoutMs;
 * opts.localAddress: connect from that address (its own connection, no keep-alive pool).
 */
export function request(base, path, opts = {}) {
  const url = new URL(path, base);
  const lib = url.protocol === 'https:' ? https : http;
  const headers = { 'user-agent': 'varnish-edge-audit/1', ...(opts.headers || {}) };
  if (opts.host) headers.host = opts.host;
  let body = opts.body;
  if (body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body)) {
    body = JSON.stringify(body);
    headers['content-type'] = 'application/json';
  }
  if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = lib.request(url, {
      method: opts.method || 'GET', headers,
      ...(opts.localAddress ? { localAddress: opts.localAddress, agent: false } : { agent: agents[url.protocol] }),
      servername: opts.host ? opts.host.replace(/:\d+$/, '') : undefined,
      rejectUnauthorized: opts.insecure ? false : undefined,
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({
        status: res.statusCode, headers: res.headers,
        body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started,
      }));
      res.on('error', reject);
    });
    req.setTimeout(opts.timeoutMs ?? 30000, () => req.destroy(new Error(`timeout: ${opts.method || 'GET'} ${url}`)));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
