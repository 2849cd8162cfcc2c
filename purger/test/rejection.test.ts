// Ingest refuses a batch with a reason (ingest/rejection.ts); the HTTP layer alone turns it into
// the answer: status, `Retry-After`, and the JSON error the route tests expect.
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { errorHandler } from '../src/http/errors.js';
import { IngestRejection, type RejectionReason } from '../src/ingest/rejection.js';

async function answer(rejection: IngestRejection): Promise<{ status: number; retryAfter: unknown; body: string }> {
  const app = Fastify();
  app.setErrorHandler(errorHandler);
  app.post('/v1/events', async () => {
    throw rejection;
  });
  const res = await app.inject({ method: 'POST', url: '/v1/events' });
  await app.close();
  return { status: res.statusCode, retryAfter: res.headers['retry-after'], body: res.body };
}

describe('an ingest refusal as an HTTP answer', () => {
  const cases: [RejectionReason, number, string | undefined, number | undefined][] = [
    ['invalid', 400, '/events/0/urls/3', undefined],
    ['forbidden_site', 403, '/site', undefined],
    ['event_too_large', 413, '/events/2', undefined],
    ['rate_limited', 429, undefined, 7],
    ['storage_unreplicated', 503, undefined, 1],
    ['storage_full', 503, undefined, 30],
    ['storage_unavailable', 503, undefined, 5],
  ];
  for (const [reason, status, field, retryAfterS] of cases) {
    it(`${reason}: ${status}${retryAfterS === undefined ? '' : ` with Retry-After: ${retryAfterS}`}`, async () => {
      const a = await answer(new IngestRejection(reason, `why ${reason}`, field, retryAfterS));
      expect(a.status).toBe(status);
      expect(a.retryAfter).toBe(retryAfterS === undefined ? undefined : String(retryAfterS));
      expect(a.body).toBe(JSON.stringify({ error: reason, message: `why ${reason}`, ...(field ? { field } : {}) }));
    });
  }
});
