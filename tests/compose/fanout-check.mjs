#!/usr/bin/env node
// fanout-check.mjs EDGE1 EDGE2: the compose "fanout" profile's proof (tests/compose/live-test.sh):
// once the purger lists both Varnish nodes (found by DNS), a post cached on both (HIT) is edited
// once through the REST API and must show the edit on both nodes. Reads SITE_HOST, E2E_PURGER,
// OPERATOR_TOKEN, E2E_USER and E2E_APP_PASSWORD from the environment (FANOUT_FRESH_MS: how long
// the edit may take, 5000 by default). Exits non-zero naming the node that stayed stale.
import { request } from '../../testkit/http.mjs';
import { msUntil } from '../../testkit/wait.mjs';

const [edge1, edge2] = process.argv.slice(2);
const host = process.env.SITE_HOST;
const auth = `Basic ${Buffer.from(`${process.env.E2E_USER}:${process.env.E2E_APP_PASSWORD}`).toString('base64')}`;
const fail = (msg) => { console.error(`fanout: ${msg}`); process.exit(1); };
const until = (what, fn, limitMs) => msUntil(what, fn, limitMs).catch((e) => fail(e.message));

// The purger re-resolves its DNS name every 5 s: wait until its metrics name two nodes.
const nodes = async () => {
  const r = await request(process.env.E2E_PURGER, '/metrics', { headers: { authorization: `Bearer ${process.env.OPERATOR_TOKEN}` } });
  return new Set([...r.body.matchAll(/^purger_node_backlog\{[^}]*node="([^"]+)"/gm)].map((m) => m[1]));
};
const tFound = await until('the purger lists two Varnish nodes', async () => (await nodes()).size >= 2, 30000);
console.log(`  purger lists ${[...(await nodes())].join(', ')} (${tFound.toFixed(0)} ms after the second node was healthy)`);

const api = await request(edge1, '/wp-json/wp/v2/posts?per_page=1&offset=2&_fields=id,link', { host, headers: { authorization: auth } });
const [post] = JSON.parse(api.body);
const path = new URL(post.link).pathname;
for (const edge of [edge1, edge2]) {
  await until(`${path} cached on ${edge}`, async () => (await request(edge, path, { host })).headers['x-cache'] === 'HIT', 10000);
}
const marker = `fanout${Date.now().toString(36)}`;
const saved = await request(edge1, `/wp-json/wp/v2/posts/${post.id}`, { host, method: 'POST', body: { title: `Two nodes ${marker}` }, headers: { authorization: auth } });
if (saved.status !== 200) fail(`edit: ${saved.status} ${saved.body.slice(0, 200)}`);
const times = await Promise.all([edge1, edge2].map((edge) => until(`${path} shows the edit on ${edge}`, async () => (await request(edge, path, { host })).body.includes(marker), Number(process.env.FANOUT_FRESH_MS ?? 5000))));
console.log(`  ${path}: fresh on node 1 after ${times[0].toFixed(0)} ms, on node 2 after ${times[1].toFixed(0)} ms`);
process.exit(0);
