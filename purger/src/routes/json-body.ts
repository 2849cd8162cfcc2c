import { HttpError } from '../http-errors.js';

/** Bodies arrive as raw bytes (signatures are over bytes); parse them once authenticated. */
export function parseJsonBody(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw new HttpError(400, 'invalid_json', `body is not valid JSON: ${(err as Error).message}`);
  }
}
