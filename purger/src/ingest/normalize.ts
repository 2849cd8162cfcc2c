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

const ABSOLUTE_URL = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^#]*)/;

/**
 * Path + query of an absolute `http(s)://host[:port]/…` URL whose host is `site`; an error text
 * otherwise. Parsed strictly and literally (no WHATWG repairs such as `http:host` or `\` → `/`),
 * so what is checked is exactly what the sender wrote; the path is sent to Varnish as written.
 */
export function urlToPath(raw: string, site: string): string | { message: string } {
  const m = ABSOLUTE_URL.exec(raw);
  if (!m) return { message: 'not an absolute URL (expected http(s)://host/path)' };
  const scheme = m[1]!.toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') return { message: `scheme ${scheme}: is not http or https` };
  const authority = m[2]!;
  if (authority.includes('@')) return { message: 'URLs with credentials are not accepted' };
  const host = normalizeSite(authority);
  if (host !== site) return { message: `host "${host ?? authority}" is not the site "${site}"` };
  const rest = m[3]!;
  return rest === '' ? '/' : rest.startsWith('?') ? `/${rest}` : rest;
}
