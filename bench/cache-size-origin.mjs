// make bench-cache-size's origin: a fast synthetic WordPress. Post pages /post-<i>/ (any i) and a
// fixed set of listings (home, feed, 40 categories, 8 authors), each tagged with xkey keys shaped
// like the plugin's (namespace wp1-), answered at once with a one-day Surrogate-Control TTL.
// Control (the bench's, never through Varnish): POST /__edit?posts=1,2,3 bumps those posts'
// version (answers the new ones) (a post's page prints it; listings print the count of edits), GET /__stats the number
// of page requests served. Run: node cache-size-origin.mjs PORT (0: any; prints "listening PORT").
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

export const NS = 'wp1';
export const CATEGORIES = 40;
export const AUTHORS = 8;
const LISTED = 10;
// A page's weight in the cache: about the size of a small rendered page after gzip.
const FILLER = 'lorem ipsum dolor sit amet '.repeat(12);

/** The terms and author post i belongs to (the bench's edits purge the same ones). */
export const postFacts = (i) => ({ categories: [1 + (i % CATEGORIES), 1 + ((i * 7 + 3) % CATEGORIES)], author: 1 + (i % AUTHORS) });

/** The keys post i's page carries: its own, the neighbours it links, the terms and author it shows, the menus. */
function postKeys(i) {
  const { categories, author } = postFacts(i);
  return [`p-${i}`, `c-${i}`, `pn-${i - 1}`, `pn-${i + 1}`, ...categories.map((t) => `t-${t}`), `u-${author}`, 'menus'].map((k) => `${NS}-${k}`).join(' ');
}

/** Listings list the newest posts (0..LISTED-1 here) and carry their listing key. */
function listingKeys(key) {
  return [key, ...Array.from({ length: LISTED }, (_, i) => `pl-${i}`), 'menus'].map((k) => `${NS}-${k}`).join(' ');
}

function page(path) {
  const post = /^\/post-(\d+)\/$/.exec(path);
  if (post) return { keys: postKeys(Number(post[1])), version: versions.get(Number(post[1])) ?? 1 };
  if (path === '/') return { keys: listingKeys('home'), version: edits };
  if (path === '/feed/') return { keys: listingKeys('feed'), version: edits };
  const cat = /^\/category\/c(\d+)\/$/.exec(path);
  if (cat && Number(cat[1]) >= 1 && Number(cat[1]) <= CATEGORIES) return { keys: listingKeys(`tl-${cat[1]}`), version: edits };
  const author = /^\/author\/a(\d+)\/$/.exec(path);
  if (author && Number(author[1]) >= 1 && Number(author[1]) <= AUTHORS) return { keys: listingKeys(`ul-${author[1]}`), version: edits };
  return undefined;
}

const versions = new Map();
let edits = 0;
let served = 0;

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://origin');
  if (url.pathname === '/__edit' && req.method === 'POST') {
    const now = {};
    for (const p of (url.searchParams.get('posts') ?? '').split(',').filter(Boolean).map(Number)) {
      now[p] = (versions.get(p) ?? 1) + 1;
      versions.set(p, now[p]);
    }
    edits++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ edits, versions: now }));
    return;
  }
  if (url.pathname === '/__stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ served, edits }));
    return;
  }
  served++;
  const p = page(url.pathname);
  if (!p) {
    res.writeHead(404, { 'content-type': 'text/plain', 'cache-control': 'max-age=60' });
    res.end('not found\n');
    return;
  }
  res.writeHead(200, { 'content-type': 'text/html; charset=UTF-8', 'surrogate-control': 'max-age=86400', 'cache-control': 'max-age=60', xkey: p.keys });
  res.end(`<!doctype html><title>${url.pathname} v${p.version}</title><p>${FILLER}</p>\n`);
});

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => console.log(`listening ${server.address().port}`));
}
