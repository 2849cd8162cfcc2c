// Request bodies: JSON only, kept as raw bytes until the auth hooks have run (signatures are over
// the exact bytes), then parsed for the schema.
import type { FastifyInstance } from 'fastify';
import { HttpError } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** the body's size in bytes as received */
    bodyBytes: number;
  }
}

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw new HttpError(400, 'invalid_json', `body is not valid JSON: ${(err as Error).message}`);
  }
}

/** Register after the auth hooks: their preValidation sees the raw bytes, this one parses them. */
export function registerJsonBody(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.decorateRequest('bodyBytes', 0);
  app.addHook('preValidation', async (request) => {
    if (request.routeOptions.schema?.body === undefined) return;
    const raw = request.body as unknown;
    if (!Buffer.isBuffer(raw)) throw new HttpError(415, 'unsupported_media_type', 'Content-Type must be application/json');
    request.bodyBytes = raw.length;
    request.body = parseJson(raw);
  });
}
