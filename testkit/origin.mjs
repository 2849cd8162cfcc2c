// A small origin for tests of invalidation: pages answer with their version (bumped by edit),
// xkey keys `p-<name>` and `l-home`, and a one-hour Surrogate-Control TTL; requests are counted
// per path.
import { createServer } from 'node:http';

export class Origin {
  hits = new Map();
  versions = new Map();
  slow = new Map();
  port = 0;

  static async start() {
    const o = new Origin();
    o.server = createServer((req, res) => o.answer(req, res));
    await new Promise((r) => o.server.listen(0, '127.0.0.1', r));
    o.port = o.server.address().port;
    return o;
  }

  answer(req, res) {
    const path = req.url ?? '/';
    this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
    const name = path.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'home';
    // The page is rendered from what the "database" holds when the request arrives (as
    // WordPress reads it), then sent, after a delay for a slowed request.
    const version = this.versions.get(path) ?? 1;
    const delay = this.slow.get(path) ?? 0;
    this.slow.delete(path);
    const send = () => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'surrogate-control': 'max-age=3600', xkey: `p-${name} l-home` });
      res.end(`${path} v${version}\n`);
    };
    if (delay > 0) setTimeout(send, delay);
    else send();
  }

  /** the next request for `path` reads the current version at once but answers `ms` later */
  slowOnce(path, ms) {
    this.slow.set(path, ms);
  }

  edit(path) {
    this.versions.set(path, (this.versions.get(path) ?? 1) + 1);
  }

  async stop() {
    this.server?.closeAllConnections();
    await new Promise((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}
