import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/load.js';
import { Settings } from '../src/config/settings.js';
import { toStoredEvent } from '../src/model/event-model.js';
import { normalizeSite, urlToPath } from '../src/model/normalize.js';

const SECRET = 'whsec_cHVyZ2VyLXRlc3Qtc2VjcmV0LUEtMDEyMzQ1Njc4OWFi';

describe('loadConfig', () => {
  it('applies defaults', () => {
    const c = loadConfig({ PURGER_WEBHOOK_SECRETS: SECRET, PURGER_SITES: 'Example.com:443,localhost:8080', VARNISH_NODES: '127.0.0.1:6081' });
    expect(c).toMatchObject({ role: 'all', host: '127.0.0.1', port: 8090, redisUrl: 'redis://127.0.0.1:6379', repurgeDelaysMs: [] });
    expect(c.sites).toEqual(['example.com', 'localhost:8080']);
    expect(c.varnishNodes).toEqual([{ host: '127.0.0.1', port: 6081 }]);
  });

  it('reports every bad variable at once, without echoing secrets', () => {
    let err: unknown;
    try {
      loadConfig({ PURGER_ROLE: 'both', PURGER_PORT: 'http', PURGER_WEBHOOK_SECRETS: 'whsec_!!secretvalue', VARNISH_NODES: 'novarnish', PURGER_REPURGE_DELAYS_MS: '-1' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const p = (err as ConfigError).problems.join('\n');
    expect(p).toContain('PURGER_ROLE="both"');
    expect(p).toContain('PURGER_PORT="http"');
    expect(p).toContain('PURGER_WEBHOOK_SECRETS entry 1');
    expect(p).not.toContain('secretvalue');
    expect(p).toContain('VARNISH_NODES: "novarnish" is not host:port');
    expect(p).toContain('PURGER_REPURGE_DELAYS_MS="-1"');
  });

  it('reads the webhook secrets and the operator token from files (Docker secrets), never echoing them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'purger-config-'));
    const OTHER = 'whsec_b3RoZXItc2VjcmV0LWZvci1hLXNlY29uZC1zaXRlLTAx';
    writeFileSync(join(dir, 'secrets'), `${SECRET}\nexample.com=${OTHER}\n`);
    writeFileSync(join(dir, 'token'), 'operator-token-from-a-file-0123\n');
    const base = { PURGER_SITES: 'localhost:8080,example.com', PURGER_TAG_PREFIXES: 'example.com=ex1', VARNISH_NODES: 'v:80' };
    const c = loadConfig({ ...base, PURGER_WEBHOOK_SECRETS_FILE: join(dir, 'secrets'), PURGER_OPERATOR_TOKEN_FILE: join(dir, 'token') });
    expect(c.webhookSecrets).toHaveLength(2);
    expect(c.webhookSecrets[1]!.site).toBe('example.com');
    expect(c.operatorToken).toBe('operator-token-from-a-file-0123');
    writeFileSync(join(dir, 'bad'), 'whsec_!!secretvalue\n');
    const problems = (env: Record<string, string>): string => {
      try {
        loadConfig({ ...base, ...env });
      } catch (e) {
        return (e as ConfigError).problems.join('\n');
      }
      return '';
    };
    expect(problems({ PURGER_WEBHOOK_SECRETS_FILE: join(dir, 'bad') })).toContain('PURGER_WEBHOOK_SECRETS entry 1');
    expect(problems({ PURGER_WEBHOOK_SECRETS_FILE: join(dir, 'bad') })).not.toContain('secretvalue');
    expect(problems({ PURGER_WEBHOOK_SECRETS: SECRET, PURGER_WEBHOOK_SECRETS_FILE: join(dir, 'secrets') })).toContain('PURGER_WEBHOOK_SECRETS and PURGER_WEBHOOK_SECRETS_FILE: set one, not both');
    expect(problems({ PURGER_WEBHOOK_SECRETS: SECRET, PURGER_OPERATOR_TOKEN_FILE: join(dir, 'none') })).toMatch(/PURGER_OPERATOR_TOKEN_FILE=".*none": cannot read it \(ENOENT\)/);
  });

  it('takes every secret as NAME_FILE too, the file trimmed, and refuses both at once', () => {
    const secrets = Object.entries(Settings.properties).filter(([, s]) => (s as { secret?: boolean }).secret).map(([name]) => name);
    expect(secrets.sort()).toEqual(['PURGER_OPERATOR_TOKEN', 'PURGER_READ_TOKEN', 'PURGER_WEBHOOK_SECRETS', 'REDIS_PASSWORD', 'REDIS_SENTINEL_PASSWORD', 'VARNISH_PURGE_TOKEN']);
    const dir = mkdtempSync(join(tmpdir(), 'purger-secret-files-'));
    const file = (name: string, value: string): string => {
      writeFileSync(join(dir, name), `  ${value} \n\n`);
      return join(dir, name);
    };
    const token = 'a-token-of-more-than-16-chars';
    const c = loadConfig({
      PURGER_SITES: 'a.test', VARNISH_NODES: 'v:80', REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_MASTER: 'm',
      PURGER_WEBHOOK_SECRETS_FILE: file('w', SECRET), PURGER_OPERATOR_TOKEN_FILE: file('o', token), PURGER_READ_TOKEN_FILE: file('r', token),
      VARNISH_PURGE_TOKEN_FILE: file('v', token), REDIS_PASSWORD_FILE: file('p', 'pw'), REDIS_SENTINEL_PASSWORD_FILE: file('sp', 'spw'),
    });
    expect([c.operatorToken, c.readToken, c.varnishPurgeToken, c.redisPassword, c.redisSentinel?.password]).toEqual([token, token, token, 'pw', 'spw']);
    expect(c.webhookSecrets).toHaveLength(1);
    for (const name of secrets) {
      expect(() => loadConfig({ PURGER_ROLE: 'worker', VARNISH_NODES: 'v:80', [name]: 'x', [`${name}_FILE`]: file('x', 'x') })).toThrow(`${name} and ${name}_FILE: set one, not both`);
    }
  });

  it("checks VARNISH_PURGE_TOKEN by the shipped VCL's rule: printable ASCII without spaces, 16 to 128, trimmed", () => {
    const base = { PURGER_ROLE: 'worker', VARNISH_NODES: 'v:80' };
    expect(loadConfig({ ...base, VARNISH_PURGE_TOKEN: ` ${'x'.repeat(128)} ` }).varnishPurgeToken).toBe('x'.repeat(128));
    expect(() => loadConfig({ ...base, VARNISH_PURGE_TOKEN: 'x'.repeat(129) })).toThrow(/VARNISH_PURGE_TOKEN: must be 16 to 128/);
    expect(() => loadConfig({ ...base, VARNISH_PURGE_TOKEN: 'x'.repeat(15) })).toThrow(/VARNISH_PURGE_TOKEN: must be/);
    expect(() => loadConfig({ ...base, VARNISH_PURGE_TOKEN: 'sixteen chars and spaces' })).toThrow(/VARNISH_PURGE_TOKEN: must be/);
  });

  it('repurges nothing by default (the shipped VCL closes the in-flight race)', () => {
    expect(loadConfig({ PURGER_ROLE: 'worker', VARNISH_NODES: 'v:80' }).repurgeDelaysMs).toEqual([]);
  });

  it('reads the new-node catch-up window: 5 min by default, 0 = start at the end, an integer >= 0', () => {
    const base = { PURGER_ROLE: 'worker', VARNISH_NODES: 'v:80' };
    expect(loadConfig(base).newNodeCatchupMs).toBe(300_000);
    expect(loadConfig({ ...base, PURGER_NEW_NODE_CATCHUP_MS: '0' }).newNodeCatchupMs).toBe(0);
    expect(loadConfig({ ...base, PURGER_NEW_NODE_CATCHUP_MS: '60000' }).newNodeCatchupMs).toBe(60_000);
    for (const bad of ['-1', '1.5', 'soon']) expect(() => loadConfig({ ...base, PURGER_NEW_NODE_CATCHUP_MS: bad })).toThrow(/PURGER_NEW_NODE_CATCHUP_MS/);
    expect(() => loadConfig({ ...base, PURGER_NEW_NODE_CATCHUP_MS: '-1' })).toThrow('PURGER_NEW_NODE_CATCHUP_MS="-1": expected a whole number between 0 and 2592000000');
  });

  it('reads the repurge schedule', () => {
    const base = { PURGER_ROLE: 'worker', VARNISH_NODES: 'v:80' };
    expect(loadConfig({ ...base, PURGER_REPURGE_DELAYS_MS: '250, 1000,5000' }).repurgeDelaysMs).toEqual([250, 1000, 5000]);
    expect(loadConfig({ ...base, PURGER_REPURGE_DELAYS_MS: '0' }).repurgeDelaysMs).toEqual([]);
    expect(() => loadConfig({ ...base, PURGER_REPURGE_DELAYS_MS: '2000,300' })).toThrow(/PURGER_REPURGE_DELAYS_MS="2000,300": expected 1 to 5 increasing delays/);
    expect(() => loadConfig({ ...base, PURGER_REPURGE_DELAYS_MS: '300,x' })).toThrow(/PURGER_REPURGE_DELAYS_MS/);
    expect(loadConfig({ ...base, PURGER_REPURGE_DELAYS_MS: '200' }).repurgeDelaysMs).toEqual([200]);
  });

  it('reads site-scoped secrets (site=whsec_…) next to global ones', () => {
    const c = loadConfig({ PURGER_WEBHOOK_SECRETS: `${SECRET},Example.com:443=${SECRET}`, PURGER_SITES: 'example.com', VARNISH_NODES: 'v:80', PURGER_TAG_PREFIXES: 'example.com=ex' });
    expect(c.webhookSecrets.map((s) => s.site)).toEqual([undefined, 'example.com']);
    expect(() => loadConfig({ PURGER_WEBHOOK_SECRETS: `bad host=${SECRET}`, PURGER_SITES: 'a.test', VARNISH_NODES: 'v:80' })).toThrow(/entry 1: "bad host" before = is not a host/);
  });

  it('needs secrets and sites only for ingest, nodes only for the worker', () => {
    expect(() => loadConfig({ PURGER_ROLE: 'worker', VARNISH_DNS: 'varnish:80' })).not.toThrow();
    expect(() => loadConfig({ PURGER_ROLE: 'ingest', PURGER_WEBHOOK_SECRETS: SECRET, PURGER_SITES: 'a.test' })).not.toThrow();
    expect(() => loadConfig({ PURGER_ROLE: 'worker' })).toThrow(/VARNISH_NODES or VARNISH_DNS/);
    expect(() => loadConfig({ PURGER_ROLE: 'ingest' })).toThrow(/PURGER_WEBHOOK_SECRETS: required/);
  });
});

describe('normalize', () => {
  it('normalizes hosts like Varnish does', () => {
    expect(normalizeSite('Example.COM.')).toBe('example.com');
    expect(normalizeSite('example.com:80')).toBe('example.com');
    expect(normalizeSite('example.com:443')).toBe('example.com');
    expect(normalizeSite('localhost:8080')).toBe('localhost:8080');
    expect(normalizeSite('bad host')).toBeUndefined();
  });

  it('keeps path and query of URLs on the site and refuses others', () => {
    expect(urlToPath('https://Example.com/a/b?x=1#frag', 'example.com')).toBe('/a/b?x=1');
    expect(urlToPath('http://example.com:80/a', 'example.com')).toBe('/a');
    expect(urlToPath('https://evil.test/a', 'example.com')).toEqual({ message: 'host "evil.test" is not the site "example.com"' });
    expect(urlToPath('ftp://example.com/a', 'example.com')).toEqual({ message: 'scheme ftp: is not http or https' });
    expect(urlToPath('/relative', 'example.com')).toEqual({ message: 'not an absolute URL (expected http(s)://host/path)' });
  });

  it('parses URLs literally: no WHATWG repairs, ports compared as written', () => {
    expect(urlToPath('http:example.com/a', 'example.com')).toEqual({ message: 'not an absolute URL (expected http(s)://host/path)' });
    expect(urlToPath('http://example.com:080/a', 'example.com')).toEqual({ message: '"example.com:080" is not a host[:port] (a port is 1-65535, without leading zeros)' });
    expect(urlToPath('http://evil.test\\@example.com/', 'example.com')).toEqual({ message: 'contains a backslash (percent-encode it as %5C)' });
    expect(urlToPath('http://user@example.com/', 'example.com')).toEqual({ message: 'URLs with credentials are not accepted' });
    expect(urlToPath('HTTPS://EXAMPLE.COM.', 'example.com')).toBe('/');
    expect(urlToPath('http://example.com?b=1&a=2', 'example.com')).toBe('/?b=1&a=2');
    expect(urlToPath('http://localhost:8080/x/', 'localhost:8080')).toBe('/x/');
  });

  it('refuses a prefix that could not be written as a ban regex', () => {
    expect(toStoredEvent({ id: 'a', kind: 'prefix', urls: ['http://example.com/a"b/'] }, 'example.com', 2, 'f', 0)).toEqual({ field: '/events/2/urls/0', message: 'a prefix URL may not contain " (percent-encode it as %22)' });
  });

  it("enforces a site's tag namespace when configured", () => {
    const c = loadConfig({ PURGER_WEBHOOK_SECRETS: SECRET, PURGER_SITES: 'example.com', VARNISH_NODES: 'v:80', PURGER_TAG_PREFIXES: 'Example.com=wp1-' });
    const prefix = c.tagPrefixes.get('example.com');
    expect(prefix).toBe('wp1');
    expect(toStoredEvent({ id: 'a', kind: 'tags', tags: ['wp1-p-1', 'wp2-p-1'] }, 'example.com', 0, 'f', 0, prefix)).toEqual({ field: '/events/0/tags/1', message: 'tags of site "example.com" must start with its namespace "wp1-" (PURGER_TAG_PREFIXES)' });
    expect(toStoredEvent({ id: 'a', kind: 'tags', tags: ['wp1-p-1'] }, 'example.com', 0, 'f', 0, prefix)).toMatchObject({ tags: ['wp1-p-1'] });
    expect(() => loadConfig({ PURGER_WEBHOOK_SECRETS: SECRET, PURGER_SITES: 'example.com', VARNISH_NODES: 'v:80', PURGER_TAG_PREFIXES: 'example.com' })).toThrow(/PURGER_TAG_PREFIXES: "example.com" is not site=namespace/);
  });

  it('takes RFC 3339 times only', () => {
    const ev = (time: string) => toStoredEvent({ id: 'a', kind: 'all', time }, 'example.com', 0, 'f', 0);
    expect(ev('2026-11-22T10:00:00Z')).toMatchObject({ time: '2026-11-22T10:00:00Z' });
    expect(ev('2026-11-22 10:00:00.5+02:00')).toMatchObject({ kind: 'all' });
    for (const bad of ['1', 'Sun, 22 Nov 2026 10:00:00 GMT', '2026-11-22', '2026-13-22T10:00:00Z']) {
      expect(ev(bad)).toEqual({ field: '/events/0/time', message: 'not an RFC 3339 date-time (e.g. 2026-11-22T10:00:00Z)' });
    }
  });

  it('checks kind-specific fields with a JSON-pointer field', () => {
    expect(toStoredEvent({ id: 'a', kind: 'urls', tags: ['x'] }, 'example.com', 3, 'f', 0)).toEqual({ field: '/events/3/tags', message: 'kind "urls" takes urls, not tags' });
    expect(toStoredEvent({ id: 'a', kind: 'tags' }, 'example.com', 0, 'f', 0)).toEqual({ field: '/events/0/tags', message: 'kind "tags" needs 1 to 1000 tags' });
    expect(toStoredEvent({ id: 'a', kind: 'urls', urls: ['https://example.com/ok', 'https://x.test/'] }, 'example.com', 1, 'f', 0)).toEqual({ field: '/events/1/urls/1', message: 'host "x.test" is not the site "example.com"' });
    expect(toStoredEvent({ kind: 'all' }, 'example.com', 0, 'op-1', 5)).toMatchObject({ id: 'op-1', kind: 'all', soft: false, acceptedAt: 5 });
  });
});
