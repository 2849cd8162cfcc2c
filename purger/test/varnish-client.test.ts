// What the purger puts on the wire to a node and how it reads the answers, off a plain socket
// (Node's HTTP server refuses the PURGEKEYS method).
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SendError, VarnishClient } from '../src/delivery/varnish-client.js';

/** by the request's Host: how the node answers (else 200) */
const body = (status: string, text: string) => `HTTP/1.1 ${status}\r\nContent-Length: ${text.length}\r\n\r\n${text}`;
const ANSWERS: Record<string, string> = {
  'vcl-failed.test': body('503 VCL failed', '503 VCL failed\n'),
  'busy.test': body('503 Service Unavailable', '503 Backend fetch failed\n'),
  'too-long.test': body('400 Bad Request', ''),
  'forbidden.test': body('403 Forbidden', '403 Forbidden\n'),
};

let server: Server;
const received: { method: string; headers: Record<string, string> }[] = [];
let client: VarnishClient;

beforeAll(async () => {
  server = createServer((socket) => {
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      for (let end = buffered.indexOf('\r\n\r\n'); end >= 0; end = buffered.indexOf('\r\n\r\n')) {
        const [requestLine = '', ...lines] = buffered.slice(0, end).split('\r\n');
        buffered = buffered.slice(end + 4);
        const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        received.push({ method: requestLine.split(' ')[0]!, headers });
        socket.write(ANSWERS[headers.host ?? ''] ?? 'HTTP/1.1 200 OK\r\nX-Invalidated: 1\r\nContent-Length: 0\r\n\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = new VarnishClient('n1', '127.0.0.1', (server.address() as AddressInfo).port, { connections: 1, timeoutMs: 2000, purgeToken: 'purge-token-0123456789' });
});

afterAll(async () => {
  await client.close();
  await new Promise((resolve) => server.close(resolve));
});

describe('PURGEKEYS', () => {
  it("names the site in X-Purge-Host, hard and soft, next to the keys and the token", async () => {
    await client.send({ kind: 'purgekeys', site: 'localhost:8080', soft: false, keys: ['ve-p-1', 've-p-2'], eventIds: ['e1'] });
    await client.send({ kind: 'purgekeys', site: 'example.com', soft: true, keys: ['ve-p-3'], eventIds: ['e2'] });
    expect(received.map((r) => [r.method, r.headers.host, r.headers['x-purge-host'], r.headers['xkey-purge'] ?? r.headers['xkey-softpurge'], r.headers['x-purge-token']])).toEqual([
      ['PURGEKEYS', 'localhost:8080', 'localhost:8080', 've-p-1 ve-p-2', 'purge-token-0123456789'],
      ['PURGEKEYS', 'example.com', 'example.com', 've-p-3', 'purge-token-0123456789'],
    ]);
  });
});

describe('a node answer', () => {
  it('is a SendError saying whether the same request may succeed later (transient) or never (refused)', async () => {
    const verdict = async (site: string): Promise<string> => {
      try {
        await client.send({ kind: 'purgekeys', site, soft: false, keys: ['k'], eventIds: ['e'] });
        return 'applied';
      } catch (err) {
        return `${(err as SendError).verdict}: ${(err as SendError).message}`;
      }
    };
    expect(await verdict('vcl-failed.test')).toBe('refused: PURGEKEYS to n1 answered 503: 503 VCL failed');
    expect(await verdict('busy.test')).toBe('transient: PURGEKEYS to n1 answered 503: 503 Backend fetch failed');
    expect(await verdict('too-long.test')).toBe('refused: PURGEKEYS to n1 answered 400');
    expect(await verdict('forbidden.test')).toBe('transient: PURGEKEYS to n1 answered 403: 403 Forbidden');
    expect(await verdict('ok.test')).toBe('applied');
    // a header HTTP cannot carry: refused before it leaves, and the connection pool goes on
    const bad = await client.send({ kind: 'purgekeys', site: 'ok.test', soft: false, keys: ['k\r\nx: y'], eventIds: ['e'] }).catch((e: SendError) => e);
    expect(bad).toBeInstanceOf(SendError);
    expect((bad as SendError).verdict).toBe('refused');
    expect((bad as SendError).message).toBe('PURGEKEYS to n1 not sent: its xkey-purge header holds a character HTTP does not allow');
    expect(await verdict('ok.test')).toBe('applied');
  });

  it('carries no refresh generation: no X-Purge-Keep-Gen on an invalidation, no X-Refresh-Gen on a refresh', async () => {
    received.length = 0;
    await client.send({ kind: 'purge', site: 'ok.test', soft: false, path: '/p/', eventIds: ['e'] });
    await client.send({ kind: 'ban', site: 'ok.test', eventIds: ['e'] });
    await client.refresh({ site: 'ok.test', path: '/p/', https: false }).catch(() => undefined);
    expect(received.map((r) => r.method)).toEqual(['PURGE', 'BAN', 'GET']);
    for (const r of received) expect(Object.keys(r.headers).filter((h) => h.endsWith('-gen'))).toEqual([]);
  });
});
