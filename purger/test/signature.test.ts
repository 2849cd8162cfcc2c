import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSecret, verifySignature, type WebhookSecret } from '../src/model/signature.js';
import { signature } from '../../testkit/sign.mjs';

interface Vector {
  name: string;
  secrets: string[];
  id: string;
  timestamp: string;
  body: string;
  signature: string;
  valid: boolean;
}

const vectors = (JSON.parse(readFileSync(new URL('../../testdata/webhook-signature-vectors.json', import.meta.url), 'utf8')) as { vectors: Vector[] }).vectors;

const secrets = (list: string[]): WebhookSecret[] =>
  list.map((s) => {
    const p = parseSecret(s);
    if (typeof p === 'string') throw new Error(p);
    return p;
  });

describe('Standard Webhooks signature vectors (testdata/webhook-signature-vectors.json)', () => {
  it('has both valid and invalid vectors', () => {
    expect(vectors.filter((v) => v.valid).length).toBeGreaterThan(0);
    expect(vectors.filter((v) => !v.valid).length).toBeGreaterThan(0);
  });

  for (const v of vectors) {
    it(`${v.name}: ${v.valid ? 'accepted' : 'rejected'}`, () => {
      const r = verifySignature(
        { id: v.id, timestamp: v.timestamp, signature: v.signature },
        Buffer.from(v.body, 'utf8'),
        secrets(v.secrets),
        Number(v.timestamp),
        300,
      );
      expect(r.ok).toBe(v.valid);
      if (!r.ok) expect(r.message).not.toContain(v.secrets[0]!.slice(6));
    });
  }
});

describe('verifySignature', () => {
  const v = vectors.find((x) => x.name === 'valid')!;
  const s = secrets(v.secrets);
  const body = Buffer.from(v.body);
  const h = { id: v.id, timestamp: v.timestamp, signature: v.signature };

  it('rejects timestamps outside the tolerance, both directions', () => {
    const old = verifySignature(h, body, s, Number(v.timestamp) + 301, 300);
    expect(old).toEqual({ ok: false, message: expect.stringContaining('too old') });
    const future = verifySignature(h, body, s, Number(v.timestamp) - 301, 300);
    expect(future).toEqual({ ok: false, message: expect.stringContaining('in the future') });
    expect(verifySignature(h, body, s, Number(v.timestamp) + 300, 300).ok).toBe(true);
  });

  it('names the missing header', () => {
    expect(verifySignature({ ...h, id: undefined }, body, s, Number(v.timestamp), 300)).toEqual({ ok: false, message: 'missing webhook-id header' });
    expect(verifySignature({ ...h, timestamp: undefined }, body, s, Number(v.timestamp), 300)).toEqual({ ok: false, message: 'missing webhook-timestamp header' });
    expect(verifySignature({ ...h, signature: undefined }, body, s, Number(v.timestamp), 300)).toEqual({ ok: false, message: 'missing webhook-signature header' });
  });

  it("accepts the test kit's signatures, with any configured secret during rotation", () => {
    const rotated = vectors.find((x) => x.name === 'valid-rotated-second-secret')!.secrets;
    const [a, b] = secrets(rotated);
    const sig = signature(rotated[1]!, 'm1', '100', 'x');
    expect(verifySignature({ id: 'm1', timestamp: '100', signature: sig }, Buffer.from('x'), [a!, b!], 100, 300).ok).toBe(true);
    expect(verifySignature({ id: 'm1', timestamp: '100', signature: sig }, Buffer.from('x'), [a!], 100, 300).ok).toBe(false);
  });

  it('rejects malformed secrets without echoing them', () => {
    expect(parseSecret('nope')).toBe('expected whsec_ followed by base64');
    expect(parseSecret('whsec_YWJj')).toBe('the decoded key is shorter than 16 bytes');
  });
});
