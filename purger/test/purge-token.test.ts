// X-Purge-Token against the shipped entry VCL (vcl/entry.vcl.in, rendered by vcl/render-entry.sh,
// its rule in vcl/microcache/purge-token.vcl): the purger's configuration accepts exactly the
// token files that VCL loads with, sends the token on every PURGE/PURGEKEYS/BAN, never logs it,
// and a node refuses a purger without it or with another one.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/load.js';
import { freePort } from '../../testkit/ports.mjs';
import { REPO_ROOT } from '../../testkit/process.mjs';
import { renderEntry } from '../../testkit/varnish.mjs';
import { until } from '../../testkit/wait.mjs';
import { SITE, Stack, READ_AUTH, eventId, postEvents, tagEvent, urlEvent } from './support/stack.js';
import { appliedEverywhere, receipt, warm } from './helpers.js';

/** exactly 16 characters: the shortest token both sides accept */
const TOKEN = 'tok-0123456789ab';
let stack: Stack;
let dir: string;
let loads = 0;

beforeAll(async () => {
  stack = await Stack.start({ nodes: 1, purgeToken: TOKEN });
  dir = mkdtempSync(join(tmpdir(), 'purger-token-'));
  chmodSync(dir, 0o755); // varnishd's compiler and cache process read the files as their own users
});

afterAll(async () => {
  await stack.close();
  rmSync(dir, { recursive: true, force: true });
});

/** a file holding `content` (undefined: no file) */
function tokenFile(name: string, content: string | undefined): string {
  const file = join(dir, name);
  if (content !== undefined) writeFileSync(file, content, { mode: 0o644 });
  return file;
}

/** the problems loadConfig finds with the purger reading its token from `file` ('' = none) */
function configProblems(file: string): string {
  try {
    loadConfig({ ...stack.baseEnv, VARNISH_PURGE_TOKEN: '', VARNISH_PURGE_TOKEN_FILE: file });
    return '';
  } catch (e) {
    if (e instanceof ConfigError) return e.problems.join('\n');
    throw e;
  }
}

/** loads the shipped entry, reading its token from `file`, into the running node: does it load? */
function vclLoads(file: string, use = false): boolean {
  const name = `token${++loads}`;
  const vcl = join(dir, `${name}.vcl`);
  const node = stack.varnishes[0]!;
  writeFileSync(vcl, renderEntry({ backend: node.backend, tokenFile: file, purgers: '127.0.0.1' }), { mode: 0o644 });
  // -t: compiling a VCL on a busy machine outlasts varnishadm's default wait
  const adm = (...args: string[]) => execFileSync('varnishadm', ['-t', '300', '-n', node.workdir, ...args], { stdio: 'pipe' });
  try {
    adm('vcl.load', name, vcl);
  } catch {
    return false;
  }
  if (use) adm('vcl.use', name);
  return true;
}

describe('the purger and the shipped VCL agree on what a token is', () => {
  const cases: [string, string | undefined, boolean][] = [
    ['16 visible characters', TOKEN, true],
    ['16 with whitespace and newlines around them', `\n  ${TOKEN} \t\n\n`, true],
    ['100 visible characters', 'x'.repeat(100), true],
    ['128 visible characters (the most the VCL compares)', 'x'.repeat(128), true],
    ['129 characters', 'x'.repeat(129), false],
    ['15 characters', TOKEN.slice(1), false],
    ['a space inside', 'tok 0123456789abcdef', false],
    ['two lines', `${TOKEN}\n${TOKEN}\n`, false],
    ['a character outside ASCII', 'tök-0123456789abcdef', false],
    ['a byte-order mark before it (trimmed by neither)', `\uFEFF${TOKEN}`, false],
    ['an empty file', '\n', false],
    ['no file', undefined, false],
  ];
  it.each(cases.map(([label, content, accepted]) => [`${label}: both ${accepted ? 'accept' : 'refuse'} it`, content, accepted] as const))('%s', (label, content, accepted) => {
    const file = tokenFile(`case-${label.replace(/\W+/g, '-')}`, content);
    const problems = configProblems(file);
    expect({ purger: problems === '', vcl: vclLoads(file) }).toEqual({ purger: accepted, vcl: accepted });
    if (!accepted) expect(problems).toMatch(/VARNISH_PURGE_TOKEN/);
    if (content !== undefined && content.trim().length >= 16) expect(problems).not.toContain(content.trim());
  });
});

describe('a node running the shipped entry VCL', () => {
  it('refuses a purger without the token or with another one (403, retried, the page stays)', async () => {
    for (const [path, token] of [['/no-token/', ''], ['/wrong-token/', 'tok-0123456789aX']] as const) {
      expect(stack.config({ VARNISH_PURGE_TOKEN: token }).varnishPurgeToken).toBe(token || undefined);
      const svc = await stack.service({ PURGER_REPURGE_DELAYS_MS: '0', VARNISH_PURGE_TOKEN: token });
      await until('node known', () => svc.worker!.nodeCount === 1);
      await warm(stack, [path]);
      const e = urlEvent([path]);
      expect((await postEvents(svc.url, { site: SITE, events: [e] })).status).toBe(202);
      const pending = await until('refused with 403', async () => (await receipt(svc, e.id)).nodes.find((n) => n.state === 'pending' && /403/.test(String((n as { error?: string }).error))));
      expect(pending).toBeDefined();
      expect((await stack.varnishes[0]!.get(SITE, path)).cache).toBe('HIT');
      await stack.stopService(svc);
    }
  });

  it('gets the token on PURGE, PURGEKEYS and BAN: every kind is applied', async () => {
    const svc = await stack.service({ PURGER_REPURGE_DELAYS_MS: '0', VARNISH_PURGE_TOKEN: TOKEN });
    await until('node known', () => svc.worker!.nodeCount === 1);
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

  it('reads one whitespace-padded token file on both sides: the started purger is applied, and never logs the token', async () => {
    execFileSync(process.execPath, [`${REPO_ROOT}/purger/node_modules/typescript/bin/tsc`, '-p', `${REPO_ROOT}/purger/tsconfig.json`], { stdio: 'inherit' });
    const file = tokenFile('padded', `\n  ${TOKEN} \n`);
    expect(vclLoads(file, true)).toBe(true);
    const port = await freePort();
    const proc = stack.spawn({ PURGER_PORT: String(port), PURGER_LOG_LEVEL: 'trace', PURGER_REPURGE_DELAYS_MS: '0', VARNISH_PURGE_TOKEN: '', VARNISH_PURGE_TOKEN_FILE: file });
    const url = `http://127.0.0.1:${port}`;
    await until('ready', async () => (await fetch(`${url}/readyz`)).status === 200);
    await warm(stack, ['/tok/file/']);
    const e = urlEvent(['/tok/file/']);
    expect((await postEvents(url, { site: SITE, events: [e] })).status).toBe(202);
    await until('applied', async () => {
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

  it('refuses both forms at once and a missing file, without echoing the token', () => {
    const file = tokenFile('cfg-token', `${TOKEN}\n`);
    expect(problems({ VARNISH_PURGE_TOKEN: TOKEN, VARNISH_PURGE_TOKEN_FILE: file })).toContain('VARNISH_PURGE_TOKEN and VARNISH_PURGE_TOKEN_FILE: set one, not both');
    expect(problems({ VARNISH_PURGE_TOKEN_FILE: join(dir, 'nope') })).toMatch(/VARNISH_PURGE_TOKEN_FILE=".*nope": cannot read it \(ENOENT\)/);
    tokenFile('cfg-short', 'short-token\n');
    const p = problems({ VARNISH_PURGE_TOKEN_FILE: join(dir, 'cfg-short') });
    expect(p).toContain('VARNISH_PURGE_TOKEN: must be');
    expect(p).not.toContain('short-token');
  });
});
