// Turns a batch of stored events into the fewest invalidation requests for one node:
// dedupes URLs and tags per site, packs xkey keys into header-budget-sized PURGEKEYS requests,
// packs prefix bans into anchored alternations, and escalates a URL burst to a site-wide ban.
import { packPrefixRegexes, packRegexes } from './ban-expression.js';
import type { StoredEvent } from '../model/event-model.js';

// keyEventIds: per key, the events naming it (parallel to keys), so that a request split in
// halves (reshape.ts) names in each half only the events of its keys.
export type Invalidation =
  | { kind: 'purge'; site: string; soft: boolean; path: string; eventIds: string[] }
  | { kind: 'purgekeys'; site: string; soft: boolean; keys: string[]; eventIds: string[]; keyEventIds?: string[][] }
  | { kind: 'ban'; site: string; banUrl?: string; eventIds: string[] };

export interface Escalation {
  site: string;
  reason: 'url-burst';
  urls: number;
}

export interface CoalesceOptions {
  /** bytes available for one xkey header value or one X-Ban-Url value */
  headerBudget: number;
  /** more distinct URLs than this for one site in one batch become one site-wide ban */
  urlEscalateThreshold: number;
  /**
   * from this many distinct hard URLs without a query string (one site, one batch), they go out
   * as exact-match regex bans packed into the header budget instead of one PURGE each
   */
  urlBanMin: number;
}

export interface Plan {
  requests: Invalidation[];
  escalations: Escalation[];
}

class IdMap {
  readonly map = new Map<string, Set<string>>();
  add(key: string, id: string): void {
    let s = this.map.get(key);
    if (!s) {
      s = new Set();
      this.map.set(key, s);
    }
    s.add(id);
  }
}

function packKeys(
  site: string,
  soft: boolean,
  keys: IdMap,
  budget: number,
  out: Invalidation[],
): void {
  let group: string[] = [];
  let owners: string[][] = [];
  let ids = new Set<string>();
  let size = 0;
  const flush = (): void => {
    if (group.length === 0) return;
    out.push({ kind: 'purgekeys', site, soft, keys: group, eventIds: [...ids], keyEventIds: owners });
    group = [];
    owners = [];
    ids = new Set();
    size = 0;
  };
  for (const [key, keyIds] of keys.map) {
    if (group.length > 0 && size + 1 + key.length > budget) flush();
    size += (group.length > 0 ? 1 : 0) + key.length;
    group.push(key);
    owners.push([...keyIds]);
    for (const id of keyIds) ids.add(id);
  }
  flush();
}

export function coalesce(events: readonly StoredEvent[], opts: CoalesceOptions): Plan {
  const bySite = new Map<string, StoredEvent[]>();
  for (const e of events) {
    const list = bySite.get(e.site);
    if (list) list.push(e);
    else bySite.set(e.site, [e]);
  }
  const requests: Invalidation[] = [];
  const escalations: Escalation[] = [];

  for (const [site, list] of bySite) {
    const hardUrls = new IdMap();
    const softUrls = new IdMap();
    const hardKeys = new IdMap();
    const softKeys = new IdMap();
    const prefixes = new IdMap();
    const allIds: string[] = [];
    for (const e of list) {
      switch (e.kind) {
        case 'all':
          allIds.push(e.id);
          break;
        case 'prefix':
          for (const p of e.paths ?? []) prefixes.add(p, e.id);
          break;
        case 'urls':
          for (const p of e.paths ?? []) (e.soft ? softUrls : hardUrls).add(p, e.id);
          break;
        case 'tags':
          for (const t of e.tags ?? []) (e.soft ? softKeys : hardKeys).add(t, e.id);
          break;
      }
    }
    // A hard invalidation of the same URL or key makes the soft one redundant.
    for (const [p, ids] of softUrls.map) if (hardUrls.map.has(p)) { for (const id of ids) hardUrls.add(p, id); softUrls.map.delete(p); }
    for (const [k, ids] of softKeys.map) if (hardKeys.map.has(k)) { for (const id of ids) hardKeys.add(k, id); softKeys.map.delete(k); }

    const urlCount = hardUrls.map.size + softUrls.map.size;
    const escalate = allIds.length === 0 && urlCount > opts.urlEscalateThreshold;
    if (escalate) escalations.push({ site, reason: 'url-burst', urls: urlCount });

    if (allIds.length > 0 || escalate) {
      // A host ban covers every URL and prefix of the site.
      const ids = new Set(allIds);
      for (const m of [hardUrls, softUrls, prefixes]) for (const s of m.map.values()) for (const id of s) ids.add(id);
      requests.push({ kind: 'ban', site, eventIds: [...ids] });
    } else {
      if (prefixes.map.size > 0) {
        // One regex per prefix group; ids are attributed to every group for simplicity of receipts.
        const ids = new Set<string>();
        for (const s of prefixes.map.values()) for (const id of s) ids.add(id);
        for (const banUrl of packPrefixRegexes([...prefixes.map.keys()], opts.headerBudget)) {
          requests.push({ kind: 'ban', site, banUrl, eventIds: [...ids] });
        }
      }
      // A burst of plain URLs becomes a few exact-match bans (`^(?:/a/|/b/)$` on the stored,
      // already-normalized URL). URLs with a query keep PURGE: Varnish normalizes their query
      // (sorting, tracking parameters) and a regex here could miss that spelling.
      // (`"` cannot appear in X-Ban-Url, docs/protocol.md §2: such a URL keeps its PURGE.)
      const plain = [...hardUrls.map.keys()].filter((p) => !p.includes('?') && !p.includes('"'));
      if (plain.length >= opts.urlBanMin) {
        for (const { regex, members } of packRegexes(plain, opts.headerBudget, true)) {
          const ids = new Set<string>();
          for (const m of members) {
            for (const id of hardUrls.map.get(m)!) ids.add(id);
            hardUrls.map.delete(m);
          }
          requests.push({ kind: 'ban', site, banUrl: regex, eventIds: [...ids] });
        }
      }
      for (const [path, ids] of hardUrls.map) requests.push({ kind: 'purge', site, soft: false, path, eventIds: [...ids] });
      for (const [path, ids] of softUrls.map) requests.push({ kind: 'purge', site, soft: true, path, eventIds: [...ids] });
    }
    // xkey keys are not host-scoped, so they are always sent (a host ban would not cover them).
    packKeys(site, false, hardKeys, opts.headerBudget, requests);
    packKeys(site, true, softKeys, opts.headerBudget, requests);
  }
  return { requests, escalations };
}
