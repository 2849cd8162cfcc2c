#!/usr/bin/env node
// Stale-page audit: fetches every page of a WordPress site twice, through the cache (Varnish)
// and straight from the origin, and reports each page whose content differs once per-request
// noise (nonces, cache headers) is removed. A page that differs is checked again every
// --recheck-ms until it matches or --recheck-limit-ms passed: still different then, it is STALE;
// one that matched on a recheck was served from grace while it refreshed (a soft purge working as
// designed: on a busy origin the refresh can take seconds) and is reported separately.
//
//   node stack/audit/audit.mjs --site http://localhost:8080 --origin http://127.0.0.1:8081
//       [--edge http://127.0.0.1:8080] [--urls FILE] [--max-urls 2000] [--concurrency 4]
//       [--recheck-ms 1500] [--recheck-limit-ms 15000] [--ignore REGEX]... [--origin-header "Name: value"]... [--json]
//
// --site   the public base URL: its host is sent as Host to both edge and origin
// --edge   where to reach the cache (default: --site)
// --origin where to reach the web server behind the cache, bypassing it
// URLs: the site's sitemaps (wp-sitemap.xml), home, feeds, first archive pages, the REST API an
// anonymous reader sees (every wp/v2 collection that answers 200, its first items, comments of
// the first posts, _embed, term collections by count), plus --urls.
// Exit status: 0 no stale page, 1 stale pages found, 2 usage or connection error.
import { readFileSync, realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { request, sleep } from './http.mjs';

// Per-request noise in WordPress pages: security nonces and the like. Extend with --ignore.
const DEFAULT_NOISE = [
  /(["']?(?:_wpnonce|_ajax_nonce|nonce|_wp_unfiltered_html_comment)["']?\s*(?:[:=]|value=)\s*\\?["']?)[0-9a-f]{10}/gi,
  /([?&;](?:amp;)?_wpnonce=)[0-9a-f]{10}/gi,
  /(name="akismet_comment_nonce" value=")[0-9a-f]+/gi,
  /(<input[^>]+name="ak_js"[^>]+value=")[0-9]+/gi,
  // WordPress picks one of three Gravatar hosts at random for a commenter without email.
  /(https?:(?:\\?\/){2})[0-2](?=\.gravatar\.com)/g,
  // Timing and cache-plugin footers: <!-- Page generated in 0.12 seconds -->, <!-- Cached … -->
  /(<!--)[^>]*?(?:generated|cached|served|seconds|queries|\d\s*ms\b)[^>]*?(?=-->)/gi,
];

export function normalize(body, extra = []) {
  let out = body;
  for (const re of DEFAULT_NOISE) out = out.replace(re, '$1<noise>');
  for (const re of extra) out = out.replace(re, '<noise>');
  return out.replace(/[ \t]+\n/g, '\n');
}

function fingerprint(res, extra) {
  // Status and redirect target matter; the body matters for pages that have one.
  const loc = res.headers.location || '';
  return `${res.status} ${loc}\n${normalize(res.body, extra)}`;
}

/** Every URL path of the site worth auditing, from its sitemaps and well-known pages. */
export async function discoverUrls({ origin, host, originHeaders = {}, maxUrls = 2000, log = () => {} }) {
  const paths = new Set(['/', '/feed/', '/comments/feed/', '/page/2/', '/wp-sitemap.xml']);
  const get = (p) => request(origin, p, { host, headers: originHeaders });
  const locs = (xml) => [...xml.matchAll(/<loc>\s*([^<\s]+)\s*<\/loc>/g)].map((m) => m[1].replace(/&amp;/g, '&'));
  const toPath = (u) => { const x = new URL(u); return x.pathname + x.search; };
  const index = await get('/wp-sitemap.xml');
  if (index.status === 200) {
    for (const sm of locs(index.body)) {
      paths.add(toPath(sm));
      const sub = await get(toPath(sm));
      if (sub.status !== 200) continue;
      for (const u of locs(sub.body)) {
        const p = toPath(u);
        paths.add(p);
        // Archives and their feeds change with every post in them.
        if (/\/(category|tag|author)\//.test(p)) paths.add(`${p.replace(/\/?$/, '/')}feed/`);
        if (paths.size >= maxUrls) break;
      }
      if (paths.size >= maxUrls) break;
    }
  } else {
    log(`no wp-sitemap.xml (status ${index.status}); auditing well-known pages and --urls only`);
  }
  const rest = await discoverRestUrls(get, Math.max(0, maxUrls - paths.size));
  if (!rest.length) log('no REST API at /wp-json/wp/v2 for anonymous readers');
  for (const p of rest) paths.add(p);
  return [...paths].slice(0, maxUrls);
}

/** The wp/v2 responses an anonymous reader gets: collections, their first items, embeds. */
export async function discoverRestUrls(get, maxUrls = 500, itemsPerBase = 10) {
  const paths = [];
  const add = (p) => { if (paths.length < maxUrls && !paths.includes(p)) paths.push(p); };
  const json = async (p) => {
    const r = await get(p);
    if (r.status !== 200) return null;
    try { return JSON.parse(r.body); } catch { return null; }
  };
  const root = '/wp-json/wp/v2';
  const bases = new Map(); // REST base -> kind
  for (const [registry, kind] of [['types', 'posts'], ['taxonomies', 'terms']]) {
    const listed = await json(`${root}/${registry}`);
    if (!listed || typeof listed !== 'object') continue;
    add(`${root}/${registry}`);
    for (const [name, o] of Object.entries(listed)) {
      if (o?.rest_base && (o.rest_namespace || 'wp/v2') === 'wp/v2') bases.set(o.rest_base, kind);
      add(`${root}/${registry}/${name}`);
    }
  }
  if (!bases.size) return paths;
  add(`${root}/statuses`);
  bases.set('comments', 'comments');
  bases.set('users', 'users');
  for (const [base, kind] of bases) {
    const items = await json(`${root}/${base}`);
    if (!Array.isArray(items)) continue; // Not readable anonymously (templates, blocks...).
    add(`${root}/${base}`);
    if (kind === 'posts') add(`${root}/${base}?_embed`);
    // Term counts: the lists a post joining or leaving a term reorders or changes.
    if (kind === 'terms') add(`${root}/${base}?orderby=count&order=desc&hide_empty=true`);
    for (const item of items.slice(0, itemsPerBase)) {
      if (!item || typeof item.id !== 'number') continue;
      add(`${root}/${base}/${item.id}`);
      if (kind === 'posts' && base === 'posts') add(`${root}/comments?post=${item.id}`);
    }
  }
  return paths;
}

/**
 * audit({site, edge, origin, paths, ...}) -> {checked, fresh, graced: [...], stale: [...], errors: [...]}
 */
export async function audit({ edge, origin, host, paths, concurrency = 4, recheckMs = 1500, recheckLimitMs = 15000, ignore = [], originHeaders = {}, log = () => {} }) {
  const result = { checked: 0, fresh: 0, graced: [], stale: [], errors: [] };
  const queue = [...paths];
  const compare = async (p) => {
    const [e, o] = await Promise.all([
      request(edge, p, { host }),
      request(origin, p, { host, headers: originHeaders }),
    ]);
    return { e, o, same: fingerprint(e, ignore) === fingerprint(o, ignore) };
  };
  const worker = async () => {
    for (let p = queue.shift(); p !== undefined; p = queue.shift()) {
      try {
        let r = await compare(p);
        result.checked++;
        if (r.same) { result.fresh++; continue; }
        const first = r;
        const until = Date.now() + recheckLimitMs;
        do {
          await sleep(recheckMs);
          r = await compare(p);
        } while (!r.same && Date.now() < until);
        if (r.same) {
          result.graced.push({ path: p, edgeCache: first.e.headers['x-cache'] || '' });
        } else {
          result.stale.push({
            path: p, edgeStatus: r.e.status, originStatus: r.o.status,
            edgeCache: r.e.headers['x-cache'] || '', age: r.e.headers.age || '',
            diff: firstDifference(normalize(r.e.body, ignore), normalize(r.o.body, ignore)),
          });
          log(`STALE ${p} (edge ${r.e.status} ${r.e.headers['x-cache'] || ''} age ${r.e.headers.age || '?'}, origin ${r.o.status})`);
        }
      } catch (err) {
        result.errors.push({ path: p, error: String(err.message || err) });
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return result;
}

function firstDifference(a, b) {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (i === a.length && i === b.length) return '';
  const from = Math.max(0, i - 60);
  return `edge: …${a.slice(from, i + 100)}…\norigin: …${b.slice(from, i + 100)}…`;
}

function parseArgs(argv) {
  const o = { ignore: [], originHeaders: {}, urlsFiles: [], concurrency: 4, recheckMs: 1500, recheckLimitMs: 15000, maxUrls: 2000 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i], v = () => { if (i + 1 >= argv.length) throw new Error(`${a} needs a value`); return argv[++i]; };
    switch (a) {
      case '--site': o.site = v(); break;
      case '--edge': o.edge = v(); break;
      case '--origin': o.origin = v(); break;
      case '--urls': o.urlsFiles.push(v()); break;
      case '--max-urls': o.maxUrls = Number(v()); break;
      case '--concurrency': o.concurrency = Number(v()); break;
      case '--recheck-ms': o.recheckMs = Number(v()); break;
      case '--recheck-limit-ms': o.recheckLimitMs = Number(v()); break;
      case '--ignore': o.ignore.push(new RegExp(v(), 'g')); break;
      case '--origin-header': { const [k, ...rest] = v().split(':'); o.originHeaders[k.trim()] = rest.join(':').trim(); break; }
      case '--json': o.json = true; break;
      case '-h': case '--help': o.help = true; break;
      default: throw new Error(`unknown argument ${a}`);
    }
  }
  return o;
}

async function main() {
  let o;
  try { o = parseArgs(process.argv.slice(2)); } catch (e) { console.error(`audit: ${e.message}`); process.exit(2); }
  if (o.help || !o.site || !o.origin) {
    console.error([
      'usage: audit.mjs --site URL --origin URL [--edge URL] [--urls FILE]... [--ignore REGEX]...',
      '                 [--origin-header "Name: value"]... [--concurrency 4] [--recheck-ms 1500] [--recheck-limit-ms 15000] [--max-urls 2000] [--json]',
      '  --site    public base URL (its host is sent to edge and origin)',
      '  --edge    where to reach the cache (default: --site)',
      '  --origin  where to reach the web server behind the cache',
      'exit status: 0 no stale page, 1 stale pages, 2 usage or connection error',
    ].join('\n'));
    process.exit(o.help ? 0 : 2);
  }
  const site = new URL(o.site);
  const host = site.host;
  const edge = o.edge || site.origin;
  if (site.protocol === 'https:' && !o.originHeaders['X-Forwarded-Proto']) o.originHeaders['X-Forwarded-Proto'] = 'https';
  const log = (m) => console.error(`audit: ${m}`);
  const started = Date.now();
  let paths;
  try {
    paths = await discoverUrls({ origin: o.origin, host, originHeaders: o.originHeaders, maxUrls: o.maxUrls, log });
  } catch (e) { log(`cannot reach the origin ${o.origin}: ${e.message}`); process.exit(2); }
  for (const f of o.urlsFiles) {
    for (const line of readFileSync(f, 'utf8').split('\n')) {
      const t = line.trim();
      if (!t || t.startsWith('#')) continue;
      const u = new URL(t, site);
      paths.push(u.pathname + u.search);
    }
  }
  paths = [...new Set(paths)];
  log(`${paths.length} URLs of ${host}: edge ${edge} vs origin ${o.origin}`);
  const r = await audit({ edge, origin: o.origin, host, paths, concurrency: o.concurrency, recheckMs: o.recheckMs, recheckLimitMs: o.recheckLimitMs, ignore: o.ignore, originHeaders: o.originHeaders, log });
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (o.json) console.log(JSON.stringify({ host, ...r, seconds: Number(secs) }, null, 2));
  for (const s of r.stale) console.error(`\nSTALE ${s.path}\n${s.diff}`);
  for (const e of r.errors) log(`error ${e.path}: ${e.error}`);
  console.log(`audit: ${r.checked} pages checked in ${secs}s: ${r.fresh} fresh, ${r.graced.length} served stale once then refreshed (grace), ${r.stale.length} STALE, ${r.errors.length} errors`);
  process.exit(r.stale.length ? 1 : r.errors.length ? 2 : 0);
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) main();
