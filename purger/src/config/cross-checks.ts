// Rules that span several settings; each returns nothing and appends its problems.
import type { WebhookSecret } from '../model/signature.js';
import { overlappingNamespaces } from '../model/tag-namespace.js';
import { nodeAddresses, type NodeAddress } from './parse-values.js';
import type { SettingValues } from './settings.js';

export interface RedisSentinel {
  sentinels: NodeAddress[];
  masterName: string;
  /** REDIS_SENTINEL_PASSWORD[_FILE]: the sentinels' own AUTH; never logged */
  password: string;
}

/**
 * REDIS_SENTINELS and REDIS_SENTINEL_MASTER: both or neither; the sentinels' password required with
 * them and refused without. A sentinel anyone can talk to can be told to monitor another server,
 * which the purger would follow and send the Redis password to.
 */
export function sentinelConfig(s: SettingValues, problems: string[]): RedisSentinel | undefined {
  const masterName = s.REDIS_SENTINEL_MASTER ?? '';
  const password = s.REDIS_SENTINEL_PASSWORD;
  if (s.REDIS_SENTINELS.length === 0 && masterName === '') {
    if (password !== undefined) problems.push('REDIS_SENTINEL_PASSWORD: set only with REDIS_SENTINELS and REDIS_SENTINEL_MASTER');
    return undefined;
  }
  if (s.REDIS_SENTINELS.length === 0) {
    problems.push('REDIS_SENTINELS: required with REDIS_SENTINEL_MASTER (comma-separated host:port of the sentinels)');
    return undefined;
  }
  if (masterName === '') {
    problems.push('REDIS_SENTINEL_MASTER: required with REDIS_SENTINELS (the master name the sentinels monitor, e.g. mymaster)');
    return undefined;
  }
  const sentinels = nodeAddresses('REDIS_SENTINELS', s.REDIS_SENTINELS, problems);
  if (sentinels.length === 0) problems.push('REDIS_SENTINELS: no host:port given');
  if (password === undefined) {
    problems.push('REDIS_SENTINEL_PASSWORD: required with REDIS_SENTINELS (the sentinels\' requirepass, or REDIS_SENTINEL_PASSWORD_FILE): without one anyone who reaches a sentinel can point the purger, and its Redis password, at a server of their own');
    return undefined;
  }
  return { sentinels, masterName, password };
}

/** A password in REDIS_URL and REDIS_PASSWORD[_FILE] would contradict each other. */
export function redisPasswordOnce(s: SettingValues, problems: string[]): void {
  let urlHasPassword = false;
  try {
    urlHasPassword = new URL(s.REDIS_URL).password !== '';
  } catch {
    if (!problems.some((p) => p.startsWith('REDIS_URL'))) problems.push('REDIS_URL: expected redis://host:port[/db] or rediss://…');
  }
  if (s.REDIS_PASSWORD !== undefined && urlHasPassword) problems.push('REDIS_PASSWORD and a password in REDIS_URL: set one, not both');
}

/**
 * Overlapping namespaces would let one site's keys sit inside another's; a secret bound to one
 * site without a namespace could purge every other site's keys (xkey is not host-scoped).
 */
export function namespacesConfine(prefixes: Map<string, string>, secrets: readonly WebhookSecret[], problems: string[]): void {
  for (const [a, b] of overlappingNamespaces(prefixes)) {
    problems.push(
      `PURGER_TAG_PREFIXES: the namespaces of "${a}" (${prefixes.get(a)}) and "${b}" (${prefixes.get(b)}) overlap: keys of one would be inside the other's; give each site a namespace that is not another's followed by "-"`,
    );
  }
  const unconfined = new Set(secrets.filter((x) => x.site !== undefined && !prefixes.has(x.site)).map((x) => x.site!));
  for (const site of unconfined) {
    problems.push(
      `PURGER_WEBHOOK_SECRETS: a secret is scoped to "${site}" but PURGER_TAG_PREFIXES has no namespace for it, so that secret could purge any site's xkey keys; add ${site}=<its key namespace> to PURGER_TAG_PREFIXES`,
    );
  }
}

/** A bucket smaller than the largest request would refuse that request for ever. */
export function burstsFitRequests(s: SettingValues, problems: string[]): void {
  if (s.PURGER_TENANT_EVENTS_PER_S > 0 && s.PURGER_TENANT_EVENTS_BURST < 500) {
    problems.push('PURGER_TENANT_EVENTS_BURST: must be at least 500 (one webhook may carry 500 events)');
  }
  if (s.PURGER_TENANT_BYTES_PER_S > 0 && s.PURGER_TENANT_BYTES_BURST < s.PURGER_BODY_LIMIT) {
    problems.push(`PURGER_TENANT_BYTES_BURST: must be at least PURGER_BODY_LIMIT (${s.PURGER_BODY_LIMIT}), or the largest accepted body could never pass`);
  }
  if (s.PURGER_RETRY_MAX_MS < s.PURGER_RETRY_BASE_MS) problems.push('PURGER_RETRY_MAX_MS: must be >= PURGER_RETRY_BASE_MS');
}
