// GET /v1/events/:id: where an event stands on every node.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { HttpError } from '../errors.js';
import type { StoredEvent } from '../../ingest/event-model.js';
import { ErrorReply, ID_PATTERN, BearerHeaders, Receipt, SITE_PATTERN_SRC, type ReceiptT } from '../schemas.js';
import { compareIds, type ReceiptMeta, type StreamLog } from '../../store/stream-log.js';

export interface ReceiptsRouteOptions {
  log: StreamLog;
  /** nodes whose worker heartbeat is older than this are not listed as pending */
  liveNodeMaxAgeMs: number;
}

export const receiptsRoute: FastifyPluginAsyncTypebox<ReceiptsRouteOptions> = async (app, opts) => {
  app.get(
    '/v1/events/:id',
    {
      // receipts name nodes and carry their errors
      config: { auth: 'read' },
      schema: {
        summary: 'Receipt: per node applied, pending, failed or skipped, with xkey/purge invalidation counts',
        headers: BearerHeaders,
        params: Type.Object({ id: Type.String({ pattern: ID_PATTERN }) }),
        querystring: Type.Object(
          { site: Type.Optional(Type.String({ maxLength: 253, pattern: SITE_PATTERN_SRC, description: 'the site that sent the event: ids are unique per site' })) },
          { additionalProperties: false },
        ),
        response: { 200: Receipt, 400: ErrorReply, 401: ErrorReply, 404: ErrorReply, 409: ErrorReply, 503: ErrorReply },
      },
    },
    async (request) => {
      const { id } = request.params;
      const { site } = request.query;
      let found: Awaited<ReturnType<typeof opts.log.receipts>>;
      let nodes: Awaited<ReturnType<typeof opts.log.liveNodes>>;
      try {
        found = await opts.log.receipts(id, site);
        nodes = await opts.log.liveNodes(opts.liveNodeMaxAgeMs);
      } catch {
        throw new HttpError(503, 'storage_unavailable', 'Redis is unreachable; try again later');
      }
      // Event ids are unique per site: without ?site= the id must name one site's event.
      if (found.length > 1) {
        throw new HttpError(409, 'ambiguous', `sites ${found.map((f) => f.site).join(', ')} each sent an event "${id}"; ask for one with ?site=<site>`, '/site');
      }
      const h = found[0]?.fields ?? {};
      if (!(h.m || h.e) || !h.s) throw new HttpError(404, 'not_found', `no event "${id}"${site !== undefined ? ` of site "${site}"` : ''} (unknown, or older than the receipt retention)`);
      const streamId = h.s;
      // (receipts written before receipts became small carry the whole event in `e`)
      const meta = JSON.parse(h.m ?? h.e!) as ReceiptMeta;
      const reason = h.e ? (JSON.parse(h.e) as StoredEvent).reason : (await opts.log.entry(streamId).catch(() => undefined))?.reason;
      const names = new Set([...nodes.keys(), ...Object.keys(h).filter((k) => k.startsWith('n:')).map((k) => k.slice(2))]);
      const out: ReceiptT['nodes'] = [];
      for (const node of [...names].sort()) {
        const r = h[`n:${node}`];
        if (r) {
          const v = JSON.parse(r) as { s: 'applied' | 'failed'; t: string; i?: number; e?: string };
          out.push({ node, state: v.s, at: v.t, ...(v.i !== undefined ? { invalidated: v.i } : {}), ...(v.e ? { error: v.e } : {}) });
          continue;
        }
        const c = nodes.get(node);
        if (c && compareIds(c.cursor, streamId) >= 0) {
          out.push({ node, state: 'skipped', detail: 'the node restarted with an empty cache, or got a site-wide ban after its cursor fell off the log' });
        } else {
          out.push({ node, state: 'pending', ...(c?.down ? { error: c.down.error, detail: `node failing since ${c.down.since}; retrying` } : {}) });
        }
      }
      return {
        id,
        site: meta.site,
        kind: meta.kind,
        soft: meta.soft,
        ...(reason !== undefined ? { reason } : {}),
        acceptedAt: new Date(meta.acceptedAt).toISOString(),
        nodes: out,
      };
    },
  );
};
