// Normalization of incoming hosts and URLs (docs/protocol.md §1): host[:port], and URL → path + query.

export const SITE_PATTERN = /^[a-z0-9.-]+(:[0-9]{1,5})?$/;

/** lower-case, no trailing dot, no :80/:443; undefined when it is not a host[:port]. */
export function normalizeSite(value: string): string | undefined {
  let s = value.trim().toLowerCase();
  const m = /^([^:]+?)\.?(?::([0-9]{1,5}))?$/.exec(s);
  if (!m) return undefined;
  const port = m[2];
  s = port === undefined || port === '80' || port === '443' ? m[1]! : `${m[1]}:${port}`;
  if (s.length > 253 || !SITE_PATTERN.test(s)) return undefined;
  return s;
}

/** longest URL of an event (docs/protocol.md §1) */
export const MAX_URL_LENGTH = 2048;

const ABSOLUTE_URL = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^#]*)/;
/** host[:port] of a URL: a port is 1-65535 without leading zeros (no `:`, `:0080`, `:0`) */
const AUTHORITY = /^([a-z0-9.-]+?)\.?(?::([1-9][0-9]{0,4}))?$/;

/** A URL of the site as the grammar reads it: its scheme and its path + query. */
export interface SiteUrl {
  https: boolean;
  path: string;
}

/**
 * The one URL grammar of events (testdata/url-grammar.json, which the plugin's Url_Grammar is
 * tested against too): an absolute `http(s)://host[:port]/…` URL of `site`, printable ASCII, at
 * most MAX_URL_LENGTH characters, no backslash, no credentials, a port 1-65535 without leading
 * zeros. Parsed strictly and literally (no WHATWG repairs such as `http:host` or `\` → `/`), so
 * what is checked is exactly what the sender wrote; the path is sent to Varnish as written.
 */
export function parseSiteUrl(raw: string, site: string): SiteUrl | { message: string } {
  if (raw.length > MAX_URL_LENGTH) return { message: `too long: at most ${MAX_URL_LENGTH} characters` };
  if (!/^[!-~]+$/.test(raw)) return { message: 'not printable ASCII without spaces (percent-encode anything else)' };
  if (raw.includes('\\')) return { message: 'contains a backslash (percent-encode it as %5C)' };
  const m = ABSOLUTE_URL.exec(raw);
  if (!m) return { message: 'not an absolute URL (expected http(s)://host/path)' };
  const scheme = m[1]!.toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') return { message: `scheme ${scheme}: is not http or https` };
  const authority = m[2]!;
  if (authority.includes('@')) return { message: 'URLs with credentials are not accepted' };
  const host = urlHost(authority);
  if (host === undefined) return { message: `"${authority}" is not a host[:port] (a port is 1-65535, without leading zeros)` };
  if (host !== site) return { message: `host "${host}" is not the site "${site}"` };
  const rest = m[3]!;
  return { https: scheme === 'https', path: rest === '' ? '/' : rest.startsWith('?') ? `/${rest}` : rest };
}

/** host[:port] of a URL normalized like a site (lower-case, no trailing dot, no :80/:443), or undefined. */
function urlHost(authority: string): string | undefined {
  const m = AUTHORITY.exec(authority.toLowerCase());
  if (!m) return undefined;
  const port = m[2];
  if (port !== undefined && Number(port) > 65535) return undefined;
  return port === undefined || port === '80' || port === '443' ? m[1]! : `${m[1]}:${port}`;
}

/** Path + query of a URL of the grammar (parseSiteUrl), or an error text. */
export function urlToPath(raw: string, site: string): string | { message: string } {
  const u = parseSiteUrl(raw, site);
  return 'message' in u ? u : u.path;
}

/**
 * A URL as a log line may show it: credentials and query replaced by `…`, at most 200 characters
 * (a refused URL may carry a password or a token).
 */
export function redactUrl(raw: string): string {
  const s = raw.replace(/^([^:/?#]*:\/\/)[^/?#]*@/, '$1…@').replace(/[?#].*$/s, (q) => (q.startsWith('?') ? '?…' : ''));
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
}
