// Ban-expression and header injection, end to end: signed events whose URLs, tags and site carry
// quotes, `&&`, regex metacharacters, whitespace, CR/LF, very long values and unicode go through
// the real purger to a real varnishd. Each is either refused by the purger (400, nothing stored)
// or applied without widening: every cached canary page survives, and every ban that reaches
// Varnish is `obj.http.x-host == <site> && obj.http.x-url ~ ^<fully escaped literal>`.
// (Varnish's own refusal of unescaped BAN input is vcl/tests/ban-rejects-injection.vtc.)
import { tagEvent } from '../../testkit/events.mjs';
import { assert, postEvents, storedCount, urlEvent, varnishBans } from '../lib/common.mjs';
import { newPrefix, postPaths, startNodes, startPurger, stillCached, stopNodes, warm, waitCaughtUp } from '../lib/cluster.mjs';

export const title = 'hostile: ban-expression and header injection never widens an invalidation';

const META = '\\^$.|?*+()[]{}';

/** True when `lit` is a literal in which every regex metacharacter is escaped. */
function isEscapedLiteral(lit) {
  for (let i = 0; i < lit.length; i++) {
    if (lit[i] === '\\') { if (!META.includes(lit[i + 1] ?? '')) return false; i++; continue; }
    if (META.includes(lit[i])) return false;
  }
  return lit.length > 0;
}

/** `^<escaped literal>` or the purger's packed form `^(?:<escaped>|<escaped>|…)`. */
export function isEscapedPrefix(re) {
  if (!re.startsWith('^')) return false;
  const packed = /^\^\(\?:(.*)\)$/.exec(re);
  if (!packed) return isEscapedLiteral(re.slice(1));
  const alternatives = [];
  let cur = '';
  for (let i = 0; i < packed[1].length; i++) {
    const c = packed[1][i];
    if (c === '\\') { cur += c + (packed[1][i + 1] ?? ''); i++; } else if (c === '|') { alternatives.push(cur); cur = ''; } else cur += c;
  }
  alternatives.push(cur);
  return alternatives.every(isEscapedLiteral);
}

export async function run({ env, log }) {
  const [node] = (await startNodes(env, 1, { lurkerAge: '3600' })).slice(1);
  const prefix = newPrefix('inject');
  const purger = await startPurger(env, { prefix, nodes: [node.node], extra: { PURGER_REPURGE_DELAYS_MS: '0' } });
  try {
    const canaries = ['/', '/feed/', ...(await postPaths(env, 8)).map((p) => p.path)];
    await warm([node], canaries);
    const bansBefore = new Set(varnishBans(node.workdir).map(banExpr));
    const s = `http://${env.site}`;
    const hostile = [
      '/.*', '/(', '/[a-z]+/', '/a|b', '/^', '/$', '/\\', '/?a=.*&b=(x)', '/(a+)+$', '/{1,}',
      '/"&&obj.http.x-host~.', "/'&&req.url~'.", '/%22%20%26%26%20obj.status%20!=%200', '/%0d%0aX-Ban-Url:%20.*',
      '/&&', '/||', '/a&&obj.http.x-url~.', '/%E2%80%A8%F0%9F%92%A5', `/${'a.'.repeat(1000)}`,
    ];
    const refusedOnes = [
      [{ kind: 'prefix', urls: [`${s}/a b`] }, 'space'],
      [{ kind: 'prefix', urls: [`${s}/a\r\nX-Ban-Url: .*`] }, 'CR/LF'],
      [{ kind: 'prefix', urls: [`${s}/a\tb`] }, 'tab'],
      [{ kind: 'prefix', urls: [`${s}/é`] }, 'unicode'],
      [{ kind: 'prefix', urls: [`${s}/${'x'.repeat(2100)}`] }, 'over 2048 chars'],
      [{ kind: 'urls', urls: [`${s}/a"b c`] }, 'quote and space'],
      [{ kind: 'prefix', urls: [`http://other.example/`] }, 'another host'],
      [{ kind: 'prefix', urls: [`http://${env.site}@other.example/`] }, 'userinfo trick'],
      [{ kind: 'tags', tags: ['wp1-home wp1-front'] }, 'space in a key'],
      [{ kind: 'tags', tags: ['wp1-home,wp1-front'] }, 'comma in a key'],
      [{ kind: 'tags', tags: ['.*'] }, 'regex as a key'],
      [{ kind: 'tags', tags: ['wp1-home\r\nxkey-purge: wp1-front'] }, 'CR/LF in a key'],
      [{ kind: 'tags', tags: ['ключ'] }, 'unicode key'],
      [{ kind: 'tags', tags: [`k${'x'.repeat(128)}`] }, '129-char key'],
      [{ kind: 'all', urls: [`${s}/`] }, 'all with urls'],
    ];
    let stored = 0;
    let refused = 0;
    for (const [ev, why] of refusedOnes) {
      const r = await postEvents(env, purger.url, { site: env.site, events: [{ ...tagEvent(['x']), tags: undefined, ...ev }] });
      assert(r.status === 400, `${why}: ${r.status}, want 400 (${r.body.slice(0, 160)})`);
      assert((await storedCount(env, prefix)) === stored, `${why}: refused but stored`);
      refused++;
    }
    for (const site of [`${env.site}" && obj.http.x-host ~ "`, `${env.site}\r\nX-Ban-Host: x`, `${env.site} `, 'LOCALHOST']) {
      const r = await postEvents(env, purger.url, { site, events: [tagEvent(['x'])] });
      assert(r.status === 400 || r.status === 403, `site ${JSON.stringify(site)}: ${r.status}, want 400/403`);
      refused++;
    }
    const accepted = [];
    for (const path of hostile) {
      for (const kind of ['prefix', 'urls']) {
        const e = urlEvent(env, [path], { kind });
        const r = await postEvents(env, purger.url, { site: env.site, events: [e] });
        assert(r.status === 202 || r.status === 400, `${kind} ${path.slice(0, 60)}: ${r.status}`);
        if (r.status === 202) { accepted.push(`${kind} ${path.slice(0, 40)}`); stored++; } else refused++;
      }
    }
    assert(accepted.length > 0, 'every hostile-but-printable URL was refused: nothing reached Varnish, so escaping was not exercised');
    await waitCaughtUp(env, prefix, [node.node], 60_000);
    // Read the ban list before any lookup: a lookup moves objects past old bans, which lets
    // Varnish drop them from the list.
    const added = varnishBans(node.workdir).map(banExpr).filter((b) => b && !bansBefore.has(b));
    const left = await stillCached(node, canaries);
    assert(left.length === canaries.length, `hostile events widened an invalidation: ${canaries.filter((c) => !left.includes(c)).join(' ')} purged`);
    const bad = added.filter((b) => {
      const m = /^obj\.http\.x-host == (\S+) && obj\.http\.x-url ~ (\S+)$/.exec(b);
      return !m || m[1] !== env.site || !isEscapedPrefix(m[2]);
    });
    assert(added.length > 0, 'no ban reached Varnish for the accepted prefix events');
    assert(bad.length === 0, `unescaped or widened ban expressions reached Varnish: ${bad.map((b) => b.slice(0, 120)).join(' | ')}`);
    log(`${refused} hostile inputs refused by the purger, ${accepted.length} accepted and applied: ${added.length} bans, all anchored and escaped; ${canaries.length}/${canaries.length} canary pages still cached`);
    return { refusedAtIngest: refused, acceptedAndApplied: accepted.length, bansAdded: added.length, unescapedBans: 0, canariesKept: left.length, exampleBans: added.slice(0, 6).map((b) => b.slice(0, 100)) };
  } finally {
    await purger.kill('SIGTERM');
    await stopNodes([node]);
  }
}

/** The expression part of a `ban.list` line: "<time> <objects> [C] <expression>". */
function banExpr(line) {
  const m = /^\s*\S+\s+\d+\s+(?:[C-]\s+)?(.*)$/.exec(line);
  return m ? m[1].trim() : '';
}
