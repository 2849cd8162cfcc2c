// GET /metrics: Prometheus text, behind the read token (node addresses, sites and error counts
// are not for anyone who can reach the port).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Redis } from 'ioredis';
import type { Metrics } from '../../metrics.js';
import { BearerHeaders } from '../schemas.js';

export interface MetricsRouteOptions {
  redis: Redis;
  metrics: Metrics;
}

export const metricsRoute: FastifyPluginAsyncTypebox<MetricsRouteOptions> = async (app, opts) => {
  app.get(
    '/metrics',
    {
      config: { auth: 'read' },
      schema: { summary: 'Prometheus metrics (bearer: read or operator token)', hide: true, headers: BearerHeaders },
    },
    async (_req, reply) => {
      opts.metrics.redisConnected.set(opts.redis.status === 'ready' ? 1 : 0);
      return reply.type(opts.metrics.registry.contentType).send(await opts.metrics.registry.metrics());
    },
  );
};
