// POST /v1/events: signed content-change webhooks (Standard Webhooks).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { HttpError } from '../http-errors.js';
import type { Ingest } from '../ingest.js';
import type { Metrics } from '../metrics.js';
import { Accepted, ErrorReply, TooLarge, SignedHeaders, WebhookBody } from '../schemas.js';
import { secretAllowsSite, verifySignature, type WebhookSecret } from '../signature.js';
import { parseJsonBody } from './json-body.js';

export interface EventsRouteOptions {
  ingest: Ingest;
  secrets: WebhookSecret[];
  toleranceS: number;
  metrics: Metrics;
}

export const eventsRoute: FastifyPluginAsyncTypebox<EventsRouteOptions> = async (app, opts) => {
  const signedBy = new WeakMap<object, WebhookSecret[]>();
  const bodyBytes = new WeakMap<object, number>();
  app.post(
    '/v1/events',
    {
      schema: {
        summary: 'Content-change events from WordPress (Standard Webhooks signature)',
        headers: SignedHeaders,
        body: WebhookBody,
        response: { 202: Accepted, 400: ErrorReply, 401: ErrorReply, 403: ErrorReply, 413: TooLarge, 415: ErrorReply, 429: ErrorReply, 503: ErrorReply },
      },
      // Authenticate the raw bytes before parsing or validating anything.
      preValidation: async (request) => {
        const raw = request.body as unknown;
        if (!Buffer.isBuffer(raw)) throw new HttpError(415, 'unsupported_media_type', 'Content-Type must be application/json');
        const h = request.headers;
        const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);
        const result = verifySignature(
          { id: one(h['webhook-id']), timestamp: one(h['webhook-timestamp']), signature: one(h['webhook-signature']) },
          raw,
          opts.secrets,
          Math.floor(Date.now() / 1000),
          opts.toleranceS,
        );
        if (!result.ok) {
          opts.metrics.eventsReceived.inc({ outcome: 'unauthorized' });
          request.log.warn({ webhookId: one(h['webhook-id']), reason: result.message }, 'webhook signature rejected');
          throw new HttpError(401, 'signature', result.message);
        }
        request.body = parseJsonBody(raw) as typeof request.body;
        signedBy.set(request, result.matched);
        bodyBytes.set(request, raw.length);
      },
    },
    async (request, reply) => {
      // A secret bound to one site (site=whsec_… in PURGER_WEBHOOK_SECRETS) cannot purge another.
      if (!secretAllowsSite(signedBy.get(request) ?? [], request.body.site)) {
        opts.metrics.eventsReceived.inc({ outcome: 'forbidden' }, request.body.events.length);
        throw new HttpError(403, 'forbidden_site', `the secret that signed this request is not allowed to invalidate site "${request.body.site}"`, '/site');
      }
      const messageId = request.headers['webhook-id'] as string;
      const res = await opts.ingest.accept(messageId, request.body, request.log, { bytes: bodyBytes.get(request) ?? 0 });
      return reply.code(202).send(res);
    },
  );
};
