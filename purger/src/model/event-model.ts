// The event model: events as received and as stored, and the per-event rules of docs/protocol.md.
import { parseSiteUrl, redactUrl, urlToPath } from './normalize.js';
import { inNamespace, NAMESPACE_SEPARATOR } from './tag-namespace.js';

/** docs/protocol.md: `time` is an RFC 3339 date-time (Date.parse alone also takes "1", RFC 1123…). */
export const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export type EventKind = 'urls' | 'tags' | 'prefix' | 'all';

export interface InputEvent {
  id?: string;
  kind: EventKind;
  urls?: string[];
  tags?: string[];
  soft?: boolean;
  reason?: string;
  time?: string;
  refresh?: string[];
}

/** One event as stored in the log and read by workers. `paths` are path+query for urls/prefix. */
export interface StoredEvent {
  id: string;
  site: string;
  kind: EventKind;
  paths?: string[];
  tags?: string[];
  soft: boolean;
  reason: string;
  time: string;
  /** ms since epoch when the ingest stored it */
  acceptedAt: number;
  /** path+query of the pages nodes re-fetch once they applied it, most important first (absent in events stored before refreshes) */
  refresh?: string[];
  /** the refresh URLs were https: nodes fill the copy readers behind a TLS terminator get */
  refreshHttps?: true;
}

/**
 * Where an event's receipt and dedupe key live: ids are unique per site, not globally. `/` is
 * in neither a site nor an id, so `<site>/<id>` cannot be read two ways.
 */
export function eventRef(site: string, id: string): string {
  return `${site}/${id}`;
}

export interface FieldError {
  field: string;
  message: string;
}

/** A `refresh` URL left out of the stored event: `url` is redacted for logs (redactUrl). */
export interface DroppedRefresh {
  field: string;
  url: string;
  why: string;
}

/**
 * Checks what the schema cannot (the right list for the kind, every URL's host equal to the site,
 * tags inside the site's namespace, an RFC 3339 time) and returns the event in stored form, or
 * the first error with its JSON-pointer field. `index` is the event's position for the field path.
 * A `refresh` URL outside the URL grammar is a hint lost, not an error: it is left out and
 * reported to `onDropped`, and the event (its invalidation) is stored all the same.
 */
export function toStoredEvent(
  input: InputEvent,
  site: string,
  index: number,
  fallbackId: string,
  now: number,
  /** the site's xkey namespace (PURGER_TAG_PREFIXES): every tag must be `<namespace>-…` */
  tagNamespace?: string,
  onDropped: (drop: DroppedRefresh) => void = () => {},
): StoredEvent | FieldError {
  const base = `/events/${index}`;
  const soft = input.soft ?? false;
  const stored: StoredEvent = {
    id: input.id ?? fallbackId,
    site,
    kind: input.kind,
    soft,
    reason: input.reason ?? '',
    time: input.time ?? new Date(now).toISOString(),
    acceptedAt: now,
  };
  if (input.time !== undefined && (!RFC3339.test(input.time) || Number.isNaN(Date.parse(input.time)))) {
    return { field: `${base}/time`, message: 'not an RFC 3339 date-time (e.g. 2026-11-22T10:00:00Z)' };
  }
  if (input.refresh !== undefined) {
    const refresh = refreshPaths(input.refresh, site, base, onDropped);
    if (refresh.paths.length > 0) stored.refresh = refresh.paths;
    if (refresh.https) stored.refreshHttps = true;
  }
  switch (input.kind) {
    case 'urls':
    case 'prefix': {
      if (input.tags !== undefined) return { field: `${base}/tags`, message: `kind "${input.kind}" takes urls, not tags` };
      if (!input.urls || input.urls.length === 0) {
        return { field: `${base}/urls`, message: `kind "${input.kind}" needs 1 to 1000 urls` };
      }
      const paths = new Set<string>();
      for (let i = 0; i < input.urls.length; i++) {
        const p = urlToPath(input.urls[i]!, site);
        if (typeof p !== 'string') return { field: `${base}/urls/${i}`, message: p.message };
        if (input.kind === 'prefix' && p.includes('"')) {
          // A prefix becomes a ban regex, whose alphabet excludes " (docs/protocol.md §2).
          return { field: `${base}/urls/${i}`, message: 'a prefix URL may not contain " (percent-encode it as %22)' };
        }
        paths.add(p);
      }
      stored.paths = [...paths];
      return stored;
    }
    case 'tags': {
      if (input.urls !== undefined) return { field: `${base}/urls`, message: 'kind "tags" takes tags, not urls' };
      if (!input.tags || input.tags.length === 0) return { field: `${base}/tags`, message: 'kind "tags" needs 1 to 1000 tags' };
      if (tagNamespace !== undefined) {
        const i = input.tags.findIndex((t) => !inNamespace(t, tagNamespace));
        if (i >= 0) {
          return { field: `${base}/tags/${i}`, message: `tags of site "${site}" must start with its namespace "${tagNamespace}${NAMESPACE_SEPARATOR}" (PURGER_TAG_PREFIXES)` };
        }
      }
      stored.tags = [...new Set(input.tags)];
      return stored;
    }
    case 'all':
      if (input.urls !== undefined || input.tags !== undefined) {
        return { field: `${base}/${input.urls !== undefined ? 'urls' : 'tags'}`, message: 'kind "all" takes neither urls nor tags' };
      }
      return stored;
  }
}

/**
 * The `refresh` URLs as paths, duplicates dropped, order kept, and whether they are https (one
 * scheme per event, the first good URL's: the copy nodes fill is the one readers of that scheme
 * get). A URL outside the grammar, or of the other scheme, is dropped and reported.
 * Allowed on every kind.
 */
function refreshPaths(urls: readonly string[], site: string, base: string, onDropped: (drop: DroppedRefresh) => void): { paths: string[]; https: boolean } {
  const paths = new Set<string>();
  let https: boolean | undefined;
  for (let i = 0; i < urls.length; i++) {
    const u = parseSiteUrl(urls[i]!, site);
    if ('message' in u || (https !== undefined && u.https !== https)) {
      const why = 'message' in u ? u.message : `refresh URLs of one event share one scheme: the first is ${https ? 'https' : 'http'}, this one is not`;
      onDropped({ field: `${base}/refresh/${i}`, url: redactUrl(urls[i]!), why });
      continue;
    }
    https ??= u.https;
    paths.add(u.path);
  }
  return { paths: [...paths], https: https === true };
}
