// Authentication for every route, in one place. Each route declares `config: { auth }`; these
// hooks enforce it and routes never check credentials themselves. A route that declares nothing
// is refused when it is registered, so none is open by mistake.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Metrics } from '../metrics.js';
import { secretAllowsSite, verifySignature, type WebhookSecret } from '../model/signature.js';
import { bearerMatches, bearerOf } from './bearer.js';
import { HttpError } from './errors.js';

/**
 * none: open; read: read or operator bearer token; operator: operator bearer token; webhook:
 * Standard Webhooks signature by a secret allowed for the body's site; site-read: the same
 * signature and check, for reading that site's receipts (not counted as received events).
 */
export type AuthKind = 'none' | 'read' | 'operator' | 'webhook' | 'site-read';

const signed = (auth: AuthKind | undefined): boolean => auth === 'webhook' || auth === 'site-read';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthKind;
  }
  interface FastifyRequest {
    /** signed routes: the secrets whose signature matched */
    signers: WebhookSecret[] | undefined;
  }
}

export interface AuthOptions {
  operatorToken: string | undefined;
  readToken: string | undefined;
  webhookSecrets: WebhookSecret[];
  toleranceS: number;
  metrics: Metrics;
}

const authOf = (request: FastifyRequest): AuthKind | undefined => request.routeOptions.config?.auth;
const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** Receipts, /metrics and /openapi.json: the read token or the operator token; with neither configured they stay closed. */
function checkRead(header: string | undefined, tokens: readonly string[]): void {
  if (tokens.length === 0) {
    throw new HttpError(401, 'unauthorized', 'reading receipts, metrics and the API document needs a token: set PURGER_READ_TOKEN (or PURGER_OPERATOR_TOKEN) on the purger');
  }
  if (bearerOf(header) === undefined) throw new HttpError(401, 'unauthorized', 'missing "Authorization: Bearer <read token>" header (PURGER_READ_TOKEN or PURGER_OPERATOR_TOKEN)');
  if (!bearerMatches(header, tokens)) throw new HttpError(401, 'unauthorized', 'the bearer token matches neither PURGER_READ_TOKEN nor PURGER_OPERATOR_TOKEN');
}

function checkOperator(header: string | undefined, token: string | undefined): void {
  if (token === undefined) throw new HttpError(401, 'unauthorized', 'operator purges are disabled: PURGER_OPERATOR_TOKEN is not set');
  if (bearerOf(header) === undefined) throw new HttpError(401, 'unauthorized', 'missing "Authorization: Bearer <operator token>" header');
  if (!bearerMatches(header, [token])) throw new HttpError(401, 'unauthorized', 'the bearer token does not match PURGER_OPERATOR_TOKEN');
}

export function registerAuth(app: FastifyInstance, opts: AuthOptions): void {
  const readTokens = [opts.readToken, opts.operatorToken].filter((t): t is string => t !== undefined);
  const unauthorized = (err: unknown, auth: AuthKind | undefined): never => {
    if (auth !== 'site-read') opts.metrics.eventsReceived.inc({ outcome: 'unauthorized' });
    throw err;
  };
  app.decorateRequest('signers', undefined);

  app.addHook('onRoute', (route) => {
    if (route.config?.auth === undefined) throw new Error(`${String(route.method)} ${route.url} declares no config.auth`);
  });

  // Bearer tokens before anything else: an unauthenticated caller learns nothing, not even
  // whether an id is valid.
  app.addHook('onRequest', async (request) => {
    const auth = authOf(request);
    if (auth === 'read') checkRead(request.headers.authorization, readTokens);
    else if (auth === 'operator') {
      try {
        checkOperator(request.headers.authorization, opts.operatorToken);
      } catch (err) {
        unauthorized(err, auth);
      }
    }
  });

  // Signatures are over the exact bytes, so they are checked before parsing or validating.
  app.addHook('preValidation', async (request) => {
    const auth = authOf(request);
    if (!signed(auth)) return;
    const raw = request.body as unknown;
    if (!Buffer.isBuffer(raw)) throw new HttpError(415, 'unsupported_media_type', 'Content-Type must be application/json');
    const h = request.headers;
    const result = verifySignature(
      { id: one(h['webhook-id']), timestamp: one(h['webhook-timestamp']), signature: one(h['webhook-signature']) },
      raw,
      opts.webhookSecrets,
      Math.floor(Date.now() / 1000),
      opts.toleranceS,
    );
    if (!result.ok) {
      request.log.warn({ webhookId: one(h['webhook-id']), reason: result.message }, 'webhook signature rejected');
      unauthorized(new HttpError(401, 'signature', result.message), auth);
    } else request.signers = result.matched;
  });

  // A secret bound to one site (site=whsec_… in PURGER_WEBHOOK_SECRETS) can neither purge
  // another site nor read its receipts.
  app.addHook('preHandler', async (request) => {
    const auth = authOf(request);
    if (!signed(auth)) return;
    const body = request.body as { site: string; events?: unknown[] };
    if (!secretAllowsSite(request.signers ?? [], body.site)) {
      if (auth === 'webhook') opts.metrics.eventsReceived.inc({ outcome: 'forbidden' }, body.events?.length ?? 0);
      const what = auth === 'webhook' ? 'invalidate' : 'read the receipts of';
      throw new HttpError(403, 'forbidden_site', `the secret that signed this request is not allowed to ${what} site "${body.site}"`, '/site');
    }
  });
}
