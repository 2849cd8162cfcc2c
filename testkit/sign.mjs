// Signs webhooks for tests with `standardwebhooks`, the Standard Webhooks project's own
// JavaScript library: an implementation independent of the purger's verifier and the plugin's
// signer, so a mistake the two share cannot pass the tests.
import { randomUUID } from 'node:crypto';
import standardwebhooks from 'standardwebhooks';

const { Webhook } = standardwebhooks;

/** The webhook-signature value (`v1,<base64>`) for one message. */
export function signature(secret, id, timestamp, body) {
  return new Webhook(secret).sign(id, new Date(Number(timestamp) * 1000), body);
}

/** Headers of a signed JSON webhook; id and timestamp (seconds) default to new ones. */
export function signHeaders(secret, body, { id = `msg_${randomUUID()}`, timestamp = Math.floor(Date.now() / 1000) } = {}) {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signature(secret, id, timestamp, body),
  };
}
