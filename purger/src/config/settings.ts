// Every environment variable the purger reads, declared once: type, default, bounds and what it
// means. read-env.ts reads the environment against this schema; load.ts turns the values into the
// Config the service uses; the settings table of purger/README.md is rendered from it
// (scripts/settings-table.ts; a test and make lint fail when the README's differs), so each
// description is the README's text, in Markdown. Keywords TypeBox does not know, kept on the
// schema for the reader:
//   secret   also readable as NAME_FILE (the file's content, trimmed); never echoed in a problem
//   redact   never echoed in a problem (it may hold a password)
//   expected the sentence a problem about this variable ends with
//   split    list separator (a regex source; default a comma)
//   bytes    a size in bytes: the README shows its default in KiB or MiB too
//   shown    the README's default column, where the default alone would not say enough
import { Type, type Static } from '@sinclair/typebox';
import { DEFAULT_LOG_MAX_BYTES } from './log-size.js';

type Options = Record<string, unknown>;
const int = (def: number, minimum: number, maximum: number, description: string, options: Options = {}) => Type.Integer({ default: def, minimum, maximum, description, ...options });
const optionalInt = (minimum: number, maximum: number, description: string, options: Options = {}) => Type.Optional(Type.Integer({ minimum, maximum, description, ...options }));
const list = (description: string, options: Options = {}) => Type.Array(Type.String(), { default: [], description, ...options });
const secret = (description: string, options: Options = {}) => Type.Optional(Type.String({ secret: true, description, ...options }));
const oneOf = <T extends string>(values: readonly T[], def: T, description: string) => Type.Union(values.map((v) => Type.Literal(v)), { default: def, description });

/** A header value: printable ASCII without spaces, so it travels unchanged and cannot split a header. */
const HEADER_TOKEN = '^[\\x21-\\x7e]{16,512}$';
/** The purger's token as the shipped VCL checks it: printable ASCII without spaces, at least 16 (surrounding whitespace trimmed). */
export const PURGE_TOKEN_PATTERN = '^[!-~]{16,128}$';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const Settings = Type.Object({
  PURGER_ROLE: oneOf(['all', 'ingest', 'worker'], 'all', '`ingest` (the HTTP API), `worker` (applies invalidations) or `all` (both in one process)'),
  PURGER_HOST: Type.String({ default: '127.0.0.1', description: 'listen address (all roles serve `/healthz`, `/readyz`, `/metrics`; a worker needs `PURGER_READ_TOKEN` for its `/metrics`)' }),
  PURGER_PORT: int(8090, 0, 65535, 'listen port'),
  PURGER_LOG_LEVEL: oneOf(LOG_LEVELS, 'info', 'pino level (`debug` adds per-request and per-batch logs)'),
  PURGER_SHUTDOWN_TIMEOUT_MS: int(10_000, 100, 600_000, 'graceful shutdown limit before a forced exit'),

  REDIS_URL: Type.String({
    default: 'redis://127.0.0.1:6379', pattern: '^rediss?://\\S+$', redact: true, expected: 'expected redis://host:port[/db] or rediss://…',
    description: '`redis://[[user]:password@]host:port[/db]` or `rediss://…`; with Sentinel only its user, password, db and scheme are used (the sentinels name the host)',
  }),
  REDIS_PASSWORD: secret('the Redis password instead of one in `REDIS_URL` (setting both is an error); `REDIS_PASSWORD_FILE` reads it from a file; never logged'),
  REDIS_SENTINELS: list("comma-separated `host:port` of Redis Sentinels: connect to the primary they name, and follow their failovers (ioredis's Sentinel support). Needs `REDIS_SENTINEL_MASTER`"),
  REDIS_SENTINEL_MASTER: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$', expected: 'letters, digits and _.- only', description: 'the master name the sentinels monitor (`sentinel monitor <name> …`)' })),
  REDIS_SENTINEL_PASSWORD: secret(
    "the sentinels' own password (`requirepass` in sentinel.conf), **required** with `REDIS_SENTINELS`: a sentinel anyone can talk to can be told to monitor another server, which the purger would follow and send its Redis password to; `REDIS_SENTINEL_PASSWORD_FILE` reads it from a file; never logged",
  ),
  PURGER_REDIS_MIN_REPLICAS: optionalInt(0, 16, 'after storing a batch, wait until this many replicas have it (`WAIT`) before answering 202; 0 = answer once the primary has it', {
    shown: '`1` with Sentinel, else `0`',
  }),
  PURGER_REDIS_WAIT_MS: int(500, 10, 60_000, 'how long to wait for them; past it the API answers `503 storage_unreplicated` with `Retry-After: 1` and the sender retries (the retry is deduplicated by webhook id)'),
  PURGER_REDIS_PREFIX: Type.String({ default: 'purger', pattern: '^[A-Za-z0-9_.:-]{1,64}$', expected: 'letters, digits and _.:- only', description: 'prefix of every Redis key and of the channel `<prefix>:events`' }),
  PURGER_REDIS_MAXMEMORY: optionalInt(0, Number.MAX_SAFE_INTEGER, "bytes the start check sizes the caps against instead (a managed Redis that hides its limit, or a Redis shared with others: give the purger's share). 0 = no check", {
    shown: 'unset (read `maxmemory` from Redis `INFO memory` at start)',
  }),

  PURGER_WEBHOOK_SECRETS: list(
    "comma-separated secrets, all accepted at once (rotation): `whsec_<base64>` signs for every allowed site, `site=whsec_<base64>` only for that site (one tenant's leaked secret cannot purge another: 403); or `PURGER_WEBHOOK_SECRETS_FILE`, a file with the same list (commas or one per line)",
    { secret: true, split: '[,\\n]', shown: '— (required for ingest)' },
  ),
  PURGER_OPERATOR_TOKEN: secret('bearer token for `/v1/purge`, ≥ 16 characters; `PURGER_OPERATOR_TOKEN_FILE` reads it from a file', {
    minLength: 16, expected: 'must be at least 16 characters', shown: 'unset (operator route disabled)',
  }),
  PURGER_READ_TOKEN: secret('bearer token for receipts, `/metrics` and `/openapi.json` (the operator token is accepted there too); with neither set these routes answer 401. `PURGER_READ_TOKEN_FILE` reads it from a file. `/healthz` and `/readyz` stay open', {
    pattern: HEADER_TOKEN, expected: 'must be 16 to 512 visible ASCII characters without spaces',
  }),
  PURGER_SITES: list('comma-separated allowed sites, normalized (`localhost:8080,example.com`)', { shown: '— (required for ingest)' }),
  PURGER_TAG_PREFIXES: list(
    '`site=namespace,…`: tag events of that site may only name keys `<namespace>-…` (compared up to the `-`: `wp1` owns `wp1-p-1`, not `wp10-p-1`; a trailing `-` in the value is ignored; a namespace is at most 48 characters and keys at most 128, the grammar of `testdata/key-grammar.json`, which the plugin follows too). xkey purges are not host-scoped, so without this one tenant\'s secret could purge another tenant\'s keys on a shared Varnish. Required for every site that has a site-scoped secret (the purger refuses to start otherwise); overlapping namespaces (`localhost` and `localhost-8080`) are refused',
  ),
  PURGER_TIMESTAMP_TOLERANCE_S: int(300, 1, 3600, '`webhook-timestamp` tolerance'),
  PURGER_BODY_LIMIT: int(1_048_576, 1024, 16 * 1_048_576, 'request body limit (413 beyond, naming this setting and its value)', { bytes: true }),
  // The plugin sends at most 1000 URLs or keys per event (Event_Builder::MAX_ITEMS).
  PURGER_MAX_URLS_PER_EVENT: int(1000, 1, 100_000, 'most URLs (`urls`, `prefix`) or keys (`tags`) in one event (the plugin sends at most 1000); beyond it `413 event_too_large` naming the event, the limit and this setting; nothing of the request is stored'),
  PURGER_MAX_EVENT_BYTES: int(262_144, 1024, 16 * 1_048_576, "most bytes of one event's JSON (1000 URLs of 260 characters); beyond it `413 event_too_large`, nothing of the request stored", { bytes: true }),
  // Sized with Redis memory (memory-fit.ts checks it at start): ~211 MiB a site with the
  // defaults, so two sites fit 90 % of the stack's maxmemory 512mb.
  PURGER_TENANT_EVENTS_PER_S: int(
    1, 0, 1_000_000,
    'per site, events per second a signer may send on average (`POST /v1/events`; 0 = no cap); beyond it `429` with `Retry-After`, nothing stored. Per ingest instance. An event costs Redis ~0.9 KB of receipt and dedupe key for `PURGER_DEDUPE_TTL_S` plus its log entry (below), so 1/s sustained is ~71 MiB a day (86,400 events; a busy WordPress site sends a few thousand)',
  ),
  PURGER_TENANT_EVENTS_BURST: int(20_000, 1, 100_000_000, "…and at once after a quiet period (≥ 500, one webhook's maximum)"),
  PURGER_TENANT_BYTES_PER_S: int(1024, 0, 1_073_741_824, 'per site, request-body bytes per second (0 = no cap): ~84 MiB a day in the log', { bytes: true }),
  PURGER_TENANT_BYTES_BURST: int(8_388_608, 1, 17_179_869_184, '…and at once (≥ `PURGER_BODY_LIMIT`)', { bytes: true }),

  VARNISH_NODES: list('comma-separated `host:port` Varnish nodes'),
  VARNISH_DNS: Type.Optional(Type.String({ description: '`name:port`; every A/AAAA record is a node (`docker compose --scale varnish=3`)' })),
  VARNISH_PURGE_TOKEN: secret(
    "shared secret sent as `X-Purge-Token` on every `PURGE`/`PURGEKEYS`/`BAN` (Varnish requires it besides its ACL); the shipped VCL's rule: at least 16 printable ASCII characters without spaces, surrounding whitespace trimmed; never logged. `VARNISH_PURGE_TOKEN_FILE` reads it from a file",
    { pattern: PURGE_TOKEN_PATTERN, expected: 'must be 16 to 128 visible ASCII characters without spaces (it is sent as the X-Purge-Token header)' },
  ),
  PURGER_DNS_INTERVAL_MS: int(5000, 100, 3_600_000, 'how often `VARNISH_DNS` is re-resolved'),
  // A new Varnish task serves (and caches) pages before the purger knows it: Swarm and Kubernetes
  // add it to DNS once healthy, and the purger re-resolves every PURGER_DNS_INTERVAL_MS.
  PURGER_NEW_NODE_CATCHUP_MS: int(
    300_000, 0, 30 * 86_400_000,
    'a node seen for the first time (no cursor in Redis) is first sent the events logged in this many ms before it was found, not only later ones: a new Varnish can cache pages before DNS lists it and the purger finds it (up to `PURGER_DNS_INTERVAL_MS`, plus the engine adding a task to DNS only once healthy), and an edit logged meanwhile would never reach it. Replaying is harmless (invalidations are idempotent); the log bounds it (`PURGER_STREAM_MAX_AGE_S`). `0` = a new node starts at the end of the log',
  ),
  // Empty: the shipped VCL refuses to keep a page whose fetch began before an invalidation, so
  // repurges are only for nodes running other VCL.
  PURGER_REPURGE_DELAYS_MS: Type.Array(Type.Integer({ minimum: 1, maximum: 600_000 }), {
    default: [], maxItems: 5, increasing: true, zeroIsNone: true,
    expected: 'expected 1 to 5 increasing delays in ms between 1 and 600000, comma-separated (e.g. 300,2000), or 0 for none',
    description: 'when every invalidation is repurged (sent again), in ms after it was accepted (1–5 increasing delays, e.g. `300,2000`; empty or `0` = never). The shipped VCL refuses to keep a page whose fetch began before an invalidation, so its nodes need no repurges; set it for nodes running other VCL: a 300 ms repurge removes a page whose fetch was in flight during the purge',
    shown: 'empty (no repurges)',
  }),
  PURGER_COALESCE_MS: int(5, 0, 10_000, 'a worker waits this long after a wake-up to batch events'),
  PURGER_BATCH_MAX: int(5000, 1, 100_000, 'most log entries applied per batch'),
  // (past Varnish's http_req_size, 32 KiB by default, a request is not answered at all: the
  // connection is reset, which is retried like any network error; up to it a refusal is split)
  PURGER_HEADER_BUDGET: int(
    7168, 512, 16_384,
    "bytes for one `xkey-purge` / `X-Ban-Url` value, 512–16384 (Varnish's `http_req_hdr_len` is 8 KiB: a longer header gets a 400 and is split; past its `http_req_size`, 32 KiB, Varnish resets the connection instead of answering)",
    { bytes: true },
  ),
  PURGER_URL_ESCALATE: int(2000, 1, 1_000_000, 'more distinct URLs than this (one site, one batch) become one site-wide ban, logged and counted'),
  PURGER_URL_BAN_MIN: int(16, 1, 1_000_000, 'from this many plain URLs (no query) of one site in one batch, send them as exact-match regex bans packed into the header budget instead of one `PURGE` each'),
  PURGER_NODE_CONCURRENCY: int(8, 1, 256, 'parallel requests (and connections) per node'),
  PURGER_NODE_TIMEOUT_MS: int(5000, 100, 120_000, 'connect / response timeout per request to a node'),
  PURGER_RETRY_BASE_MS: int(200, 1, 60_000, 'first retry delay; doubles per attempt, with jitter'),
  PURGER_RETRY_MAX_MS: int(30_000, 1, 3_600_000, 'retry delay cap (retries never stop for transient failures)'),
  PURGER_REFRESH_CONCURRENCY: int(
    4, 0, 64,
    "once a node applied an event, it re-fetches the pages the event's `refresh` names (if readers asked for them in the last minute): at most this many at a time per node (pages of soft events one at a time, behind the others), on connections of their own; `0` = refresh off (below)",
  ),
  PURGER_POLL_MS: int(1000, 10, 60_000, 'safety-net poll of the log (pub/sub drops messages while disconnected) and heartbeat'),

  PURGER_LOG_MAX_BYTES: int(
    DEFAULT_LOG_MAX_BYTES, 65_536, 64 * 1024 * 1024 * 1024,
    'memory budget of the log: it keeps about `PURGER_LOG_MAX_BYTES / 300` entries (~220,000; ~0.3 KB is the measured cost of a typical entry), trimmed approximately (`MAXLEN ~`) on every append…',
    { bytes: true },
  ),
  PURGER_STREAM_MAXLEN: optionalInt(100, 100_000_000, '…or this many entries when that is lower (older setting, still read)…'),
  PURGER_STREAM_MAX_AGE_S: int(86_400, 10, 30 * 86_400, '…and none older than this'),
  PURGER_DEDUPE_TTL_S: int(86_400, 60, 30 * 86_400, 'how long event ids, webhook ids and receipts are remembered'),
  PURGER_TRIM_INTERVAL_MS: int(
    10_000, 100, 3_600_000,
    'how often the log is trimmed to `PURGER_STREAM_MAX_AGE_S` and its length cap besides every append (plain `XTRIM`, which Redis runs at `maxmemory`: a full Redis frees itself once entries pass their retention)',
  ),
});

export type SettingValues = Static<typeof Settings>;
