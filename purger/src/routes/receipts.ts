// GET /v1/events/:id: where an event stands on every node.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { checkReadAccess } from '../bearer.js';
import { HttpError } from '../http-errors.js';
import type { StoredEvent } from '../event-model.js';
import { ErrorReply, ID_PATTERN, ReadAuthHeaders, Receipt, type ReceiptT } from '../schemas.js';
import { compareIds, type ReceiptMeta, type StreamLog } from '../stream-log.js';

export interface ReceiptsRouteOptions {
  log: StreamLog;
  /** nodes whose worker heartbeat is older than this are not listed as pending */
  liveNodeMaxAgeMs: number;
  /** read or operator token: receipts name nodes and carry their errors */
  readTokens: string[];
}

export const receiptsRoute: FastifyPluginAsyncTypebox<ReceiptsRouteOptions> = async (app, opts) => {
  app.get(
    '/v1/events/:id',
    {
      schema: {
        summary: 'Receipt: per node applied, pending, failed or skipped, with xkey/purge invalidation counts',
        headers: ReadAuthHeaders,
        params: Type.Object({ id: Type.String({ pattern: ID_PATTERN }) }),
        response: { 200: Receipt, 400: ErrorReply, 401: ErrorReply, 404: ErrorReply, 503: ErrorReply },
      },
      // onRequest, so an unauthenticated caller learns nothing, not even whether an id is valid.
      onRequest: async (request) => checkReadAccess(request.headers.authorization, opts.readTokens),
    },
    async (request) => {
      let h: Record<string, string>;
      let nodes: Awaited<ReturnType<typeof opts.log.liveNodes>>;
      try {
        h = await opts.log.receipt(request.params.id);
        nodes = await opts.log.liveNodes(opts.liveNodeMaxAgeMs);
      } catch {
        throw new HttpError(503, 'storage_unavailable', 'Redis is unreachable; try again later');
      }
      if (!(h.m || h.e) || !h.s) throw new HttpError(404, 'not_found', `no event "${request.params.id}" (unknown, or older than the receipt retention)`);
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
        id: request.params.id,
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
