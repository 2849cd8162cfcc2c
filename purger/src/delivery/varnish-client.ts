// Sends one invalidation or refresh request to one Varnish node (docs/protocol.md §2) over keep-alive pools.
import { Pool } from 'undici';
import type { Invalidation } from './coalesce.js';
import { classifyAnswer, classifyError } from './reshape.js';

export interface SendResult {
  status: number;
  invalidated: number;
}

/** Transient failures are retried; a refused shape is never sent again as it was (reshape.ts). */
export class SendError extends Error {
  constructor(
    message: string,
    readonly verdict: 'transient' | 'refused',
    /** the node refused the TCP connection: nothing listens there (process down) */
    readonly connRefused = false,
  ) {
    super(message);
  }
}

export function requestFor(inv: Invalidation): { method: string; path: string; headers: Record<string, string> } {
  switch (inv.kind) {
    case 'purge':
      return {
        method: 'PURGE',
        path: inv.path,
        headers: { host: inv.site, ...(inv.soft ? { 'x-purge-mode': 'soft' } : {}) },
      };
    case 'purgekeys':
      // xkey keys are not host-scoped; X-Purge-Host names the site so the VCL refuses to keep
      // only that site's pages whose fetch was in flight.
      return {
        method: 'PURGEKEYS',
        path: '/',
        headers: {
          host: inv.site,
          'x-purge-host': inv.site,
          [inv.soft ? 'xkey-softpurge' : 'xkey-purge']: inv.keys.join(' '),
        },
      };
    case 'ban':
      return {
        method: 'BAN',
        path: '/',
        headers: {
          host: inv.site,
          'x-ban-host': inv.site,
          ...(inv.banUrl !== undefined ? { 'x-ban-url': inv.banUrl } : {}),
        },
      };
  }
}

/** a header value HTTP/1.1 carries as it is: visible ASCII, spaces and tabs */
const SENDABLE = /^[\t\x20-\x7e]*$/;

/** Which copy of a page a refresh fills (plain-copy.vcl keeps one per encoding). */
export type RefreshCopy = 'gzip' | 'plain';

/** What a node did with a refresh request (its X-Refresh answer). */
export type RefreshOutcome = 'fetched' | 'cached' | 'skipped';
const REFRESH_OUTCOMES: ReadonlySet<string> = new Set<RefreshOutcome>(['fetched', 'cached', 'skipped']);

export class VarnishClient {
  private readonly pool: Pool;
  /** refreshes wait on origin renders: their own connections, so they never hold up an invalidation */
  private refreshPool: Pool | undefined;
  private readonly origin: string;

  constructor(
    readonly node: string,
    host: string,
    port: number,
    private readonly opts: { connections: number; timeoutMs: number; purgeToken?: string | undefined; refreshConnections?: number },
  ) {
    const h = host.includes(':') ? `[${host}]` : host;
    this.origin = `http://${h}:${port}`;
    this.pool = this.newPool(opts.connections);
  }

  private newPool(connections: number): Pool {
    return new Pool(this.origin, {
      connections,
      pipelining: 1,
      connectTimeout: this.opts.timeoutMs,
      headersTimeout: this.opts.timeoutMs,
      bodyTimeout: this.opts.timeoutMs,
      keepAliveTimeout: 4000,
    });
  }

  /** The purge token header (never part of an error message or a log line). */
  private withToken(headers: Record<string, string>): Record<string, string> {
    return this.opts.purgeToken === undefined ? headers : { ...headers, 'x-purge-token': this.opts.purgeToken };
  }

  /**
   * Asks the node to re-fetch one page it just invalidated (docs/protocol.md §2, refresh): its
   * gzipped copy, or with `copy` 'plain' the copy readers without gzip get (the node fetches that
   * one only if such a reader read the page lately). The page itself is read and dropped. Throws
   * a SendError when the node did not say what it did.
   */
  async refresh({ site, path, https }: { site: string; path: string; https: boolean }, copy: RefreshCopy = 'gzip'): Promise<RefreshOutcome> {
    this.refreshPool ??= this.newPool(Math.max(1, this.opts.refreshConnections ?? 1));
    let res: Awaited<ReturnType<Pool['request']>>;
    const headers = { host: site, 'x-refresh': https ? 'https' : '1', 'x-refresh-copy': copy, 'accept-encoding': 'gzip' };
    try {
      res = await this.refreshPool.request({ method: 'GET', path, headers: this.withToken(headers) });
      // read to the end (and drop), so the connection is reused
      for await (const _ of res.body) void _;
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new SendError(`refresh GET to ${this.node} failed: ${e.code ?? e.name}`, 'transient', e.code === 'ECONNREFUSED');
    }
    const h = res.headers['x-refresh'];
    const outcome = String(Array.isArray(h) ? h[0] : (h ?? ''));
    // a page the origin now answers with a 404 or a redirect was fetched all the same
    const ok = res.statusCode < 300 || (outcome === 'fetched' && res.statusCode < 500);
    if (res.statusCode >= 200 && ok && REFRESH_OUTCOMES.has(outcome)) return outcome as RefreshOutcome;
    throw new SendError(`refresh GET to ${this.node} answered ${res.statusCode}${outcome ? ` (X-Refresh: ${outcome})` : ' without X-Refresh'}`, 'transient');
  }

  async send(inv: Invalidation): Promise<SendResult> {
    const req = requestFor(inv);
    // A value undici would refuse is refused here: undici 7.30 leaves a one-connection pool
    // hanging after such a request, and every later one would wait for ever.
    const bad = Object.entries(req.headers).find(([, v]) => !SENDABLE.test(v));
    if (bad) throw new SendError(`${req.method} to ${this.node} not sent: its ${bad[0]} header holds a character HTTP does not allow`, 'refused');
    let res: Awaited<ReturnType<typeof this.pool.request>>;
    try {
      // The shared secret Varnish requires besides its ACL (docs/protocol.md §2).
      res = await this.pool.request({ method: req.method, path: req.path, headers: this.withToken(req.headers) });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const code = e.code ?? e.name;
      throw new SendError(`${req.method} to ${this.node} failed: ${code}`, classifyError(code), code === 'ECONNREFUSED');
    }
    const text = await res.body.text().catch(() => '');
    const verdict = classifyAnswer(res.statusCode, text);
    if (verdict === 'applied') {
      const h = res.headers['x-invalidated'];
      const n = Number(Array.isArray(h) ? h[0] : h);
      return { status: res.statusCode, invalidated: Number.isFinite(n) ? n : 0 };
    }
    const detail = text.replace(/\s+/g, ' ').trim().slice(0, 300);
    throw new SendError(`${req.method} to ${this.node} answered ${res.statusCode}${detail ? `: ${detail}` : ''}`, verdict);
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.close().catch(() => undefined), this.refreshPool?.close().catch(() => undefined)]);
  }
}
