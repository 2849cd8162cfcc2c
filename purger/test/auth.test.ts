// The one auth hook: every route declares who may call it, and the hook enforces it.
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { registerAuth } from '../src/http/auth.js';
import { errorHandler } from '../src/http/errors.js';
import { createMetrics } from '../src/metrics.js';

const app = (): ReturnType<typeof Fastify> => {
  const a = Fastify();
  a.setErrorHandler(errorHandler);
  registerAuth(a, { operatorToken: 'operator-token-0123456789', readToken: undefined, webhookSecrets: [], toleranceS: 300, metrics: createMetrics({ defaults: false }) });
  return a;
};

describe('auth hook', () => {
  it('refuses to register a route that does not declare its auth', () => {
    expect(() => app().get('/open', async () => 'x')).toThrow(/GET \/open declares no config.auth/);
  });

  it('enforces what a route declares; the handler runs only once allowed', async () => {
    const a = app();
    let calls = 0;
    a.get('/op', { config: { auth: 'operator' } }, async () => ++calls);
    a.get('/read', { config: { auth: 'read' } }, async () => ++calls);
    a.get('/open', { config: { auth: 'none' } }, async () => ++calls);
    expect((await a.inject({ url: '/op' })).json()).toEqual({ error: 'unauthorized', message: 'missing "Authorization: Bearer <operator token>" header' });
    expect((await a.inject({ url: '/op', headers: { authorization: 'Bearer wrong-token-0123456789' } })).statusCode).toBe(401);
    expect(calls).toBe(0);
    expect((await a.inject({ url: '/op', headers: { authorization: 'Bearer operator-token-0123456789' } })).statusCode).toBe(200);
    expect((await a.inject({ url: '/read', headers: { authorization: 'Bearer operator-token-0123456789' } })).statusCode).toBe(200);
    expect((await a.inject({ url: '/open' })).statusCode).toBe(200);
    expect(calls).toBe(3);
  });
});
