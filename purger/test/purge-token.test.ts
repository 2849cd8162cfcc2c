// X-Purge-Token (issue 13 item 5, purger side): a real varnishd whose entry VCL refuses
// PURGE/PURGEKEYS/BAN without the shared secret; the purger sends it on every request when
// VARNISH_PURGE_TOKEN (or VARNISH_PURGE_TOKEN_FILE) is set, and never logs it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { REPO_ROOT, freePort, waitFor } from './support/processes.js';
import { SITE, Stack, READ_AUTH, eventId, postEvents, tagEvent, urlEvent } from './support/stack.js';
import { appliedEverywhere, receipt, warm } from './helpers.js';

const TOKEN = 'purge-token-0123456789-abcdef';
let stack: Stack;
let dir: string;

beforeAll(async () => {
  stack = await Stack.start({ nodes: 1, purgeTokens: [TOKEN] });
  dir = mkdtempSync(join(tmpdir(), 'purger-token-'));
});

afterAll(async () => {
  await stack.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a Varnish node that requires X-Purge-Token', () => {
  it('refuses the purger without the token (403, retried, the page stays)', async () => {
    const svc = await stack.service({ PURGER_REPURGE_DELAYS_MS: '0' });
    await waitFor('node known', () => svc.worker!.nodeCount === 1);
    await warm(stack, ['/no-token/']);
    const e = urlEvent(['/no-token/']);
    expect((await postEvents(svc.url, { site: SITE, events: [e] })).status).toBe(202);
    const pending = await waitFor('refused with 403', async () => (await receipt(svc, e.id)).nodes.find((n) => n.state === 'pending' && /403/.test(String((n as { error?: string }).error))));
    expect(pending).toBeDefined();
    expect((await stack.varnishes[0]!.get(SITE, '/no-token/')).cache).toBe('HIT');
    await stack.stopService(svc);
  });

  it('sends the token on PURGE, PURGEKEYS and BAN: every kind is applied', async () => {
    const svc = await stack.service({ PURGER_REPURGE_DELAYS_MS: '0', VARNISH_PURGE_TOKEN: TOKEN });
    await waitFor('node known', () => svc.worker!.nodeCount === 1);
    await warm(stack, ['/tok/url/', '/tok/key/', '/tok/prefix/a/']);
    const events = [
      urlEvent(['/tok/url/']),
      tagEvent(['p-tok-key']),
      { id: eventId(), kind: 'prefix', urls: [`http://${SITE}/tok/prefix/`], soft: false, reason: 'r', time: new Date().toISOString() },
    ];
    expect((await postEvents(svc.url, { site: SITE, events })).status).toBe(202);
    for (const e of events) {
      const nodes = await appliedEverywhere(svc, e.id, 1);
      expect(nodes[0]!.state).toBe('applied');
    }
    for (const p of ['/tok/url/', '/tok/key/', '/tok/prefix/a/']) expect((await stack.varnishes[0]!.get(SITE, p)).cache).toBe('MISS');
    await stack.stopService(svc);
  });

  it('reads the token from VARNISH_PURGE_TOKEN_FILE in the started process, and never logs it', async () => {
    execFileSync(process.execPath, [`${REPO_ROOT}/purger/node_modules/typescript/bin/tsc`, '-p', `${REPO_ROOT}/purger/tsconfig.json`], { stdio: 'inherit' });
    const file = join(dir, 'token');
    writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 });
    const port = await freePort();
    const proc = stack.spawn({ PURGER_PORT: String(port), PURGER_LOG_LEVEL: 'trace', PURGER_REPURGE_DELAYS_MS: '0', VARNISH_PURGE_TOKEN_FILE: file });
    const url = `http://127.0.0.1:${port}`;
    await waitFor('ready', async () => (await fetch(`${url}/readyz`)).status === 200);
    await warm(stack, ['/tok/file/']);
    const e = urlEvent(['/tok/file/']);
    expect((await postEvents(url, { site: SITE, events: [e] })).status).toBe(202);
    await waitFor('applied', async () => {
      const r = await fetch(`${url}/v1/events/${e.id}`, { headers: READ_AUTH });
      return r.status === 200 && ((await r.json()) as { nodes: { state: string }[] }).nodes.some((n) => n.state === 'applied');
    });
    expect((await stack.varnishes[0]!.get(SITE, '/tok/file/')).cache).toBe('MISS');
    proc.kill('SIGTERM');
    await proc.exited;
    expect(proc.output).toContain('batch applied');
    expect(proc.output).not.toContain(TOKEN);
  });
});

describe('configuration', () => {
  const base = { PURGER_ROLE: 'worker', VARNISH_NODES: 'v:80' };
  const problems = (env: Record<string, string>): string => {
    try {
      loadConfig({ ...base, ...env });
      return '';
    } catch (e) {
      if (e instanceof ConfigError) return e.problems.join('\n');
      throw e;
    }
  };

  it('is off by default and takes the inline value', () => {
    expect(loadConfig(base).varnishPurgeToken).toBeUndefined();
    expect(loadConfig({ ...base, VARNISH_PURGE_TOKEN: TOKEN }).varnishPurgeToken).toBe(TOKEN);
  });

  it('refuses both forms at once, a missing or empty file, and a token unfit for a header, without echoing it', () => {
    const file = join(dir, 'cfg-token');
    writeFileSync(file, 'short\n');
    expect(problems({ VARNISH_PURGE_TOKEN: TOKEN, VARNISH_PURGE_TOKEN_FILE: file })).toContain('VARNISH_PURGE_TOKEN and VARNISH_PURGE_TOKEN_FILE: set one, not both');
    expect(problems({ VARNISH_PURGE_TOKEN_FILE: join(dir, 'nope') })).toMatch(/VARNISH_PURGE_TOKEN_FILE=".*nope": cannot read it \(ENOENT\)/);
    writeFileSync(file, '\n');
    expect(problems({ VARNISH_PURGE_TOKEN_FILE: file })).toContain('the file is empty');
    writeFileSync(file, 'short\n');
    const p = problems({ VARNISH_PURGE_TOKEN_FILE: file });
    expect(p).toContain('VARNISH_PURGE_TOKEN: must be 16 to 512 visible ASCII characters');
    expect(p).not.toContain('short');
    expect(problems({ VARNISH_PURGE_TOKEN: 'has a space in it 0123456789' })).toContain('VARNISH_PURGE_TOKEN: must be');
  });
});
