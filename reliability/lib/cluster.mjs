// Several Varnish nodes in front of the stack's WordPress, a purger (ingest + worker, or split)
// on its own Redis prefix, canary pages, bursts of signed events, and "applied everywhere".
import { eventId, tagEvent } from '../../testkit/events.mjs';
import { request } from '../../testkit/http.mjs';
import { freePort } from '../../testkit/ports.mjs';
import { PurgerProcess } from '../../testkit/purger.mjs';
import { until } from '../../testkit/wait.mjs';
import { VarnishNode, postEvents, receipt, redis, storedCount, urlEvent } from './common.mjs';

/** The stack's own varnishd as a node (never stopped here) plus `extra` new ones. */
export async function startNodes(env, extra, opts = {}) {
  const stackNode = { name: 'stack', node: `127.0.0.1:${env.varnishPort}`, workdir: `${env.dir}/varnish`, get: (p, o = {}) => request(env.edge, p, { host: env.site, ...o }) };
  const nodes = [stackNode];
  for (let i = 0; i < extra; i++) {
    const v = new VarnishNode(env, `n${i + 2}`, await freePort(), opts);
    await v.start();
    nodes.push(v);
  }
  return nodes;
}

export async function stopNodes(nodes) {
  await Promise.allSettled(nodes.filter((n) => n.destroy).map((n) => n.destroy()));
}

/**
 * A purger process with the stack's secrets on a fresh Redis prefix, once healthy. role: all |
 * ingest | worker. It runs a private copy of the build (run.sh makes it, REL_PURGER_MAIN):
 * others rebuilding purger/dist meanwhile cannot pull files from under a starting process.
 */
export async function startPurger(env, { prefix, role = 'all', nodes = [], extra = {} }) {
  const p = new PurgerProcess({
    NODE_ENV: 'production', PURGER_HOST: '127.0.0.1', PURGER_PORT: String(await freePort()),
    REDIS_URL: env.redisUrl, PURGER_WEBHOOK_SECRETS: env.secrets.WEBHOOK_SECRET, PURGER_OPERATOR_TOKEN: env.secrets.OPERATOR_TOKEN, VARNISH_PURGE_TOKEN: env.secrets.VARNISH_PURGE_TOKEN,
    PURGER_SITES: env.site, PURGER_LOG_LEVEL: 'warn',
    PURGER_ROLE: role, PURGER_REDIS_PREFIX: prefix,
    ...(role !== 'ingest' ? { VARNISH_NODES: nodes.join(',') } : {}),
    ...extra,
  }, process.env.REL_PURGER_MAIN ? { main: process.env.REL_PURGER_MAIN } : {});
  return p.ready();
}

export const newPrefix = (name) => `rel-${name}-${Date.now().toString(36)}`;

/** Post paths from the origin's REST API (anonymous, public posts). */
export async function postPaths(env, n) {
  const r = await request(env.origin, `/wp-json/wp/v2/posts?per_page=${Math.min(100, n)}&_fields=id,link`, { host: env.site });
  if (r.status !== 200) throw new Error(`posts list: ${r.status}`);
  return JSON.parse(r.body).map((p) => ({ id: p.id, path: new URL(p.link).pathname }));
}

/** Fetches each path through each node until it is a HIT there. */
export async function warm(nodes, paths) {
  for (const n of nodes) {
    for (const p of paths) {
      await until(`${p} cached on ${n.node}`, async () => { await n.get(p); return (await n.get(p)).headers['x-cache'] === 'HIT'; }, 20_000, 50);
    }
  }
}

/** Which of `paths` are still HITs on `node` (a purged page comes back as a MISS). */
export async function stillCached(node, paths) {
  const out = [];
  for (const p of paths) if ((await node.get(p)).headers['x-cache'] === 'HIT') out.push(p);
  return out;
}

/**
 * `total` events: tag events on keys nothing carries, with one URL event per canary page spread
 * evenly through them. Returns {events, canaryIds, batches (of `perBatch`)}.
 */
export function burst(env, total, canaries, perBatch = 500, tagPrefix = 'relburst') {
  const events = [];
  const every = Math.floor(total / Math.max(1, canaries.length));
  const canaryIds = [];
  let c = 0;
  for (let i = 0; i < total; i++) {
    if (c < canaries.length && i === c * every + Math.floor(every / 2)) {
      const e = urlEvent(env, [canaries[c++]]);
      canaryIds.push(e.id);
      events.push(e);
    } else {
      events.push(tagEvent([`${tagPrefix}-${i}`], { id: eventId('b') }));
    }
  }
  const batches = [];
  for (let i = 0; i < events.length; i += perBatch) batches.push(events.slice(i, i + perBatch));
  return { events, canaryIds, batches };
}

/** Sends batches one after the other; every one must be accepted (202). */
export async function sendBatches(env, base, batches, onBatch = () => {}) {
  let accepted = 0;
  for (let i = 0; i < batches.length; i++) {
    const r = await postEvents(env, base, { site: env.site, events: batches[i] });
    if (r.status !== 202) throw new Error(`batch ${i}: ${r.status} ${r.body.slice(0, 200)}`);
    accepted += r.json.accepted.length;
    await onBatch(i, accepted);
  }
  return accepted;
}

/** Node cursor (applied sequence number) vs. the log's head, from Redis. */
export async function cursorSeq(env, prefix, node) {
  return Number((await redis(env, 'HGET', `${prefix}:node:${node}`, 'seq')) || 0);
}

export async function waitCaughtUp(env, prefix, nodes, limitMs) {
  const head = await storedCount(env, prefix);
  await until(`nodes ${nodes.join(', ')} caught up to event ${head}`, async () => {
    for (const n of nodes) if ((await cursorSeq(env, prefix, n)) < head) return false;
    return true;
  }, limitMs, 200);
  return head;
}

/**
 * Receipt state of every id on every node, `concurrency` requests at a time. Returns a map
 * node -> {applied, pending, failed, skipped, missing}.
 */
export async function receiptStates(base, ids, concurrency = 8) {
  const tally = {};
  let next = 0;
  let missing = 0;
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next++];
      const r = await receipt(base, id);
      if (!r) { missing++; continue; }
      for (const n of r.nodes) {
        tally[n.node] ??= { applied: 0, pending: 0, failed: 0, skipped: 0 };
        tally[n.node][n.state] = (tally[n.node][n.state] || 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { nodes: tally, missing };
}

/** ms from acceptance to 'applied' on `node` for one event (from its receipt). */
export async function applyLatency(base, id, node) {
  const r = await receipt(base, id);
  const n = r?.nodes.find((x) => x.node === node);
  if (n?.state !== 'applied') return null;
  return Date.parse(n.at) - Date.parse(r.acceptedAt);
}
