// The configuration, read once at start from the environment (settings.ts declares every
// variable). Every bad variable gets its own line in the error, so an operator can fix them all
// in one go.
import { burstsFitRequests, namespacesConfine, redisPasswordOnce, sentinelConfig } from './cross-checks.js';
import { logMaxLen } from './log-size.js';
import { memoryFitProblem } from './memory-fit.js';
import { nodeAddresses, sites as parseSites, tagPrefixes as parseTagPrefixes, webhookSecrets as parseWebhookSecrets } from './parse-values.js';
import { readSettings, type Env } from './read-env.js';
import { Settings, type SettingValues } from './settings.js';

export type { NodeAddress } from './parse-values.js';
export type { RedisSentinel } from './cross-checks.js';
export { DEFAULT_LOG_MAX_BYTES, LOG_ENTRY_BYTES, logMaxLen } from './log-size.js';

export type Role = SettingValues['PURGER_ROLE'];

/** The default repurge schedule: none (the shipped VCL refuses pages fetched across an invalidation). */
export const DEFAULT_REPURGE_DELAYS_MS: readonly number[] = Settings.properties.PURGER_REPURGE_DELAYS_MS.default as number[];

/**
 * The configuration the service uses: every setting under the name the code uses, lists parsed.
 * Its type is what loadConfig builds, so a setting is declared once (settings.ts: type, default,
 * bounds, meaning) and mapped once (loadConfig); nothing else repeats it.
 */
export type Config = ReturnType<typeof loadConfig>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export function loadConfig(env: Env = process.env) {
  const problems: string[] = [];
  const s = readSettings(env, problems);
  const ingest = s.PURGER_ROLE !== 'worker';
  const worker = s.PURGER_ROLE !== 'ingest';

  redisPasswordOnce(s, problems);
  const redisSentinel = sentinelConfig(s, problems);
  const webhookSecrets = parseWebhookSecrets(s.PURGER_WEBHOOK_SECRETS, problems);
  if (ingest && webhookSecrets.length === 0) {
    problems.push('PURGER_WEBHOOK_SECRETS: required for the ingest role (comma-separated whsec_<base64> secrets)');
  }
  const sites = parseSites(s.PURGER_SITES, problems);
  if (ingest && sites.length === 0) {
    problems.push('PURGER_SITES: required for the ingest role (comma-separated hosts, e.g. localhost:8080,example.com)');
  }
  const tagPrefixes = parseTagPrefixes(s.PURGER_TAG_PREFIXES, problems);
  namespacesConfine(tagPrefixes, webhookSecrets, problems);
  const varnishNodes = nodeAddresses('VARNISH_NODES', s.VARNISH_NODES, problems);
  const varnishDns = s.VARNISH_DNS === undefined ? undefined : nodeAddresses('VARNISH_DNS', [s.VARNISH_DNS], problems)[0];
  if (worker && varnishNodes.length === 0 && s.VARNISH_DNS === undefined) {
    problems.push('VARNISH_NODES or VARNISH_DNS: the worker role needs at least one Varnish node');
  }
  burstsFitRequests(s, problems);

  const config = {
    role: s.PURGER_ROLE,
    host: s.PURGER_HOST,
    port: s.PURGER_PORT,
    redisUrl: s.REDIS_URL,
    /** REDIS_PASSWORD[_FILE] (instead of a password in REDIS_URL); never logged */
    redisPassword: s.REDIS_PASSWORD,
    /** set when REDIS_SENTINELS and REDIS_SENTINEL_MASTER are: connect through Sentinel */
    redisSentinel,
    /** after an append, wait for this many replicas to have it before answering 202 (0 = do not wait) */
    redisMinReplicas: s.PURGER_REDIS_MIN_REPLICAS ?? (redisSentinel ? 1 : 0),
    redisWaitMs: s.PURGER_REDIS_WAIT_MS,
    redisPrefix: s.PURGER_REDIS_PREFIX,
    webhookSecrets,
    operatorToken: s.PURGER_OPERATOR_TOKEN,
    /** bearer token for receipts, /metrics and /openapi.json (the operator token works too) */
    readToken: s.PURGER_READ_TOKEN,
    /** sent as X-Purge-Token on every PURGE/PURGEKEYS/BAN; never logged */
    varnishPurgeToken: s.VARNISH_PURGE_TOKEN,
    sites,
    /** site → its xkey namespace: its tag events may only name `<namespace>-…` keys */
    tagPrefixes,
    varnishNodes,
    varnishDns,
    dnsIntervalMs: s.PURGER_DNS_INTERVAL_MS,
    /** a node seen for the first time starts at the log's first entry of this window before now (0 = at the end) */
    newNodeCatchupMs: s.PURGER_NEW_NODE_CATCHUP_MS,
    /** delays (ms after acceptance, increasing) at which every invalidation is repurged; [] = never */
    repurgeDelaysMs: s.PURGER_REPURGE_DELAYS_MS,
    coalesceMs: s.PURGER_COALESCE_MS,
    batchMax: s.PURGER_BATCH_MAX,
    headerBudget: s.PURGER_HEADER_BUDGET,
    urlEscalateThreshold: s.PURGER_URL_ESCALATE,
    urlBanMin: s.PURGER_URL_BAN_MIN,
    nodeConcurrency: s.PURGER_NODE_CONCURRENCY,
    nodeTimeoutMs: s.PURGER_NODE_TIMEOUT_MS,
    /** pages re-fetched at a time per node after their invalidation; 0 = refresh off */
    refreshConcurrency: s.PURGER_REFRESH_CONCURRENCY,
    retryBaseMs: s.PURGER_RETRY_BASE_MS,
    retryMaxMs: s.PURGER_RETRY_MAX_MS,
    /** the log's length cap: from PURGER_LOG_MAX_BYTES, or PURGER_STREAM_MAXLEN when lower */
    streamMaxLen: logMaxLen(s.PURGER_LOG_MAX_BYTES, s.PURGER_STREAM_MAXLEN),
    streamMaxAgeS: s.PURGER_STREAM_MAX_AGE_S,
    dedupeTtlS: s.PURGER_DEDUPE_TTL_S,
    pollMs: s.PURGER_POLL_MS,
    timestampToleranceS: s.PURGER_TIMESTAMP_TOLERANCE_S,
    bodyLimit: s.PURGER_BODY_LIMIT,
    maxUrlsPerEvent: s.PURGER_MAX_URLS_PER_EVENT,
    maxEventBytes: s.PURGER_MAX_EVENT_BYTES,
    /** the memory the start check sizes the caps against instead of Redis's maxmemory */
    redisMaxmemory: s.PURGER_REDIS_MAXMEMORY,
    trimIntervalMs: s.PURGER_TRIM_INTERVAL_MS,
    /** per-site ingest caps (webhook route); perS 0 = unlimited */
    tenantLimits: {
      events: { perS: s.PURGER_TENANT_EVENTS_PER_S, burst: s.PURGER_TENANT_EVENTS_BURST },
      bytes: { perS: s.PURGER_TENANT_BYTES_PER_S, burst: s.PURGER_TENANT_BYTES_BURST },
    },
    logLevel: s.PURGER_LOG_LEVEL,
    shutdownTimeoutMs: s.PURGER_SHUTDOWN_TIMEOUT_MS,
  };
  // With PURGER_REDIS_MAXMEMORY the fit is checked here; else at start against Redis's maxmemory.
  if (problems.length === 0 && ingest && config.redisMaxmemory !== undefined && config.redisMaxmemory > 0) {
    const misfit = memoryFitProblem(config, config.redisMaxmemory, 'PURGER_REDIS_MAXMEMORY');
    if (misfit !== undefined) problems.push(misfit);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
