// POST /v1/events: signed content-change webhooks (Standard Webhooks; auth.ts checks the signature).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Ingest } from '../../ingest/accept-batch.js';
import { Accepted, ErrorReply, SignedHeaders, TooLarge, WebhookBody } from '../schemas.js';

export interface EventsRouteOptions {
  ingest: Ingest;
}

export const eventsRoute: FastifyPluginAsyncTypebox<EventsRouteOptions> = async (app, opts) => {
  app.post(
    '/v1/events',
    {
      config: { auth: 'webhook' },
      schema: {
        summary: 'Content-change events from WordPress (Standard Webhooks signature)',
        headers: SignedHeaders,
        body: WebhookBody,
        response: { 202: Accepted, 400: ErrorReply, 401: ErrorReply, 403: ErrorReply, 413: TooLarge, 415: ErrorReply, 429: ErrorReply, 503: ErrorReply },
      },
    },
    async (request, reply) => {
      const messageId = request.headers['webhook-id'] as string;
      const res = await opts.ingest.accept(messageId, request.body, request.log, { bytes: request.bodyBytes });
      return reply.code(202).send(res);
    },
  );
};
