// GET /v1/events/:id: where an event stands on every node.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { HttpError } from '../errors.js';
import { receiptStreamId, receiptView } from '../receipt-view.js';
import { ErrorReply, ID_PATTERN, BearerHeaders, Receipt, SITE_PATTERN_SRC } from '../schemas.js';
import type { StreamLog } from '../../store/stream-log.js';

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
        // cursors first: a node's receipts and cursor are committed together, so receipts read
        // after its cursor show every event the cursor passed (never a false "skipped")
        nodes = await opts.log.liveNodes(opts.liveNodeMaxAgeMs);
        found = await opts.log.receipts(id, site);
      } catch {
        throw new HttpError(503, 'storage_unavailable', 'Redis is unreachable; try again later');
      }
      // Event ids are unique per site: without ?site= the id must name one site's event.
      if (found.length > 1) {
        throw new HttpError(409, 'ambiguous', `sites ${found.map((f) => f.site).join(', ')} each sent an event "${id}"; ask for one with ?site=<site>`, '/site');
      }
      const h = found[0]?.fields;
      const streamId = receiptStreamId(h);
      if (!h || streamId === undefined) throw new HttpError(404, 'not_found', `no event "${id}"${site !== undefined ? ` of site "${site}"` : ''} (unknown, or older than the receipt retention)`);
      const event = h.e ? undefined : await opts.log.entry(streamId).catch(() => undefined);
      return receiptView(id, h, nodes, event);
    },
  );
};
