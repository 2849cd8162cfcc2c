// POST /v1/purge: the same invalidations for operators (bearer token; auth.ts checks it).
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Ingest } from '../../ingest/accept-batch.js';
import { Accepted, BearerHeaders, ErrorReply, OperatorBody, TooLarge } from '../schemas.js';

export interface PurgeRouteOptions {
  ingest: Ingest;
}

export const purgeRoute: FastifyPluginAsyncTypebox<PurgeRouteOptions> = async (app, opts) => {
  app.post(
    '/v1/purge',
    {
      config: { auth: 'operator' },
      schema: {
        summary: 'Operator invalidation (bearer token); event id and time optional',
        headers: BearerHeaders,
        body: OperatorBody,
        response: { 202: Accepted, 400: ErrorReply, 401: ErrorReply, 403: ErrorReply, 413: TooLarge, 415: ErrorReply, 503: ErrorReply },
      },
    },
    async (request, reply) => {
      const res = await opts.ingest.accept(`op-${randomUUID()}`, request.body, request.log);
      return reply.code(202).send(res);
    },
  );
};
