// The purger's key and namespace grammar is testdata/key-grammar.json's, the same file the
// plugin's declaration is tested against, so the two sides cannot drift apart.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/load.js';
import { WebhookEvent } from '../src/http/schemas.js';
import { KEY_PATTERN, NAMESPACE_PATTERN } from '../src/model/key-grammar.js';
import { REPO_ROOT } from '../../testkit/process.mjs';

interface Grammar {
  pattern: string;
  maxLength: number;
  valid: string[];
  invalid: string[];
}
const grammar = JSON.parse(readFileSync(join(REPO_ROOT, 'testdata/key-grammar.json'), 'utf8')) as { key: Grammar; namespace: Grammar };

const tagEvent = (tag: string) => ({ id: 'e1', kind: 'tags', tags: [tag], time: '2026-11-22T10:00:00Z' });
const withNamespace = (namespace: string) => () =>
  loadConfig({ PURGER_ROLE: 'ingest', PURGER_WEBHOOK_SECRETS: 'whsec_cHVyZ2VyLXRlc3Qtc2VjcmV0LUEtMDEyMzQ1Njc4OWFi', PURGER_SITES: 'a.test', PURGER_TAG_PREFIXES: `a.test=${namespace}` });

describe('the key grammar is testdata/key-grammar.json', () => {
  it('declares the same patterns', () => {
    expect(KEY_PATTERN).toBe(grammar.key.pattern);
    expect(NAMESPACE_PATTERN).toBe(grammar.namespace.pattern);
  });

  it('accepts its valid keys in a tags event and refuses its invalid ones', () => {
    for (const key of grammar.key.valid) expect(Value.Check(WebhookEvent, tagEvent(key)), key).toBe(true);
    for (const key of grammar.key.invalid) expect(Value.Check(WebhookEvent, tagEvent(key)), key).toBe(false);
  });

  it('accepts its valid namespaces in PURGER_TAG_PREFIXES and refuses its invalid ones', () => {
    for (const ns of grammar.namespace.valid) expect(withNamespace(ns)().tagPrefixes.get('a.test'), ns).toBe(ns);
    for (const ns of grammar.namespace.invalid) expect(withNamespace(ns), ns).toThrow(ConfigError);
  });
});
