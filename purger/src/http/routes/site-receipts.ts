// POST /v1/receipts: where several events of one site stand on every node, summed up, for the
// site itself (the plugin's live status), signed like its webhooks (auth.ts checks the signature
// and that the secret may read this site).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { HttpError } from '../errors.js';
import { summarizeReceipts, type FoundReceipt } from '../receipt-summary.js';
import { embeddedEvent, receiptStreamId, receiptView } from '../receipt-view.js';
import { ErrorReply, SignedHeaders, SiteReceipts, SiteReceiptsBody } from '../schemas.js';
import type { StoredEvent } from '../../model/event-model.js';
import type { StreamLog } from '../../store/stream-log.js';

export interface SiteReceiptsRouteOptions {
  log: StreamLog;
  /** nodes whose worker heartbeat is older than this are not listed as pending */
  liveNodeMaxAgeMs: number;
}

export const siteReceiptsRoute: FastifyPluginAsyncTypebox<SiteReceiptsRouteOptions> = async (app, opts) => {
  app.post(
    '/v1/receipts',
    {
      config: { auth: 'site-read' },
      schema: {
        summary: "Receipts of up to 100 of one site's events and whether they are live on every node (signed like POST /v1/events)",
        headers: SignedHeaders,
        body: SiteReceiptsBody,
        response: { 200: SiteReceipts, 400: ErrorReply, 401: ErrorReply, 403: ErrorReply, 415: ErrorReply, 503: ErrorReply },
      },
    },
    async (request) => {
      const { site } = request.body;
      const ids = [...new Set(request.body.ids)];
      let hashes: Awaited<ReturnType<StreamLog['siteReceipts']>>;
      let nodes: Awaited<ReturnType<StreamLog['liveNodes']>>;
      let events: (StoredEvent | undefined)[];
      try {
        // cursors first: a node's receipts and cursor are committed together, so receipts read
        // after its cursor show every event the cursor passed (never a false "skipped")
        nodes = await opts.log.liveNodes(opts.liveNodeMaxAgeMs);
        hashes = await opts.log.siteReceipts(site, ids);
        // the events (their time and reason) while the log holds them, in one round trip
        const needed = hashes.map((h) => (h && !h.e ? receiptStreamId(h) : undefined));
        const read = await opts.log.entries(needed.filter((s): s is string => s !== undefined));
        let next = 0;
        events = needed.map((s) => (s === undefined ? undefined : read[next++]));
      } catch {
        throw new HttpError(503, 'storage_unavailable', 'Redis is unreachable; try again later');
      }
      const found: FoundReceipt[] = [];
      const missing: string[] = [];
      ids.forEach((id, i) => {
        const h = hashes[i];
        if (!h || receiptStreamId(h) === undefined) {
          missing.push(id);
          return;
        }
        const event = (h.e ? embeddedEvent(h) : undefined) ?? events[i];
        const receipt = receiptView(id, h, nodes, event);
        const time = event ? Date.parse(event.time) : Number.NaN;
        found.push({ receipt, changedAt: Number.isNaN(time) ? Date.parse(receipt.acceptedAt) : time });
      });
      return summarizeReceipts(site, found, missing, [...nodes.keys()]);
    },
  );
};
