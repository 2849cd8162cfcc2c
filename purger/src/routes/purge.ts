// POST /v1/purge: the same invalidations for operators (bearer token).
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { bearerMatches, bearerOf } from '../bearer.js';
import { HttpError } from '../http-errors.js';
import type { Ingest } from '../ingest.js';
import type { Metrics } from '../metrics.js';
import { Accepted, ErrorReply, TooLarge, OperatorBody } from '../schemas.js';
import { parseJsonBody } from './json-body.js';

export interface PurgeRouteOptions {
  ingest: Ingest;
  token: string | undefined;
  metrics: Metrics;
}

/** Constant-time operator bearer check. */
export function checkBearer(header: string | undefined, token: string | undefined): void {
  if (token === undefined) throw new HttpError(401, 'unauthorized', 'operator purges are disabled: PURGER_OPERATOR_TOKEN is not set');
  if (bearerOf(header) === undefined) throw new HttpError(401, 'unauthorized', 'missing "Authorization: Bearer <operator token>" header');
  if (!bearerMatches(header, [token])) throw new HttpError(401, 'unauthorized', 'the bearer token does not match PURGER_OPERATOR_TOKEN');
}

export const purgeRoute: FastifyPluginAsyncTypebox<PurgeRouteOptions> = async (app, opts) => {
  app.post(
    '/v1/purge',
    {
      schema: {
        summary: 'Operator invalidation (bearer token); event id and time optional',
        headers: Type.Object({ authorization: Type.Optional(Type.String()) }),
        body: OperatorBody,
        response: { 202: Accepted, 400: ErrorReply, 401: ErrorReply, 403: ErrorReply, 413: TooLarge, 415: ErrorReply, 503: ErrorReply },
      },
      preValidation: async (request) => {
        const raw = request.body as unknown;
        try {
          checkBearer(request.headers.authorization, opts.token);
        } catch (err) {
          opts.metrics.eventsReceived.inc({ outcome: 'unauthorized' });
          throw err;
        }
        if (!Buffer.isBuffer(raw)) throw new HttpError(415, 'unsupported_media_type', 'Content-Type must be application/json');
        request.body = parseJsonBody(raw) as typeof request.body;
      },
    },
    async (request, reply) => {
      const res = await opts.ingest.accept(`op-${randomUUID()}`, request.body, request.log);
      return reply.code(202).send(res);
    },
  );
};
