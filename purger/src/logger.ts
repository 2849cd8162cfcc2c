import { pino, type Logger } from 'pino';

/** Structured JSON logs; credentials are redacted wherever they could appear. */
export function createLogger(level: string, name = 'purger'): Logger {
  return pino({
    name,
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["webhook-signature"]',
        'headers.authorization',
        'headers["webhook-signature"]',
        'config.webhookSecrets',
        'config.operatorToken',
        'config.readToken',
        'config.varnishPurgeToken',
        'headers["x-purge-token"]',
        'req.headers["x-purge-token"]',
      ],
      censor: '[redacted]',
    },
  });
}
