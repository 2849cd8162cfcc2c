// Tenant key namespaces: compared on the separator, overlaps and scoped secrets
// without a namespace refused at start.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/load.js';
import { toStoredEvent } from '../src/model/event-model.js';
import { inNamespace, overlappingNamespaces, parseNamespace } from '../src/model/tag-namespace.js';

const SECRET = 'whsec_cHVyZ2VyLXRlc3Qtc2VjcmV0LUEtMDEyMzQ1Njc4OWFi';
const OTHER = 'whsec_cHVyZ2VyLXRlc3Qtc2VjcmV0LUItcm90YXRlZC05ODc2';
const base = { PURGER_WEBHOOK_SECRETS: SECRET, PURGER_SITES: 'a.test,b.test', VARNISH_NODES: 'v:80' };

function problems(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems.join('\n');
    throw e;
  }
  return '';
}

describe('inNamespace: the namespace ends at a separator', () => {
  it.each([
    ['wp1-p-42', 'wp1', true],
    ['wp10-p-42', 'wp1', false],
    ['wp1', 'wp1', false],
    ['wp1-', 'wp1', false],
    ['wp1_p-42', 'wp1', false],
    ['example.com-p-1', 'example.com', true],
    ['example.com.au-p-1', 'example.com', false],
    ['example.comx-p-1', 'example.com', false],
    ['localhost-8080-p-1', 'localhost-8080', true],
    ['localhost-8081-p-1', 'localhost-8080', false],
  ])('%s in %s: %s', (tag, ns, want) => {
    expect(inNamespace(tag, ns)).toBe(want);
  });

  it('reads "wp1-" and "wp1" as the same namespace', () => {
    expect(parseNamespace('wp1-')).toBe('wp1');
    expect(parseNamespace('wp1')).toBe('wp1');
    expect(parseNamespace('-')).toBeUndefined();
    expect(parseNamespace('wp1--')).toBeUndefined();
    expect(parseNamespace('a b')).toBeUndefined();
  });

  it('finds overlapping namespaces', () => {
    expect(overlappingNamespaces(new Map([['a.test', 'wp1'], ['b.test', 'wp10']]))).toEqual([]);
    expect(overlappingNamespaces(new Map([['a.test', 'localhost'], ['b.test', 'localhost-8080']]))).toEqual([['a.test', 'b.test']]);
    expect(overlappingNamespaces(new Map([['a.test', 'wp1'], ['b.test', 'wp1']]))).toEqual([['a.test', 'b.test']]);
  });
});

describe('an event checked against its site namespace', () => {
  const tags = (list: string[], ns: string) => toStoredEvent({ id: 'e', kind: 'tags', tags: list }, 'a.test', 0, 'f', 0, ns);

  it("refuses wp10-* keys for the wp1 site, naming the tag's field", () => {
    expect(tags(['wp1-p-1', 'wp10-p-1'], 'wp1')).toEqual({ field: '/events/0/tags/1', message: 'tags of site "a.test" must start with its namespace "wp1-" (PURGER_TAG_PREFIXES)' });
    expect(tags(['wp1-p-1', 'wp1-l-home'], 'wp1')).toMatchObject({ tags: ['wp1-p-1', 'wp1-l-home'] });
  });

  it('refuses example.com.au-* keys for the example.com site', () => {
    expect(tags(['example.com.au-p-1'], 'example.com')).toMatchObject({ field: '/events/0/tags/0' });
    expect(tags(['example.com-p-1'], 'example.com')).toMatchObject({ tags: ['example.com-p-1'] });
  });
});

describe('configuration', () => {
  it('refuses to start when a site-scoped secret has no namespace, and says how to fix it', () => {
    const p = problems({ ...base, PURGER_WEBHOOK_SECRETS: `a.test=${SECRET},b.test=${OTHER}`, PURGER_TAG_PREFIXES: 'b.test=wpb' });
    expect(p).toContain('a secret is scoped to "a.test" but PURGER_TAG_PREFIXES has no namespace for it');
    expect(p).toContain('add a.test=<its key namespace> to PURGER_TAG_PREFIXES');
    expect(p).not.toContain('"b.test" but');
    expect(p).not.toContain(SECRET.slice(6));
  });

  it('starts with scoped secrets that each have a namespace', () => {
    const c = loadConfig({ ...base, PURGER_WEBHOOK_SECRETS: `a.test=${SECRET},b.test=${OTHER}`, PURGER_TAG_PREFIXES: 'a.test=wp1-,b.test=wp10' });
    expect([...c.tagPrefixes]).toEqual([['a.test', 'wp1'], ['b.test', 'wp10']]);
  });

  it('keeps the single-site setup (one unscoped secret, no namespaces) working', () => {
    expect(problems({ ...base })).toBe('');
  });

  it('refuses overlapping namespaces', () => {
    expect(problems({ ...base, PURGER_TAG_PREFIXES: 'a.test=localhost,b.test=localhost-8080' })).toContain('namespaces of "a.test" (localhost) and "b.test" (localhost-8080) overlap');
  });
});
