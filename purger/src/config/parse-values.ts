// Settings whose items have structure (host:port, site=…): each item parsed, each bad one named.
import { normalizeSite, SITE_PATTERN } from '../model/normalize.js';
import { parseSecret, type WebhookSecret } from '../model/signature.js';
import { parseNamespace } from '../model/tag-namespace.js';

export interface NodeAddress {
  host: string;
  port: number;
}

function parseNodeAddress(value: string): NodeAddress | string {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/.exec(value);
  if (!m) return `"${value}" is not host:port`;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return `"${value}" has port ${port} outside 1-65535`;
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

export function nodeAddresses(name: string, items: readonly string[], problems: string[]): NodeAddress[] {
  const out: NodeAddress[] = [];
  for (const s of items) {
    const a = parseNodeAddress(s);
    if (typeof a === 'string') problems.push(`${name}: ${a}`);
    else out.push(a);
  }
  return out;
}

export function sites(items: readonly string[], problems: string[]): string[] {
  const out: string[] = [];
  for (const s of items) {
    const n = normalizeSite(s);
    if (n === undefined || !SITE_PATTERN.test(n)) problems.push(`PURGER_SITES: "${s}" is not a host or host:port`);
    else if (!out.includes(n)) out.push(n);
  }
  return out;
}

/** `whsec_…` signs for every allowed site; `site=whsec_…` only for that site. Problems say which entry, never the secret. */
export function webhookSecrets(items: readonly string[], problems: string[]): WebhookSecret[] {
  const out: WebhookSecret[] = [];
  items.forEach((entry, i) => {
    const scoped = /^([^=]+)=(whsec_.*)$/.exec(entry);
    const parsed = parseSecret(scoped ? scoped[2]! : entry);
    if (typeof parsed === 'string') {
      problems.push(`PURGER_WEBHOOK_SECRETS entry ${i + 1}: ${parsed}`);
      return;
    }
    if (scoped) {
      const site = normalizeSite(scoped[1]!);
      if (site === undefined) {
        problems.push(`PURGER_WEBHOOK_SECRETS entry ${i + 1}: "${scoped[1]}" before = is not a host[:port]`);
        return;
      }
      parsed.site = site;
    }
    out.push(parsed);
  });
  return out;
}

export function tagPrefixes(items: readonly string[], problems: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of items) {
    const m = /^([^=]+)=(.*)$/.exec(entry);
    const site = m ? normalizeSite(m[1]!) : undefined;
    const namespace = m ? parseNamespace(m[2]!) : undefined;
    if (!m || site === undefined || namespace === undefined) {
      problems.push(`PURGER_TAG_PREFIXES: "${entry}" is not site=namespace (namespace: letters, digits, _.:-; keys are <namespace>-…)`);
    } else out.set(site, namespace);
  }
  return out;
}
