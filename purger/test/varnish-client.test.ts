// What the purger puts on the wire to a node, read off a plain socket (Node's HTTP server
// refuses the PURGEKEYS method).
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VarnishClient } from '../src/delivery/varnish-client.js';

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
        socket.write('HTTP/1.1 200 OK\r\nX-Invalidated: 1\r\nContent-Length: 0\r\n\r\n');
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
