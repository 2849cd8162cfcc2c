// Sends one invalidation request to one Varnish node (docs/protocol.md §2) over a keep-alive pool.
import { Pool } from 'undici';
import type { Invalidation } from './coalesce.js';

export interface SendResult {
  status: number;
  invalidated: number;
  /** body text on non-2xx (the VCL says why) */
  detail?: string;
}

/** Transient failures are retried; a permanent one (a 4xx that retrying cannot fix) is not. */
export class SendError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
    /** the node refused the TCP connection: nothing listens there (process down) */
    readonly refused: boolean,
  ) {
    super(message);
  }
}

export function requestFor(inv: Invalidation): { method: string; path: string; headers: Record<string, string> } {
  switch (inv.kind) {
    case 'purge':
      return { method: 'PURGE', path: inv.path, headers: { host: inv.site, ...(inv.soft ? { 'x-purge-mode': 'soft' } : {}) } };
    case 'purgekeys':
      // xkey keys are not host-scoped; X-Purge-Host names the site so the VCL refuses to keep
      // only that site's pages whose fetch was in flight.
      return {
        method: 'PURGEKEYS',
        path: '/',
        headers: { host: inv.site, 'x-purge-host': inv.site, [inv.soft ? 'xkey-softpurge' : 'xkey-purge']: inv.keys.join(' ') },
      };
    case 'ban':
      return {
        method: 'BAN',
        path: '/',
        headers: { host: inv.site, 'x-ban-host': inv.site, ...(inv.banUrl !== undefined ? { 'x-ban-url': inv.banUrl } : {}) },
      };
  }
}

export class VarnishClient {
  private readonly pool: Pool;

  constructor(
    readonly node: string,
    host: string,
    port: number,
    private readonly opts: { connections: number; timeoutMs: number; purgeToken?: string | undefined },
  ) {
    const h = host.includes(':') ? `[${host}]` : host;
    this.pool = new Pool(`http://${h}:${port}`, {
      connections: opts.connections,
      pipelining: 1,
      connectTimeout: opts.timeoutMs,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
      keepAliveTimeout: 4000,
    });
  }

  async send(inv: Invalidation): Promise<SendResult> {
    const req = requestFor(inv);
    let res: Awaited<ReturnType<typeof this.pool.request>>;
    try {
      // The shared secret Varnish requires besides its ACL (docs/protocol.md §2). Never part of
      // an error message or a log line.
      const headers = this.opts.purgeToken === undefined ? req.headers : { ...req.headers, 'x-purge-token': this.opts.purgeToken };
      res = await this.pool.request({ method: req.method, path: req.path, headers });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const code = e.code ?? e.name;
      // An argument undici refuses will be refused again: permanent. Anything else is the network.
      throw new SendError(`${req.method} to ${this.node} failed: ${code}`, code === 'UND_ERR_INVALID_ARG', code === 'ECONNREFUSED');
    }
    const text = await res.body.text().catch(() => '');
    if (res.statusCode >= 200 && res.statusCode < 300) {
      const h = res.headers['x-invalidated'];
      const n = Number(Array.isArray(h) ? h[0] : h);
      return { status: res.statusCode, invalidated: Number.isFinite(n) ? n : 0 };
    }
    // 403 is the purgers ACL (a deployment problem that gets fixed) and 429/5xx are transient:
    // keep retrying so the backlog is delivered once fixed. Other 4xx will not change on retry.
    const permanent = res.statusCode >= 400 && res.statusCode < 500 && res.statusCode !== 403 && res.statusCode !== 429 && res.statusCode !== 408;
    const detail = text.replace(/\s+/g, ' ').trim().slice(0, 300);
    throw new SendError(`${req.method} to ${this.node} answered ${res.statusCode}${detail ? `: ${detail}` : ''}`, permanent, false);
  }

  async close(): Promise<void> {
    await this.pool.close().catch(() => undefined);
  }
}
