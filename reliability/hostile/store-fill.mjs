// One site cannot fill the store for everyone, against a real ingest process on the
// stack's Redis (maxmemory 512mb, its own prefix): an event over the per-event caps is refused
// with 413 naming the limit and nothing of its request is stored; two sites with their own
// secrets that use the same webhook id and event id are both stored (dedupe is per site), and a
// replay within one site is still a duplicate. That a full Redis recovers by itself once entries
// pass their retention (the periodic trim) is proved by purger/test/store-fill.test.ts on its own
// small-maxmemory redis-server, not here: the stack's Redis is shared with the running stack.
import { eventId } from '../../testkit/events.mjs';
import { assert, postEvents, storedCount, urlEvent } from '../lib/common.mjs';
import { newPrefix, startPurger } from '../lib/cluster.mjs';

export const title = 'hostile: oversized events refused whole (413), colliding ids of two sites both stored';

const OTHER = 'rel-other-site.test';

export async function run({ env, log }) {
  const prefix = newPrefix('fill');
  const secret = env.secrets.WEBHOOK_SECRET;
  const other = `whsec_${Buffer.from(`reliability-other-site-${Date.now()}`).toString('base64')}`;
  // Both secrets bound to their site (and so, as the purger requires, a key namespace each).
  const purger = await startPurger(env, {
    prefix, role: 'ingest',
    extra: { PURGER_SITES: `${env.site},${OTHER}`, PURGER_WEBHOOK_SECRETS: `${env.site}=${secret},${OTHER}=${other}`, PURGER_TAG_PREFIXES: `${env.site}=rela,${OTHER}=relb` },
  });
  try {
    // 1. An oversized event among good ones: 413 naming the limit, nothing of the request stored.
    const many = Array.from({ length: 1200 }, (_, i) => `/rel-fill/${i}/`);
    const tooMany = await postEvents(env, purger.url, { site: env.site, events: [urlEvent(env, ['/rel-fill/ok/']), urlEvent(env, many)] });
    assert(tooMany.status === 413, `1,200 URLs in one event: ${tooMany.status}, want 413 (${tooMany.body.slice(0, 200)})`);
    assert(/event 1 carries 1,200 URLs; at most 1,000 per event \(PURGER_MAX_URLS_PER_EVENT\)/.test(tooMany.json?.message ?? ''), `413 message does not name the limit: ${tooMany.body.slice(0, 300)}`);
    const long = Array.from({ length: 900 }, (_, i) => `/rel-fill/${'x'.repeat(300)}/${i}/`);
    const tooBig = await postEvents(env, purger.url, { site: env.site, events: [urlEvent(env, ['/rel-fill/ok2/']), urlEvent(env, long)] });
    assert(tooBig.status === 413 && /PURGER_MAX_EVENT_BYTES/.test(tooBig.json?.message ?? ''), `a ~280 KB event: ${tooBig.status} ${tooBig.body.slice(0, 300)}`);
    assert((await storedCount(env, prefix)) === 0, 'an oversized request stored an event');

    // 2. Two sites, their own secrets, the same webhook id and event id: both stored.
    const id = eventId('collide');
    const msg = `msg_${id}`;
    const ev = (site) => ({ id, kind: 'urls', urls: [`http://${site}/rel-fill/same/`], soft: false, reason: 'reliability', time: new Date().toISOString() });
    const a = await postEvents(env, purger.url, { site: env.site, events: [ev(env.site)] }, { id: msg, secret });
    const b = await postEvents(env, purger.url, { site: OTHER, events: [ev(OTHER)] }, { id: msg, secret: other });
    assert(a.status === 202 && a.json.accepted.length === 1, `site A: ${a.status} ${a.body}`);
    assert(b.status === 202 && b.json.accepted.length === 1, `site B with A's webhook id and event id: ${b.status} ${b.body} (dropped as A's duplicate?)`);
    assert((await storedCount(env, prefix)) === 2, 'both sites\' events should be stored');
    const replay = await postEvents(env, purger.url, { site: env.site, events: [ev(env.site)] }, { id: msg, secret });
    assert(replay.status === 202 && replay.json.duplicates.length === 1, `replay within site A: ${replay.status} ${replay.body}`);
    assert((await storedCount(env, prefix)) === 2, 'a replay within one site was stored again');
    log(`oversized: ${tooMany.status} (${tooMany.json.message.split('.')[0]}), ${tooBig.status}; colliding ids: A ${a.status}, B ${b.status}, replay ${replay.status} (duplicate); stored ${await storedCount(env, prefix)}`);
    return {
      oversizedStatus: tooMany.status, oversizedMessage: tooMany.json.message, oversizedBytesStatus: tooBig.status,
      collidingSitesStored: 2, replayDuplicate: true, recoveryAfterFull: 'purger/test/store-fill.test.ts (own small-maxmemory redis-server)',
    };
  } finally {
    await purger.kill('SIGTERM');
  }
}
