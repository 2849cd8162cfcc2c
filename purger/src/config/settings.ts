// Every environment variable the purger reads, declared once: type, default, bounds and what it
// means. read-env.ts reads the environment against this schema; load.ts turns the values into the
// Config the service uses. Keywords TypeBox does not know, kept on the schema for the reader:
//   secret   also readable as NAME_FILE (the file's content, trimmed); never echoed in a problem
//   redact   never echoed in a problem (it may hold a password)
//   expected the sentence a problem about this variable ends with
//   split    list separator (a regex source; default a comma)
import { Type, type Static } from '@sinclair/typebox';
import { DEFAULT_LOG_MAX_BYTES } from './log-size.js';

const int = (def: number, minimum: number, maximum: number, description: string) => Type.Integer({ default: def, minimum, maximum, description });
const optionalInt = (minimum: number, maximum: number, description: string) => Type.Optional(Type.Integer({ minimum, maximum, description }));
const list = (description: string, options: Record<string, unknown> = {}) => Type.Array(Type.String(), { default: [], description, ...options });
const secret = (description: string, options: Record<string, unknown> = {}) => Type.Optional(Type.String({ secret: true, description, ...options }));
const oneOf = <T extends string>(values: readonly T[], def: T, description: string) => Type.Union(values.map((v) => Type.Literal(v)), { default: def, description });

/** A header value: printable ASCII without spaces, so it travels unchanged and cannot split a header. */
const HEADER_TOKEN = '^[\\x21-\\x7e]{16,512}$';
/** The purger's token as the shipped VCL checks it: printable ASCII without spaces, at least 16 (surrounding whitespace trimmed). */
export const PURGE_TOKEN_PATTERN = '^[!-~]{16,128}$';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const Settings = Type.Object({
  PURGER_ROLE: oneOf(['all', 'ingest', 'worker'], 'all', 'ingest: the HTTP API; worker: applies invalidations; all: both in one process'),
  PURGER_HOST: Type.String({ default: '127.0.0.1', description: 'listen address' }),
  PURGER_PORT: int(8090, 0, 65535, 'listen port'),
  PURGER_LOG_LEVEL: oneOf(LOG_LEVELS, 'info', 'pino log level'),
  PURGER_SHUTDOWN_TIMEOUT_MS: int(10_000, 100, 600_000, 'how long a graceful shutdown may take before the process exits anyway'),

  REDIS_URL: Type.String({
    default: 'redis://127.0.0.1:6379', pattern: '^rediss?://\\S+$', redact: true, expected: 'expected redis://host:port[/db] or rediss://…',
    description: 'redis://[[user]:password@]host:port[/db] or rediss://…; with Sentinel only its user, password, db and scheme are used',
  }),
  REDIS_PASSWORD: secret('the Redis password instead of one in REDIS_URL'),
  REDIS_SENTINELS: list('host:port of Redis Sentinels: connect to the primary they name and follow their failovers'),
  REDIS_SENTINEL_MASTER: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$', expected: 'letters, digits and _.- only', description: 'the master name the sentinels monitor' })),
  REDIS_SENTINEL_PASSWORD: secret('the sentinels\' own password (their requirepass); required with REDIS_SENTINELS'),
  PURGER_REDIS_MIN_REPLICAS: optionalInt(0, 16, 'replicas that must have a batch before the 202 (WAIT); default 1 with Sentinel, else 0'),
  PURGER_REDIS_WAIT_MS: int(500, 10, 60_000, 'how long to wait for them; past it 503 storage_unreplicated'),
  PURGER_REDIS_PREFIX: Type.String({ default: 'purger', pattern: '^[A-Za-z0-9_.:-]{1,64}$', expected: 'letters, digits and _.:- only', description: 'prefix of every Redis key' }),
  PURGER_REDIS_MAXMEMORY: optionalInt(0, Number.MAX_SAFE_INTEGER, "the memory the start check sizes the caps against instead of Redis's maxmemory"),

  PURGER_WEBHOOK_SECRETS: list('whsec_<base64> (any allowed site) or site=whsec_<base64> (that site only); several for rotation (the file: one per line or comma-separated)', {
    secret: true, split: '[,\\n]',
  }),
  PURGER_OPERATOR_TOKEN: secret('bearer token for POST /v1/purge', { minLength: 16, expected: 'must be at least 16 characters' }),
  PURGER_READ_TOKEN: secret('bearer token for receipts, /metrics and /openapi.json (the operator token works there too)', {
    pattern: HEADER_TOKEN, expected: 'must be 16 to 512 visible ASCII characters without spaces',
  }),
  PURGER_SITES: list('allowed sites, host[:port], normalized'),
  PURGER_TAG_PREFIXES: list("site=namespace: that site's tag events may only name keys <namespace>-…"),
  PURGER_TIMESTAMP_TOLERANCE_S: int(300, 1, 3600, 'webhook-timestamp tolerance'),
  PURGER_BODY_LIMIT: int(1_048_576, 1024, 16 * 1_048_576, 'largest request body, bytes'),
  // The plugin sends at most 1000 URLs or keys per event (Event_Builder::MAX_ITEMS).
  PURGER_MAX_URLS_PER_EVENT: int(1000, 1, 100_000, 'most URLs or keys in one event; beyond it 413'),
  PURGER_MAX_EVENT_BYTES: int(262_144, 1024, 16 * 1_048_576, "most bytes of one event's JSON; beyond it 413"),
  // Sized with Redis memory (memory-fit.ts checks it at start): ~211 MiB a site with the
  // defaults, so two sites fit 90 % of the stack's maxmemory 512mb.
  PURGER_TENANT_EVENTS_PER_S: int(1, 0, 1_000_000, 'per-site ingest cap, events/s (0 = unlimited)'),
  PURGER_TENANT_EVENTS_BURST: int(20_000, 1, 100_000_000, 'per-site ingest burst, events'),
  PURGER_TENANT_BYTES_PER_S: int(1024, 0, 1_073_741_824, 'per-site ingest cap, body bytes/s (0 = unlimited)'),
  PURGER_TENANT_BYTES_BURST: int(8_388_608, 1, 17_179_869_184, 'per-site ingest burst, body bytes'),

  VARNISH_NODES: list('host:port of the Varnish nodes'),
  VARNISH_DNS: Type.Optional(Type.String({ description: 'name:port; every A/AAAA record is a node' })),
  VARNISH_PURGE_TOKEN: secret('sent as X-Purge-Token on every PURGE/PURGEKEYS/BAN', {
    pattern: PURGE_TOKEN_PATTERN, expected: 'must be 16 to 128 visible ASCII characters without spaces (it is sent as the X-Purge-Token header)',
  }),
  PURGER_DNS_INTERVAL_MS: int(5000, 100, 3_600_000, 'how often VARNISH_DNS is re-resolved'),
  // Empty: the shipped VCL refuses to keep a page whose fetch began before an invalidation, so
  // repeats are only for nodes running other VCL.
  PURGER_REPURGE_DELAYS_MS: Type.Array(Type.Integer({ minimum: 1, maximum: 600_000 }), {
    default: [], maxItems: 5, increasing: true, zeroIsNone: true,
    expected: 'expected 1 to 5 increasing delays in ms between 1 and 600000, comma-separated (e.g. 300,2000), or 0 for none',
    description: 'ms after acceptance at which every invalidation is repeated, for fetches in flight during it; empty or 0 = never',
  }),
  PURGER_COALESCE_MS: int(5, 0, 10_000, 'a worker waits this long after a wake-up to batch events'),
  PURGER_BATCH_MAX: int(5000, 1, 100_000, 'most log entries applied per batch'),
  // (past Varnish's http_req_size, 32 KiB by default, a request is not answered at all: the
  // connection is reset, which is retried like any network error; up to it a refusal is split)
  PURGER_HEADER_BUDGET: int(7168, 512, 16_384, "bytes for one xkey-purge / X-Ban-Url value (Varnish's http_req_hdr_len is 8192 by default; a longer header is refused and split)"),
  PURGER_URL_ESCALATE: int(2000, 1, 1_000_000, 'more distinct URLs than this (one site, one batch) become a site-wide ban'),
  PURGER_URL_BAN_MIN: int(16, 1, 1_000_000, 'from this many plain URLs of one site in one batch, send exact-match bans'),
  PURGER_NODE_CONCURRENCY: int(8, 1, 256, 'parallel requests (and connections) per node'),
  PURGER_NODE_TIMEOUT_MS: int(5000, 100, 120_000, 'connect / response timeout per request to a node'),
  PURGER_RETRY_BASE_MS: int(200, 1, 60_000, 'first retry delay; doubles per attempt'),
  PURGER_RETRY_MAX_MS: int(30_000, 1, 3_600_000, 'retry delay cap'),
  PURGER_REFRESH_CONCURRENCY: int(4, 0, 64, 'pages re-fetched at a time per node after their invalidation (those of soft invalidations one at a time), if readers requested them in the last minute; 0 = refresh off'),
  PURGER_POLL_MS: int(1000, 10, 60_000, 'workers read the log at least this often without a wake-up'),

  PURGER_LOG_MAX_BYTES: int(DEFAULT_LOG_MAX_BYTES, 65_536, 64 * 1024 * 1024 * 1024, 'memory budget of the log (its length cap is this / 300)'),
  PURGER_STREAM_MAXLEN: optionalInt(100, 100_000_000, 'length cap of the log when lower than the budget gives'),
  PURGER_STREAM_MAX_AGE_S: int(86_400, 10, 30 * 86_400, 'log entries older than this are trimmed'),
  PURGER_DEDUPE_TTL_S: int(86_400, 60, 30 * 86_400, 'how long event ids, webhook ids and receipts are remembered'),
  PURGER_TRIM_INTERVAL_MS: int(10_000, 100, 3_600_000, 'how often the log is trimmed outside appends (also while Redis is full)'),
});

export type SettingValues = Static<typeof Settings>;
