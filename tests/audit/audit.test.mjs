// Tests of the stale-page audit against two small HTTP servers standing in for the cache and
// the origin (node --test). The e2e suite runs it against real Varnish and WordPress.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { audit, discoverUrls, normalize } from '../../stack/audit/audit.mjs';

const run = promisify(execFile);

function serve(routes) {
  const seen = [];
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url, host: req.headers.host });
    const route = routes[req.url];
    if (!route) { res.writeHead(404); res.end('not found'); return; }
    const { status = 200, body = '', headers = {} } = typeof route === 'function' ? route() : route;
    res.writeHead(status, headers);
    res.end(body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    base: `http://127.0.0.1:${server.address().port}`, seen, close: () => server.close(),
  })));
}

test('normalize removes nonces and timing comments, keeps content', () => {
  const page = (nonce, secs, title) =>
    `<h1>${title}</h1><!-- generated in ${secs} seconds --><input name="_wpnonce" value="${nonce}">` +
    `<script>var s = {"nonce":"${nonce}"};</script><a href="/x?_wpnonce=${nonce}">`;
  assert.equal(normalize(page('0123456789', '0.1', 'A')), normalize(page('abcdefabcd', '0.9', 'A')));
  assert.notEqual(normalize(page('0123456789', '0.1', 'A')), normalize(page('0123456789', '0.1', 'B')));
});

test('audit tells fresh, stale and served-stale-once pages apart, and compares status and redirects', async () => {
  let graceCalls = 0;
  let slowCalls = 0;
  const edge = await serve({
    // a refresh that takes a busy origin three rechecks: grace, not stale, within the limit
    '/slow-grace/': () => ({ body: slowCalls++ < 3 ? '<p>old</p>' : '<p>new</p>' }),
    '/same/': { body: '<p>same</p>' },
    '/stale/': { body: '<p>old</p>' },
    '/grace/': () => ({ body: graceCalls++ === 0 ? '<p>old</p>' : '<p>new</p>' }),
    '/gone/': { body: '<p>still here</p>' },
    '/moved/': { status: 301, headers: { location: 'http://site.test/old-target/' } },
  });
  const origin = await serve({
    '/same/': { body: '<p>same</p>' },
    '/stale/': { body: '<p>new</p>' },
    '/grace/': { body: '<p>new</p>' },
    '/slow-grace/': { body: '<p>new</p>' },
    '/moved/': { status: 301, headers: { location: 'http://site.test/new-target/' } },
  });
  try {
    const r = await audit({ edge: edge.base, origin: origin.base, host: 'site.test', paths: ['/same/', '/stale/', '/grace/', '/slow-grace/', '/gone/', '/moved/'], recheckMs: 50, recheckLimitMs: 300 });
    assert.equal(r.checked, 6);
    assert.equal(r.fresh, 1);
    assert.deepEqual(r.graced.map((g) => g.path).sort(), ['/grace/', '/slow-grace/']);
    assert.deepEqual(r.stale.map((s) => s.path).sort(), ['/gone/', '/moved/', '/stale/']);
    assert.equal(r.errors.length, 0);
    assert.ok(edge.seen.every((s) => s.host === 'site.test') && origin.seen.every((s) => s.host === 'site.test'), 'the site Host header goes to both');
  } finally { edge.close(); origin.close(); }
});

test('discoverUrls reads the sitemap index and its sitemaps, adds archive feeds', async () => {
  const origin = await serve({
    '/wp-sitemap.xml': { body: '<sitemapindex><sitemap><loc>http://site.test/wp-sitemap-posts-post-1.xml</loc></sitemap><sitemap><loc>http://site.test/wp-sitemap-taxonomies-category-1.xml</loc></sitemap></sitemapindex>' },
    '/wp-sitemap-posts-post-1.xml': { body: '<urlset><url><loc>http://site.test/hello/</loc></url><url><loc>http://site.test/?p=7&amp;x=1</loc></url></urlset>' },
    '/wp-sitemap-taxonomies-category-1.xml': { body: '<urlset><url><loc>http://site.test/category/news/</loc></url></urlset>' },
  });
  try {
    const paths = await discoverUrls({ origin: origin.base, host: 'site.test' });
    for (const p of ['/', '/feed/', '/hello/', '/?p=7&x=1', '/category/news/', '/category/news/feed/']) assert.ok(paths.includes(p), `${p} in ${paths}`);
  } finally { origin.close(); }
});

test('discoverRestUrls adds each term collection ordered by count and its items (their counts)', async () => {
  const origin = await serve({
    '/wp-sitemap.xml': { status: 404 },
    '/wp-json/wp/v2/types': { body: JSON.stringify({ post: { rest_base: 'posts' } }) },
    '/wp-json/wp/v2/taxonomies': { body: JSON.stringify({ post_tag: { rest_base: 'tags' } }) },
    '/wp-json/wp/v2/posts': { body: '[]' },
    '/wp-json/wp/v2/tags': { body: JSON.stringify([{ id: 35, count: 12 }]) },
  });
  try {
    const paths = await discoverUrls({ origin: origin.base, host: 'site.test' });
    for (const p of ['/wp-json/wp/v2/tags', '/wp-json/wp/v2/tags/35', '/wp-json/wp/v2/tags?orderby=count&order=desc&hide_empty=true']) assert.ok(paths.includes(p), `${p} in ${paths}`);
    assert.ok(!paths.includes('/wp-json/wp/v2/posts?orderby=count&order=desc&hide_empty=true'), 'posts have no counts');
  } finally { origin.close(); }
});

test('the command exits 1 on a stale page and 0 when everything is fresh', async () => {
  const cli = fileURLToPath(new URL('../../stack/audit/audit.mjs', import.meta.url));
  const edge = await serve({ '/': { body: 'old' }, '/wp-sitemap.xml': { status: 404 } });
  const origin = await serve({ '/': { body: 'new' }, '/wp-sitemap.xml': { status: 404 } });
  try {
    const args = ['--site', 'http://site.test', '--edge', edge.base, '--origin', origin.base, '--recheck-ms', '50', '--recheck-limit-ms', '300'];
    await assert.rejects(run('node', [cli, ...args]), (e) => e.code === 1 && /1 STALE/.test(e.stdout));
    const same = await serve({ '/': { body: 'old' }, '/wp-sitemap.xml': { status: 404 } });
    try {
      const { stdout } = await run('node', [cli, '--site', 'http://site.test', '--edge', edge.base, '--origin', same.base, '--recheck-ms', '50', '--recheck-limit-ms', '300']);
      assert.match(stdout, /0 STALE/);
    } finally { same.close(); }
  } finally { edge.close(); origin.close(); }
});

test('discovery adds the REST collections and items an anonymous reader can get', async () => {
  const j = (v) => ({ body: JSON.stringify(v), headers: { 'content-type': 'application/json' } });
  const origin = await serve({
    '/wp-json/wp/v2/types': j({ post: { rest_base: 'posts', rest_namespace: 'wp/v2' }, wp_block: { rest_base: 'blocks', rest_namespace: 'wp/v2' } }),
    '/wp-json/wp/v2/taxonomies': j({ category: { rest_base: 'categories', rest_namespace: 'wp/v2' } }),
    '/wp-json/wp/v2/posts': j([{ id: 7 }, { id: 5 }]),
    '/wp-json/wp/v2/blocks': { status: 401, body: '{}' },
    '/wp-json/wp/v2/categories': j([{ id: 3 }]),
    '/wp-json/wp/v2/comments': j([{ id: 11 }]),
    '/wp-json/wp/v2/users': j([{ id: 1 }]),
  });
  try {
    const paths = await discoverUrls({ origin: origin.base, host: 'site.test' });
    for (const p of ['/wp-json/wp/v2/posts', '/wp-json/wp/v2/posts/7', '/wp-json/wp/v2/posts/5', '/wp-json/wp/v2/posts?_embed',
      '/wp-json/wp/v2/comments?post=7', '/wp-json/wp/v2/categories/3', '/wp-json/wp/v2/comments/11', '/wp-json/wp/v2/users/1',
      '/wp-json/wp/v2/types/post', '/wp-json/wp/v2/statuses']) {
      assert.ok(paths.includes(p), `${p} discovered`);
    }
    assert.ok(!paths.some((p) => p.startsWith('/wp-json/wp/v2/blocks')), 'a collection anonymous readers cannot get is left out');
  } finally { origin.close(); }
});
