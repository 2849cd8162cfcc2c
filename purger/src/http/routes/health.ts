// GET /healthz (process alive), /readyz (Redis reachable; worker: nodes known): open to anyone.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Redis } from 'ioredis';

export interface HealthRouteOptions {
  redis: Redis;
  /** undefined when this process runs no worker */
  workerNodes: (() => number) | undefined;
}

const Status = Type.Object({ status: Type.String(), checks: Type.Optional(Type.Record(Type.String(), Type.String())) });

export const healthRoute: FastifyPluginAsyncTypebox<HealthRouteOptions> = async (app, opts) => {
  app.get('/healthz', { config: { auth: 'none' }, schema: { summary: 'Liveness', response: { 200: Status } } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { config: { auth: 'none' }, schema: { summary: 'Readiness: Redis reachable; worker: Varnish nodes known', response: { 200: Status, 503: Status } } }, async (_req, reply) => {
    const checks: Record<string, string> = {};
    let ok = true;
    try {
      if (opts.redis.status !== 'ready') throw new Error(opts.redis.status);
      await opts.redis.ping();
      checks.redis = 'ok';
    } catch (err) {
      ok = false;
      checks.redis = `unreachable (${(err as Error).message})`;
    }
    if (opts.workerNodes) {
      const n = opts.workerNodes();
      checks.nodes = n > 0 ? `${n} node(s)` : 'no Varnish nodes known';
      if (n === 0) ok = false;
    }
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not ready', checks });
  });
};
