#!/usr/bin/env node
// driver.mjs STEP [ARG...]: the swarm test's eyes inside the stack (tests/swarm/swarm-test.sh runs
// it in a one-off container on the stack's overlay network, where every Varnish task, the purger
// and WordPress answer by name). Reads SITE_HOST, PURGER (http://purger:8090), OPERATOR_TOKEN,
// WEBHOOK_SECRET, WP_USER, WP_APP_PASSWORD and STATE (a directory shared between steps).
//   ready N            waits until tasks.varnish has N tasks, each serving the home page, and the
//                      purger lists those N nodes; prints how long it took
//   edit-fresh         caches a post on every task (HIT), edits it through the REST API, waits
//                      until every task shows the edit; prints the time to fresh per task
//   watch-new SECONDS  while Varnish scales up: edits the post every 2 s and reads it from every
//                      task, and from every node's published port (NODE_ADDRS), every 250 ms; fails when a task serves an edit older than the last
//                      one saved FRESH_MS before (the purge path's allowance); prints the worst lag
//   prime              caches 20 posts on every task (burst's end-to-end check) and a 21st, the
//                      witness that only `empty` reads; notes which tasks there are
//   burst N BATCH MS   posts N events, BATCH at a time every MS ms (each retried until accepted:
//                      an engine or the Redis primary may go away under it), then waits until
//                      tasks.varnish lists EXPECT_TASKS tasks and every receipt says applied on
//                      each of them, and no primed post is still the copy cached before
//   empty              waits for a task that was not there at `prime` and reads the witness
//                      from it: a MISS (the replacement of a dead node's task starts empty)
import { promises as dns } from 'node:dns';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from '../../testkit/http.mjs';
import { postEvents, urlEvent, tagEvent } from '../../testkit/events.mjs';
import { msUntil } from '../../testkit/wait.mjs';

const env = (name) => process.env[name] ?? fail(`${name} is not set`);
function fail(msg) { console.error(`swarm: ${msg}`); process.exit(1); }
const host = env('SITE_HOST');
const purger = env('PURGER');
const bearer = { authorization: `Bearer ${env('OPERATOR_TOKEN')}` };
const auth = { authorization: `Basic ${Buffer.from(`${env('WP_USER')}:${env('WP_APP_PASSWORD')}`).toString('base64')}` };
const state = env('STATE');
mkdirSync(state, { recursive: true });
const until = (what, fn, limitMs) => msUntil(what, fn, limitMs).catch((e) => fail(e.message));
const FRESH_MS = Number(process.env.FRESH_MS ?? 20000);
const edge = (ip) => `http://${ip}:8080`;
const get = (ip, path) => request(edge(ip), path, { host, timeoutMs: 10000 }).catch((e) => ({ status: 0, headers: {}, body: String(e) }));

const tasks = async () => (await dns.resolve4('tasks.varnish').catch(() => [])).sort();
const purgerNodes = async () => {
  const r = await request(purger, '/metrics', { headers: bearer }).catch(() => ({ body: '' }));
  return new Set([...r.body.matchAll(/^purger_node_backlog\{[^}]*node="([^"]+)"/gm)].map((m) => m[1].replace(/:\d+$/, '')));
};
const samePost = () => JSON.parse(readFileSync(`${state}/post.json`, 'utf8'));
async function post() {
  try { return samePost(); } catch { /* first use */ }
  const [ip] = await tasks();
  const r = await request(edge(ip), '/wp-json/wp/v2/posts?per_page=1&offset=3&_fields=id,link', { host, headers: auth });
  const [p] = JSON.parse(r.body);
  const value = { id: p.id, path: new URL(p.link).pathname };
  writeFileSync(`${state}/post.json`, JSON.stringify(value));
  return value;
}
async function edit(p, marker) {
  const [ip] = await tasks();
  const r = await request(edge(ip), `/wp-json/wp/v2/posts/${p.id}`, { host, method: 'POST', body: { title: `Swarm ${marker}` }, headers: auth, timeoutMs: 60000 });
  if (r.status !== 200) fail(`editing post ${p.id}: ${r.status} ${r.body.slice(0, 200)}`);
}
const markerOf = (body) => Number(/Swarm m(\d+)/.exec(body)?.[1] ?? -1);

const [step, arg] = process.argv.slice(2);
switch (step) {
  case 'ready': {
    const n = Number(arg);
    const ms = await until(`${n} Varnish tasks serving and known to the purger`, async () => {
      const ips = await tasks();
      if (ips.length !== n) return false;
      for (const ip of ips) if ((await get(ip, '/')).status !== 200) return false;
      const known = await purgerNodes();
      return ips.every((ip) => known.has(ip));
    }, 240000);
    console.log(`  ${n} tasks (${(await tasks()).join(', ')}) serving and known to the purger after ${(ms / 1000).toFixed(1)} s`);
    break;
  }
  case 'edit-fresh': {
    const p = await post();
    const ips = await tasks();
    for (const ip of ips) await until(`${p.path} cached on ${ip}`, async () => (await get(ip, p.path)).headers['x-cache'] === 'HIT', 30000);
    const marker = `m${Date.now()}`;
    await edit(p, marker);
    const times = await Promise.all(ips.map((ip) => until(`${p.path} shows the edit on ${ip}`, async () => (await get(ip, p.path)).body.includes(`Swarm ${marker}`), FRESH_MS)));
    console.log(`  edit fresh on ${ips.length} tasks: ${ips.map((ip, i) => `${ip} ${times[i].toFixed(0)} ms`).join(', ')}; slowest ${Math.max(...times).toFixed(0)} ms`);
    writeFileSync(`${state}/fresh-${ips.length}.txt`, `${Math.max(...times).toFixed(0)}\n`);
    break;
  }
  case 'watch-new': {
    const p = await post();
    const end = Date.now() + Number(arg) * 1000;
    const saved = []; // [time saved, marker]
    let worst = 0, reads = 0, stop = false;
    const seen = new Set(await tasks());
    const before = new Set(seen);
    const editor = (async () => {
      while (!stop) {
        const m = Date.now();
        await edit(p, `m${m}`);
        saved.push([Date.now(), m]);
        await new Promise((r) => setTimeout(r, 2000));
      }
    })();
    // Readers reach a task on its node's published port before Swarm's DNS lists it (that waits
    // for its health check): read each node's port too, where a new task caches first.
    const published = (process.env.NODE_ADDRS ?? '').split(/\s+/).filter(Boolean);
    while (Date.now() < end) {
      for (const ip of [...(await tasks()), ...published]) {
        seen.add(ip);
        const t = Date.now();
        const r = await get(ip, p.path);
        if (r.status !== 200) continue;
        reads++;
        const got = markerOf(r.body);
        // the newest edit saved FRESH_MS before this read must be visible
        const due = saved.filter(([at]) => at <= t - FRESH_MS).at(-1);
        if (due && got < due[1]) fail(`task ${ip}${before.has(ip) ? '' : ' (new)'} served edit m${got}, older than m${due[1]} saved ${t - due[0]} ms before`);
        const missed = saved.find(([at, m]) => at <= t && m > got);
        if (missed) worst = Math.max(worst, t - missed[0]);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    stop = true;
    await editor;
    const added = [...seen].filter((ip) => !before.has(ip) && !published.includes(ip));
    console.log(`  ${reads} reads of ${seen.size - published.length} tasks and ${published.length} node ports (${added.length} new tasks: ${added.join(', ') || 'none'}) during ${saved.length} edits: none older than ${FRESH_MS} ms; worst lag behind a saved edit ${worst} ms`);
    writeFileSync(`${state}/scale-lag.txt`, `${worst}\n`);
    if (!added.length) fail('no new task appeared while watching');
    break;
  }
  case 'prime': {
    const r = await request(edge((await tasks())[0]), '/wp-json/wp/v2/posts?per_page=21&offset=5&_fields=link', { host, headers: auth });
    const paths = JSON.parse(r.body).map((x) => new URL(x.link).pathname);
    writeFileSync(`${state}/primed.json`, JSON.stringify(paths.slice(0, 20)));
    writeFileSync(`${state}/witness.json`, JSON.stringify({ path: paths[20], tasks: await tasks() }));
    for (const ip of await tasks()) {
      for (const path of paths) await until(`${path} cached on ${ip}`, async () => (await get(ip, path)).headers['x-cache'] === 'HIT', 30000);
    }
    console.log(`  ${paths.length} posts cached on every task`);
    break;
  }
  case 'burst': {
    const n = Number(arg);
    const [size, pace] = process.argv.slice(4).map(Number);
    const expect = Number(process.env.EXPECT_TASKS ?? 0);
    const paths = JSON.parse(readFileSync(`${state}/primed.json`, 'utf8'));
    const events = Array.from({ length: n }, (_, i) => (i < paths.length ? urlEvent(host, [paths[i]]) : tagEvent([`swarm-burst-${i}`])));
    const start = Date.now();
    let retries = 0;
    for (let i = 0; i < n; i += size) {
      if (i) await new Promise((res) => setTimeout(res, pace));
      const batch = events.slice(i, i + size);
      for (;;) {
        const r = await postEvents(purger, { site: host, events: batch }, { secret: env('WEBHOOK_SECRET'), timeoutMs: 15000 }).catch((e) => ({ status: 0, body: e.message }));
        if (r.status === 202 || r.status === 200) break;
        retries++;
        await new Promise((res) => setTimeout(res, 500));
      }
      writeFileSync(`${state}/burst-accepted.txt`, `${i + batch.length}\n`);
    }
    const accepted = Date.now() - start;
    // every task Swarm's DNS lists at each look: a dead node's task leaves it once Swarm has
    // marked the node down; its replacement joins (and catches up on the burst)
    let ips = await tasks();
    let pending = events.map((e) => e.id);
    const ms = await until(`all ${n} events applied on every task`, async () => {
      const now = await tasks();
      if (now.length < expect) return false;
      if (now.join() !== ips.join()) pending = events.map((e) => e.id);
      ips = now;
      const still = [];
      for (const id of pending) {
        const r = await request(purger, `/v1/events/${encodeURIComponent(id)}?site=${encodeURIComponent(host)}`, { headers: bearer }).catch(() => null);
        const nodes = r?.status === 200 ? JSON.parse(r.body).nodes ?? [] : [];
        const applied = new Set(nodes.filter((x) => x.state === 'applied').map((x) => x.node.replace(/:\d+$/, '')));
        if (!ips.every((ip) => applied.has(ip))) still.push(id);
      }
      pending = still;
      return pending.length === 0;
    }, 300000);
    for (const ip of ips) for (const path of paths) {
      const r = await get(ip, path);
      if (r.headers['x-cache'] === 'HIT' && Number(r.headers.age ?? 0) * 1000 > Date.now() - start) fail(`${path} on ${ip} is still the copy cached before the burst (age ${r.headers.age} s)`);
    }
    console.log(`  ${n} events accepted in ${(accepted / 1000).toFixed(1)} s (${size} every ${pace} ms; ${retries} batches retried while refused or unanswered), applied on all ${ips.length} tasks ${(ms / 1000).toFixed(1)} s later; 0 lost; the ${paths.length} primed posts refetched on every task`);
    writeFileSync(`${state}/burst-${n}.json`, JSON.stringify({ events: n, lost: 0, retries, acceptedMs: accepted, appliedMs: Math.round(ms), nodes: ips.length }));
    break;
  }
  case 'empty': {
    const { path, tasks: before } = JSON.parse(readFileSync(`${state}/witness.json`, 'utf8'));
    let ip;
    const ms = await until('a task that was not there before', async () => {
      ip = (await tasks()).find((x) => !before.includes(x));
      return ip !== undefined && (await get(ip, '/wp-json/')).status === 200;
    }, 240000);
    const r = await get(ip, path);
    if (r.headers['x-cache'] === 'HIT') fail(`the new task ${ip} served ${path} from its cache on its first read (age ${r.headers.age} s): it did not start empty`);
    console.log(`  new task ${ip} serving ${(ms / 1000).toFixed(1)} s later, started empty (${path}: ${r.headers['x-cache']})`);
    break;
  }
  default:
    fail(`unknown step '${step}'`);
}
process.exit(0);
