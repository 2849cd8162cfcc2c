// The Fastify app: auth (auth.ts), JSON bodies, the error shape, OpenAPI, and the routes of the role.
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config/load.js';
import { registerAuth } from './auth.js';
import { errorHandler } from './errors.js';
import { registerJsonBody } from './json-body.js';
import { Ingest } from '../ingest/accept-batch.js';
import { TenantLimiter } from '../ingest/tenant-limiter.js';
import type { Metrics } from '../metrics.js';
import { eventsRoute } from './routes/events.js';
import { healthRoute } from './routes/health.js';
import { metricsRoute } from './routes/metrics.js';
import { purgeRoute } from './routes/purge.js';
import { receiptsRoute } from './routes/receipts.js';
import { siteReceiptsRoute } from './routes/site-receipts.js';
import { BearerHeaders } from './schemas.js';
import type { StreamLog } from '../store/stream-log.js';

export interface AppDeps {
  config: Config;
  redis: Redis;
  log: StreamLog;
  metrics: Metrics;
  logger: Logger;
  workerNodes?: () => number;
}

/** a webhook batch (≤ 1 MiB) needs far less time than this to arrive */
const REQUEST_TIMEOUT_MS = 15_000;

export type App = Awaited<ReturnType<typeof buildApp>>;

export async function buildApp(deps: AppDeps) {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: config.bodyLimit,
    // Slow headers are cut off by Node (Fastify's default is no limit at all).
    requestTimeout: REQUEST_TIMEOUT_MS,
    // Path parameters (event ids, up to 128 characters) reach the schema, which answers an
    // over-long one with a 400 naming the field; the router's own cut (100) answered 414.
    routerOptions: { maxParamLength: 8192 },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setErrorHandler(errorHandler);
  // Node's requestTimeout stops counting once the headers are in: a client trickling its body
  // would hold the connection for ever. Drop it unless the body is read within the limit.
  app.addHook('onRequest', async (request) => {
    const timer = setTimeout(() => request.raw.destroy(), REQUEST_TIMEOUT_MS).unref();
    request.raw.once('end', () => clearTimeout(timer));
    request.raw.once('close', () => clearTimeout(timer));
  });
  registerAuth(app, {
    operatorToken: config.operatorToken,
    readToken: config.readToken,
    webhookSecrets: config.webhookSecrets,
    toleranceS: config.timestampToleranceS,
    metrics: deps.metrics,
  });
  registerJsonBody(app);

  await app.register(swagger, {
    openapi: {
      info: { title: 'purger', description: 'Signed content-change webhooks to Varnish invalidations (docs/protocol.md)', version: '1' },
    },
  });
  app.get('/openapi.json', { config: { auth: 'read' }, schema: { hide: true, headers: BearerHeaders } }, async () => app.swagger());

  await app.register(healthRoute, { redis: deps.redis, workerNodes: deps.workerNodes });
  await app.register(metricsRoute, { redis: deps.redis, metrics: deps.metrics });
  if (config.role !== 'worker') {
    const ingest = new Ingest(deps.log, config.sites, deps.metrics, config.tagPrefixes, new TenantLimiter(config.tenantLimits), config.tenantLimits, {
      maxItems: config.maxUrlsPerEvent,
      maxBytes: config.maxEventBytes,
    });
    await app.register(eventsRoute, { ingest });
    await app.register(purgeRoute, { ingest });
    const liveNodeMaxAgeMs = Math.max(10_000, config.pollMs * 5);
    await app.register(receiptsRoute, { log: deps.log, liveNodeMaxAgeMs });
    await app.register(siteReceiptsRoute, { log: deps.log, liveNodeMaxAgeMs });
  }
  return app;
}
