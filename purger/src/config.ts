// Environment variables, parsed and validated once at start. Every bad variable gets its own
// line in the error, so an operator can fix them all in one go.
import { readFileSync } from 'node:fs';
import { normalizeSite, SITE_PATTERN } from './normalize.js';
import { parseSecret, type WebhookSecret } from './signature.js';
import { memoryFitProblem } from './memory-fit.js';
import type { TenantLimits } from './tenant-limiter.js';
import { overlappingNamespaces, parseNamespace } from './tag-namespace.js';

export type Role = 'all' | 'ingest' | 'worker';

export interface NodeAddress {
  host: string;
  port: number;
}

export interface Config {
  role: Role;
  host: string;
  port: number;
  redisUrl: string;
  /** REDIS_PASSWORD[_FILE] (instead of a password in REDIS_URL); never logged */
  redisPassword: string | undefined;
  /** set when REDIS_SENTINELS and REDIS_SENTINEL_MASTER are: connect through Sentinel */
  redisSentinel: RedisSentinel | undefined;
  /** after an append, wait for this many replicas to have it before answering 202 (0 = do not wait) */
  redisMinReplicas: number;
  /** how long to wait for them; past it the API answers 503 and the sender retries */
  redisWaitMs: number;
  redisPrefix: string;
  webhookSecrets: WebhookSecret[];
  operatorToken: string | undefined;
  /** bearer token for receipts, /metrics and /openapi.json (the operator token works too) */
  readToken: string | undefined;
  /** sent as X-Purge-Token on every PURGE/PURGEKEYS/BAN (VARNISH_PURGE_TOKEN[_FILE]); never logged */
  varnishPurgeToken: string | undefined;
  sites: string[];
  /** site → its xkey namespace: its tag events may only name `<namespace>-…` keys (xkey purges are not host-scoped) */
  tagPrefixes: Map<string, string>;
  varnishNodes: NodeAddress[];
  varnishDns: NodeAddress | undefined;
  dnsIntervalMs: number;
  /** delays (ms after acceptance, increasing) at which every invalidation is repeated; [] = never */
  repurgeDelaysMs: number[];
  coalesceMs: number;
  batchMax: number;
  headerBudget: number;
  urlEscalateThreshold: number;
  urlBanMin: number;
  nodeConcurrency: number;
  nodeTimeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  streamMaxLen: number;
  streamMaxAgeS: number;
  dedupeTtlS: number;
  pollMs: number;
  timestampToleranceS: number;
  bodyLimit: number;
  /** most URLs (urls/prefix) or keys (tags) in one event; beyond it 413 */
  maxUrlsPerEvent: number;
  /** most bytes of one event's JSON; beyond it 413 */
  maxEventBytes: number;
  /** PURGER_REDIS_MAXMEMORY: the memory the start check sizes the caps against instead of Redis's maxmemory */
  redisMaxmemory: number | undefined;
  /** how often the log is trimmed by age and length outside the append script (also while Redis is full) */
  trimIntervalMs: number;
  /** per-site ingest caps (webhook route); perS 0 = unlimited */
  tenantLimits: TenantLimits;
  logLevel: string;
  shutdownTimeoutMs: number;
}

export interface RedisSentinel {
  sentinels: NodeAddress[];
  masterName: string;
  /** REDIS_SENTINEL_PASSWORD[_FILE]: when the sentinels themselves require AUTH; never logged */
  password: string | undefined;
}

/** Measured Redis cost of one log entry (a typical event; docs: purger/README.md). */
export const LOG_ENTRY_BYTES = 300;
/**
 * Default memory budget of the log: 64 MiB ≈ 220,000 typical entries. What bounds Redis memory
 * is the per-site caps, checked against maxmemory at start (memory-fit.ts).
 */
export const DEFAULT_LOG_MAX_BYTES = 64 * 1024 * 1024;

/** The log's MAXLEN cap: the memory budget over the cost of an entry, or PURGER_STREAM_MAXLEN if lower. */
export function logMaxLen(maxBytes: number, explicitMaxLen: number | undefined): number {
  const fromBudget = Math.max(100, Math.floor(maxBytes / LOG_ENTRY_BYTES));
  return explicitMaxLen === undefined ? fromBudget : Math.min(explicitMaxLen, fromBudget);
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function parseNodeAddress(value: string): NodeAddress | string {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/.exec(value);
  if (!m) return `"${value}" is not host:port`;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return `"${value}" has port ${port} outside 1-65535`;
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

/** A header value: visible ASCII without spaces, so it travels unchanged and cannot split a header. */
const HEADER_TOKEN = /^[\x21-\x7e]{16,512}$/;

/**
 * A secret given either inline (`NAME`) or as a file (`NAME_FILE`, e.g. a Docker secret; one
 * trailing newline is dropped). Problems name the variable and the file, never the value.
 */
export function secretFromEnv(env: Env, name: string, problems: string[], read: (path: string) => string = (p) => readFileSync(p, 'utf8')): string | undefined {
  const inline = env[name]?.trim() || undefined;
  const file = env[`${name}_FILE`]?.trim() || undefined;
  if (inline !== undefined && file !== undefined) {
    problems.push(`${name} and ${name}_FILE: set one, not both`);
    return undefined;
  }
  if (file === undefined) return inline;
  try {
    const value = read(file).replace(/\r?\n$/, '');
    if (value === '') problems.push(`${name}_FILE="${file}": the file is empty`);
    return value === '' ? undefined : value;
  } catch (err) {
    problems.push(`${name}_FILE="${file}": cannot read it (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    return undefined;
  }
}

/** The default schedule: soon after the slowest in-flight fetch on loopback, then a late safety net. */
export const DEFAULT_REPURGE_DELAYS_MS = [300, 2000];

/** PURGER_REPURGE_DELAYS_MS (`300,2000`: increasing, 1 to 5 delays; `0` or empty = no repeats). */
function repurgeDelays(env: Env, problems: string[]): number[] {
  const list = env.PURGER_REPURGE_DELAYS_MS;
  if (list === undefined) return DEFAULT_REPURGE_DELAYS_MS;
  const parts = list.split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (parts.length === 0 || (parts.length === 1 && parts[0] === '0')) return [];
  const delays = parts.map(Number);
  if (parts.length > 5 || parts.some((p) => !/^[0-9]+$/.test(p)) || delays.some((d) => d < 1 || d > 600_000) || delays.some((d, i) => i > 0 && d <= delays[i - 1]!)) {
    problems.push(`PURGER_REPURGE_DELAYS_MS="${list}": expected 1 to 5 increasing delays in ms between 1 and 600000, comma-separated (e.g. 300,2000), or 0 for none`);
    return DEFAULT_REPURGE_DELAYS_MS;
  }
  return delays;
}

/**
 * REDIS_SENTINELS (host:port,…) and REDIS_SENTINEL_MASTER (the name the sentinels monitor): both
 * or neither. REDIS_SENTINEL_PASSWORD[_FILE] when the sentinels require AUTH.
 */
function sentinelConfig(env: Env, problems: string[]): RedisSentinel | undefined {
  const listRaw = env.REDIS_SENTINELS?.trim() ?? '';
  const masterName = env.REDIS_SENTINEL_MASTER?.trim() ?? '';
  const password = secretFromEnv(env, 'REDIS_SENTINEL_PASSWORD', problems);
  if (listRaw === '' && masterName === '') {
    if (password !== undefined) problems.push('REDIS_SENTINEL_PASSWORD: set only with REDIS_SENTINELS and REDIS_SENTINEL_MASTER');
    return undefined;
  }
  if (listRaw === '') {
    problems.push('REDIS_SENTINELS: required with REDIS_SENTINEL_MASTER (comma-separated host:port of the sentinels)');
    return undefined;
  }
  if (masterName === '') {
    problems.push('REDIS_SENTINEL_MASTER: required with REDIS_SENTINELS (the master name the sentinels monitor, e.g. mymaster)');
    return undefined;
  }
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(masterName)) {
    problems.push(`REDIS_SENTINEL_MASTER="${masterName}": letters, digits and _.- only`);
  }
  const sentinels: NodeAddress[] = [];
  for (const s of listRaw.split(',').map((x) => x.trim()).filter((x) => x !== '')) {
    const a = parseNodeAddress(s);
    if (typeof a === 'string') problems.push(`REDIS_SENTINELS: ${a}`);
    else sentinels.push(a);
  }
  if (sentinels.length === 0) problems.push('REDIS_SENTINELS: no host:port given');
  return { sentinels, masterName, password };
}

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const str = (name: string, fallback: string): string => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? fallback : v.trim();
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return fallback;
    if (!/^[0-9]+$/.test(raw.trim())) {
      problems.push(`${name}="${raw}": expected a whole number between ${min} and ${max}`);
      return fallback;
    }
    const n = Number(raw.trim());
    if (n < min || n > max) problems.push(`${name}=${n}: must be between ${min} and ${max}`);
    return n;
  };
  const list = (name: string): string[] =>
    (env[name] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');

  const roleRaw = str('PURGER_ROLE', 'all');
  let role: Role = 'all';
  if (roleRaw === 'all' || roleRaw === 'ingest' || roleRaw === 'worker') role = roleRaw;
  else problems.push(`PURGER_ROLE="${roleRaw}": expected all, ingest or worker`);
  const ingest = role !== 'worker';
  const worker = role !== 'ingest';

  const redisUrl = str('REDIS_URL', 'redis://127.0.0.1:6379');
  let urlHasPassword = false;
  if (!/^rediss?:\/\/[^\s]+$/.test(redisUrl)) {
    problems.push('REDIS_URL: expected redis://host:port[/db] or rediss://…');
  } else {
    try {
      urlHasPassword = new URL(redisUrl).password !== '';
    } catch {
      problems.push('REDIS_URL: expected redis://host:port[/db] or rediss://…');
    }
  }
  const redisPassword = secretFromEnv(env, 'REDIS_PASSWORD', problems);
  if (redisPassword !== undefined && urlHasPassword) {
    problems.push('REDIS_PASSWORD and a password in REDIS_URL: set one, not both');
  }
  const redisSentinel = sentinelConfig(env, problems);
  const minReplicasRaw = str('PURGER_REDIS_MIN_REPLICAS', '');
  const redisMinReplicas = minReplicasRaw === '' ? (redisSentinel ? 1 : 0) : int('PURGER_REDIS_MIN_REPLICAS', 0, 0, 16);

  const webhookSecrets: WebhookSecret[] = [];
  // Comma-separated, or one per line in PURGER_WEBHOOK_SECRETS_FILE.
  const webhookEntries = (secretFromEnv(env, 'PURGER_WEBHOOK_SECRETS', problems) ?? '').split(/[,\n]/).map((s) => s.trim());
  webhookEntries.filter((s) => s !== '').forEach((entry, i) => {
    // `whsec_…` signs for every allowed site; `site=whsec_…` only for that site.
    const scoped = /^([^=]+)=(whsec_.*)$/.exec(entry);
    const parsed = parseSecret(scoped ? scoped[2]! : entry);
    // Never echo the secret itself: say which entry is wrong.
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
    webhookSecrets.push(parsed);
  });
  if (ingest && webhookSecrets.length === 0) {
    problems.push('PURGER_WEBHOOK_SECRETS: required for the ingest role (comma-separated whsec_<base64> secrets)');
  }

  const operatorToken = secretFromEnv(env, 'PURGER_OPERATOR_TOKEN', problems);
  if (operatorToken !== undefined && operatorToken.length < 16) {
    problems.push('PURGER_OPERATOR_TOKEN: must be at least 16 characters');
  }

  const readToken = secretFromEnv(env, 'PURGER_READ_TOKEN', problems);
  if (readToken !== undefined && !HEADER_TOKEN.test(readToken)) {
    problems.push('PURGER_READ_TOKEN: must be 16 to 512 visible ASCII characters without spaces');
  }

  const varnishPurgeToken = secretFromEnv(env, 'VARNISH_PURGE_TOKEN', problems);
  if (varnishPurgeToken !== undefined && !HEADER_TOKEN.test(varnishPurgeToken)) {
    problems.push('VARNISH_PURGE_TOKEN: must be 16 to 512 visible ASCII characters without spaces (it is sent as the X-Purge-Token header)');
  }

  const sites: string[] = [];
  for (const s of list('PURGER_SITES')) {
    const n = normalizeSite(s);
    if (n === undefined || !SITE_PATTERN.test(n)) problems.push(`PURGER_SITES: "${s}" is not a host or host:port`);
    else if (!sites.includes(n)) sites.push(n);
  }
  if (ingest && sites.length === 0) {
    problems.push('PURGER_SITES: required for the ingest role (comma-separated hosts, e.g. localhost:8080,example.com)');
  }

  const tagPrefixes = new Map<string, string>();
  for (const entry of list('PURGER_TAG_PREFIXES')) {
    const m = /^([^=]+)=(.*)$/.exec(entry);
    const site = m ? normalizeSite(m[1]!) : undefined;
    const namespace = m ? parseNamespace(m[2]!) : undefined;
    if (!m || site === undefined || namespace === undefined) {
      problems.push(`PURGER_TAG_PREFIXES: "${entry}" is not site=namespace (namespace: letters, digits, _.:-; keys are <namespace>-…)`);
    } else tagPrefixes.set(site, namespace);
  }
  for (const [a, b] of overlappingNamespaces(tagPrefixes)) {
    problems.push(
      `PURGER_TAG_PREFIXES: the namespaces of "${a}" (${tagPrefixes.get(a)}) and "${b}" (${tagPrefixes.get(b)}) overlap: keys of one would be inside the other's; give each site a namespace that is not another's followed by "-"`,
    );
  }
  // A secret bound to one site is meant to confine that site's sender; without a namespace its
  // tag events could purge every other site's keys (xkey is not host-scoped). Refuse to start.
  const unconfined = new Set(webhookSecrets.filter((s) => s.site !== undefined && !tagPrefixes.has(s.site)).map((s) => s.site!));
  for (const site of unconfined) {
    problems.push(
      `PURGER_WEBHOOK_SECRETS: a secret is scoped to "${site}" but PURGER_TAG_PREFIXES has no namespace for it, so that secret could purge any site's xkey keys; add ${site}=<its key namespace> to PURGER_TAG_PREFIXES`,
    );
  }

  const varnishNodes: NodeAddress[] = [];
  for (const s of list('VARNISH_NODES')) {
    const a = parseNodeAddress(s);
    if (typeof a === 'string') problems.push(`VARNISH_NODES: ${a}`);
    else varnishNodes.push(a);
  }
  let varnishDns: NodeAddress | undefined;
  const dnsRaw = env.VARNISH_DNS?.trim();
  if (dnsRaw) {
    const a = parseNodeAddress(dnsRaw);
    if (typeof a === 'string') problems.push(`VARNISH_DNS: ${a}`);
    else varnishDns = a;
  }
  if (worker && varnishNodes.length === 0 && varnishDns === undefined) {
    problems.push('VARNISH_NODES or VARNISH_DNS: the worker role needs at least one Varnish node');
  }

  const logLevel = str('PURGER_LOG_LEVEL', 'info');
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`PURGER_LOG_LEVEL="${logLevel}": expected one of ${LOG_LEVELS.join(', ')}`);

  const redisPrefix = str('PURGER_REDIS_PREFIX', 'purger');
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(redisPrefix)) problems.push('PURGER_REDIS_PREFIX: letters, digits and _.:- only');

  const config: Config = {
    role,
    host: str('PURGER_HOST', '127.0.0.1'),
    port: int('PURGER_PORT', 8090, 0, 65535),
    redisUrl,
    redisPassword,
    redisSentinel,
    redisMinReplicas,
    redisWaitMs: int('PURGER_REDIS_WAIT_MS', 500, 10, 60_000),
    redisPrefix,
    webhookSecrets,
    operatorToken,
    readToken,
    varnishPurgeToken,
    sites,
    tagPrefixes,
    varnishNodes,
    varnishDns,
    dnsIntervalMs: int('PURGER_DNS_INTERVAL_MS', 5000, 100, 3_600_000),
    repurgeDelaysMs: repurgeDelays(env, problems),
    coalesceMs: int('PURGER_COALESCE_MS', 5, 0, 10_000),
    batchMax: int('PURGER_BATCH_MAX', 5000, 1, 100_000),
    headerBudget: int('PURGER_HEADER_BUDGET', 7168, 512, 65_536),
    urlEscalateThreshold: int('PURGER_URL_ESCALATE', 2000, 1, 1_000_000),
    urlBanMin: int('PURGER_URL_BAN_MIN', 16, 1, 1_000_000),
    nodeConcurrency: int('PURGER_NODE_CONCURRENCY', 8, 1, 256),
    nodeTimeoutMs: int('PURGER_NODE_TIMEOUT_MS', 5000, 100, 120_000),
    retryBaseMs: int('PURGER_RETRY_BASE_MS', 200, 1, 60_000),
    retryMaxMs: int('PURGER_RETRY_MAX_MS', 30_000, 1, 3_600_000),
    streamMaxLen: logMaxLen(
      int('PURGER_LOG_MAX_BYTES', DEFAULT_LOG_MAX_BYTES, 65_536, 64 * 1024 * 1024 * 1024),
      env.PURGER_STREAM_MAXLEN?.trim() ? int('PURGER_STREAM_MAXLEN', 100_000, 100, 100_000_000) : undefined,
    ),
    streamMaxAgeS: int('PURGER_STREAM_MAX_AGE_S', 86_400, 10, 30 * 86_400),
    dedupeTtlS: int('PURGER_DEDUPE_TTL_S', 86_400, 60, 30 * 86_400),
    pollMs: int('PURGER_POLL_MS', 1000, 10, 60_000),
    timestampToleranceS: int('PURGER_TIMESTAMP_TOLERANCE_S', 300, 1, 3600),
    bodyLimit: int('PURGER_BODY_LIMIT', 1_048_576, 1024, 16 * 1_048_576),
    // The plugin sends at most 1000 URLs or keys per event (Event_Builder::MAX_ITEMS).
    maxUrlsPerEvent: int('PURGER_MAX_URLS_PER_EVENT', 1000, 1, 100_000),
    maxEventBytes: int('PURGER_MAX_EVENT_BYTES', 262_144, 1024, 16 * 1_048_576),
    redisMaxmemory: env.PURGER_REDIS_MAXMEMORY?.trim() ? int('PURGER_REDIS_MAXMEMORY', 0, 0, Number.MAX_SAFE_INTEGER) : undefined,
    trimIntervalMs: int('PURGER_TRIM_INTERVAL_MS', 10_000, 100, 3_600_000),
    tenantLimits: {
      // Sized with Redis memory (memory-fit.ts checks it at start): per site, at most 86,400
      // events a day + the 20,000 burst (receipt and dedupe key ~0.9 KB each for
      // PURGER_DEDUPE_TTL_S: 88 MiB) and 1 KiB/s of bodies + the 8 MiB burst in the log for
      // PURGER_STREAM_MAX_AGE_S (with 256 B per entry: 123 MiB): ~211 MiB a site, so two sites
      // fit 90 % of the stack's maxmemory 512mb (461 MiB).
      events: { perS: int('PURGER_TENANT_EVENTS_PER_S', 1, 0, 1_000_000), burst: int('PURGER_TENANT_EVENTS_BURST', 20_000, 1, 100_000_000) },
      bytes: { perS: int('PURGER_TENANT_BYTES_PER_S', 1024, 0, 1_073_741_824), burst: int('PURGER_TENANT_BYTES_BURST', 8_388_608, 1, 17_179_869_184) },
    },
    logLevel,
    shutdownTimeoutMs: int('PURGER_SHUTDOWN_TIMEOUT_MS', 10_000, 100, 600_000),
  };
  // A bucket smaller than the largest request would refuse that request for ever.
  if (config.tenantLimits.events.perS > 0 && config.tenantLimits.events.burst < 500) {
    problems.push('PURGER_TENANT_EVENTS_BURST: must be at least 500 (one webhook may carry 500 events)');
  }
  if (config.tenantLimits.bytes.perS > 0 && config.tenantLimits.bytes.burst < config.bodyLimit) {
    problems.push(`PURGER_TENANT_BYTES_BURST: must be at least PURGER_BODY_LIMIT (${config.bodyLimit}), or the largest accepted body could never pass`);
  }
  if (config.retryMaxMs < config.retryBaseMs) problems.push('PURGER_RETRY_MAX_MS: must be >= PURGER_RETRY_BASE_MS');
  // With PURGER_REDIS_MAXMEMORY the fit is checked here; else at start against Redis's maxmemory.
  if (problems.length === 0 && ingest && config.redisMaxmemory !== undefined && config.redisMaxmemory > 0) {
    const misfit = memoryFitProblem(config, config.redisMaxmemory, 'PURGER_REDIS_MAXMEMORY');
    if (misfit !== undefined) problems.push(misfit);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
