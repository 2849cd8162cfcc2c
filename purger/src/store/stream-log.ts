// The durable log: a Redis Stream (capped by length and age) plus the pub/sub live channel.
// Appending is one Lua script, so dedupe, log entry, receipt and publish happen together or not
// at all. Workers read the stream from per-node cursors.
import type { Redis } from 'ioredis';
import { eventRef, type StoredEvent } from '../model/event-model.js';
import { defineLogScripts } from './log-scripts.js';

export interface LogEntry {
  streamId: string;
  seq: number;
  event: StoredEvent;
}

export interface AppendResult {
  /** false when this webhook-id was seen before: nothing was stored again */
  newMessage: boolean;
  accepted: LogEntry[];
  duplicates: string[];
}

export interface ReadResult {
  /** the entries that hold an event */
  entries: LogEntry[];
  /** the last entry read, event or not (where the cursor goes once the batch is done) */
  last?: { streamId: string; seq: number };
  /** entries whose event cannot be read (not JSON): skipped, never retried */
  malformed: string[];
  /** entries right after the cursor were trimmed away before this node got them */
  overrun: boolean;
}

/** The append was stored on the primary, but fewer replicas than required confirmed it in time. */
export class NotReplicatedError extends Error {
  constructor(
    readonly acked: number,
    readonly required: number,
  ) {
    super(`${acked} of ${required} required Redis replicas acknowledged the append in time`);
    this.name = 'NotReplicatedError';
  }
}

export interface NodeCursors {
  cursor: string;
  seq: number;
  /** set while the node is failing: when it started and the last error */
  down?: { since: string; error: string };
}

/** The Redis hash field of the repurge lane with this delay. */
export const repurgeField = (delayMs: number): string => `repurge:${delayMs}`;

/** What a receipt keeps of its event: small and free of URLs, tags and free text. */
export interface ReceiptMeta {
  site: string;
  kind: StoredEvent['kind'];
  soft: boolean;
  acceptedAt: number;
}

export function receiptMeta(e: StoredEvent): ReceiptMeta {
  return { site: e.site, kind: e.kind, soft: e.soft, acceptedAt: e.acceptedAt };
}

/** Compares two stream ids `ms-seq` numerically. */
export function compareIds(a: string, b: string): number {
  const [am = '0', as = '0'] = a.split('-');
  const [bm = '0', bs = '0'] = b.split('-');
  const d = BigInt(am) - BigInt(bm);
  if (d !== 0n) return d < 0n ? -1 : 1;
  const e = BigInt(as) - BigInt(bs);
  return e === 0n ? 0 : e < 0n ? -1 : 1;
}

export class StreamLog {
  readonly stream: string;
  readonly channel: string;
  private readonly seqKey: string;
  private readonly sitesKey: string;

  /** the connection appends (and their WAIT) run on */
  private readonly writer: Redis;
  /** reads in flight, by range: identical reads share one */
  private readonly reads = new Map<string, Promise<ReadResult>>();

  constructor(
    readonly redis: Redis,
    readonly prefix: string,
    private readonly opts: { maxLen: number; maxAgeS: number; dedupeTtlS: number; minReplicas?: number; waitMs?: number },
    writer?: Redis,
  ) {
    this.writer = writer ?? redis;
    this.stream = `${prefix}:log`;
    this.channel = `${prefix}:events`;
    this.seqKey = `${prefix}:seq`;
    this.sitesKey = `${prefix}:sites`;
    for (const r of new Set([redis, this.writer])) defineLogScripts(r);
  }

  /** an event's receipt and dedupe key: per site (`ref` = eventRef(site, id)) */
  eventKey(ref: string): string {
    return `${this.prefix}:evt:${ref}`;
  }

  /** where receipts were before ids were scoped by site (read, and completed, for compatibility) */
  legacyEventKey(id: string): string {
    return `${this.prefix}:evt:${id}`;
  }

  nodeKey(node: string): string {
    return `${this.prefix}:node:${node}`;
  }

  /**
   * Stores a batch atomically; resolves only after Redis has executed the whole script and, with
   * `minReplicas` > 0, after that many replicas have it (WAIT on the same connection). Throws
   * NotReplicatedError when they do not confirm within `waitMs`: the batch is on the primary but
   * may vanish in a failover, so the sender must retry (the retry is deduplicated by webhook id,
   * and WAITs again, covering the first append).
   */
  async append(messageId: string, site: string, events: StoredEvent[]): Promise<AppendResult> {
    const minId = `${Date.now() - this.opts.maxAgeS * 1000}-0`;
    // Webhook ids and event ids are deduplicated per site: another site's ids never collide.
    const keys = [this.stream, this.seqKey, `${this.prefix}:msg:${eventRef(site, messageId)}`, this.sitesKey, ...events.map((e) => this.eventKey(eventRef(site, e.id)))];
    const args = [
      this.opts.dedupeTtlS, this.opts.maxLen, minId, this.channel, site,
      ...events.map((e) => JSON.stringify(e)),
      ...events.map((e) => JSON.stringify(receiptMeta(e))),
    ];
    const res = await this.writer.purgerAppend(keys.length, ...keys, ...args);
    const min = this.opts.minReplicas ?? 0;
    if (min > 0) {
      const acked = Number(await this.writer.call('WAIT', min, this.opts.waitMs ?? 500));
      if (acked < min) throw new NotReplicatedError(acked, min);
    }
    if (Number(res[0]) === 0) return { newMessage: false, accepted: [], duplicates: events.map((e) => e.id) };
    const accepted: LogEntry[] = [];
    const duplicates: string[] = [];
    events.forEach((event, i) => {
      const r = String(res[i + 1] ?? '');
      if (r === '') duplicates.push(event.id);
      else {
        const [streamId = '', seq = '0'] = r.split(' ');
        accepted.push({ streamId, seq: Number(seq), event });
      }
    });
    return { newMessage: true, accepted, duplicates };
  }

  /**
   * Trims the log by age (MINID) and length (MAXLEN), outside the append script. Plain XTRIM,
   * which Redis runs at maxmemory (it frees memory; the append script is refused there, so a log
   * trimmed only by appends would stay full for ever). Approximate (`~`: whole stream nodes,
   * cheap); each call removes at most ~10,000 entries, so it repeats while there is more.
   * Returns how many entries were removed.
   */
  async trim(now = Date.now()): Promise<number> {
    const minId = `${now - this.opts.maxAgeS * 1000}-0`;
    let removed = 0;
    for (const [strategy, threshold] of [['MINID', minId], ['MAXLEN', this.opts.maxLen]] as const) {
      for (let i = 0; i < 100; i++) {
        const n = Number(await this.redis.call('XTRIM', this.stream, strategy, '~', threshold));
        removed += n;
        if (n === 0) break;
      }
    }
    return removed;
  }

  async sites(): Promise<string[]> {
    return this.redis.smembers(this.sitesKey);
  }

  async headSeq(): Promise<number> {
    return Number((await this.redis.get(this.seqKey)) ?? 0);
  }

  /** The newest entry's id and sequence number, read atomically (an empty log: 0-0 and the counter). */
  async lastPosition(): Promise<{ id: string; seq: number }> {
    const [range, head] = await this.redis.purgerRead(this.stream, this.seqKey, '-', '+', 1, 'rev');
    const last = range[0];
    if (!last) return { id: '0-0', seq: Number(head ?? 0) };
    return { id: last[0], seq: seqOfFields(last[1]) };
  }

  /**
   * Up to `count` entries after `cursor` (exclusive), not past `end` when given. Every entry
   * carries a gapless sequence number, so when the cursor's sequence number is known a gap
   * after it means entries were trimmed before this node got them.
   */
  read(cursor: string, cursorSeq: number | undefined, count: number, end = '+'): Promise<ReadResult> {
    // Nodes woken by the same event read the same range at the same moment: one Redis read and
    // one parse serve them all (the result is shared; nobody mutates it).
    const key = `${cursor}|${cursorSeq ?? ''}|${count}|${end}`;
    const inflight = this.reads.get(key);
    if (inflight) return inflight;
    const p = this.readOnce(cursor, cursorSeq, count, end).finally(() => this.reads.delete(key));
    this.reads.set(key, p);
    return p;
  }

  private async readOnce(cursor: string, cursorSeq: number | undefined, count: number, end: string): Promise<ReadResult> {
    const [range, headRaw] = await this.redis.purgerRead(this.stream, this.seqKey, `(${cursor}`, end, count, 'fwd');
    const head = Number(headRaw ?? 0);
    const entries: LogEntry[] = [];
    const malformed: string[] = [];
    let last: ReadResult['last'];
    let first: number | undefined;
    for (const [streamId, fields] of range) {
      let event: StoredEvent | undefined;
      let seq = 0;
      for (let i = 0; i + 1 < fields.length; i += 2) {
        if (fields[i] === 'e') {
          try {
            event = JSON.parse(fields[i + 1]!) as StoredEvent;
          } catch {
            event = undefined;
          }
        } else if (fields[i] === 'n') seq = Number(fields[i + 1]) || 0;
      }
      if (event && typeof event === 'object' && typeof event.id === 'string') entries.push({ streamId, seq, event });
      else malformed.push(streamId);
      first ??= seq;
      last = { streamId, seq };
    }
    let overrun = false;
    if (cursorSeq !== undefined && end === '+') {
      const next = first ?? head + 1;
      overrun = next > cursorSeq + 1;
    }
    return { entries, ...(last ? { last } : {}), malformed, overrun };
  }

  /**
   * Where a node seen for the first time starts when it catches up on what was logged from
   * `sinceMs` on (stream ids are millisecond timestamps): on the newest entry before it, with
   * that entry's sequence number, so the next read starts at the window's first entry and its
   * gap check holds. With no entry before it (a log shorter than the window, or trimmed): before
   * the log's first entry (`0-0`, the sequence number just below that entry's). An empty log:
   * its end. `entries`: how many entries follow (the sequence numbers are gapless); `first`: the
   * first one's id.
   */
  async catchupStart(sinceMs: number): Promise<{ id: string; seq: number; entries: number; first?: string }> {
    const end = `(${Math.max(1, Math.floor(sinceMs))}-0`;
    const [before, after, headRaw] = await this.redis.purgerStart(this.stream, this.seqKey, end);
    const head = Number(headRaw ?? 0);
    const [b, f] = [before[0], after[0]];
    const first = f ? { first: f[0] } : {};
    if (b) {
      const seq = seqOfFields(b[1]);
      return { id: b[0], seq, entries: Math.max(0, head - seq), ...first };
    }
    if (f) {
      const seq = Math.max(0, seqOfFields(f[1]) - 1);
      return { id: '0-0', seq, entries: Math.max(0, head - seq), ...first };
    }
    return { id: '0-0', seq: head, entries: 0 };
  }

  /**
   * A node's cursors: the main one and one per repurge delay (a delay new to this node starts
   * where the single repurge lane of older versions was, else at the main cursor). A node never
   * seen before (no cursor in Redis) starts, every lane alike, at the first entry logged within
   * `catchupMs` before `now` (catchupStart; `catchup` then says how many entries it replays), or
   * with `catchupMs` 0 at the end of the log.
   */
  async cursors(
    node: string,
    delaysMs: readonly number[],
    catchupMs = 0,
    now = Date.now(),
  ): Promise<{ cursor: string; seq: number; repurge: string[]; catchup?: { entries: number; first?: string } }> {
    const key = this.nodeKey(node);
    const h = await this.redis.hgetall(key);
    if (h.cursor) {
      return { cursor: h.cursor, seq: Number(h.seq ?? 0), repurge: delaysMs.map((d) => h[repurgeField(d)] ?? h.repurge ?? h.cursor!) };
    }
    const start = catchupMs > 0 ? await this.catchupStart(now - catchupMs) : undefined;
    const { id, seq } = start ?? (await this.lastPosition());
    await this.redis.hset(key, { cursor: id, seq, ...Object.fromEntries(delaysMs.map((d) => [repurgeField(d), id])) });
    const catchup = start ? { catchup: { entries: start.entries, ...(start.first !== undefined ? { first: start.first } : {}) } } : {};
    return { cursor: id, seq, repurge: delaysMs.map(() => id), ...catchup };
  }

  /** `lane`: 'cursor' (main) or repurgeField(delay) */
  async saveCursor(node: string, lane: string, id: string, seq?: number): Promise<void> {
    const fields: Record<string, string | number> = { [lane]: id, updated: Date.now() };
    if (seq !== undefined) fields.seq = seq;
    await this.redis.hset(this.nodeKey(node), fields);
  }

  /** Records that a node is failing (shown on pending receipts), or clears it. */
  async setNodeDown(node: string, down: { since: string; error: string } | undefined): Promise<void> {
    if (down) await this.redis.hset(this.nodeKey(node), 'down', JSON.stringify(down));
    else await this.redis.hdel(this.nodeKey(node), 'down');
  }

  /** Marks a node as served by a live worker (receipts list these nodes). */
  async heartbeat(nodes: string[]): Promise<void> {
    if (nodes.length === 0) return;
    const now = Date.now();
    await this.redis.hset(`${this.prefix}:nodes`, Object.fromEntries(nodes.map((n) => [n, now])));
  }

  async liveNodes(maxAgeMs: number): Promise<Map<string, NodeCursors>> {
    const all = await this.redis.hgetall(`${this.prefix}:nodes`);
    const now = Date.now();
    const live = [...Object.entries(all)].filter(([, t]) => now - Number(t) <= maxAgeMs).map(([n]) => n).sort();
    const out = new Map<string, NodeCursors>();
    if (live.length === 0) return out;
    const p = this.redis.pipeline();
    for (const n of live) p.hgetall(this.nodeKey(n));
    const res = (await p.exec()) ?? [];
    live.forEach((n, i) => {
      const h = (res[i]?.[1] ?? {}) as Record<string, string>;
      const down = h.down ? (JSON.parse(h.down) as NodeCursors['down']) : undefined;
      out.set(n, { cursor: h.cursor ?? '0-0', seq: Number(h.seq ?? 0), ...(down ? { down } : {}) });
    });
    return out;
  }

  /**
   * After a node applied a batch: its per-event results into the receipts, then its cursor, in
   * one script, only if the stored cursor is still `readFrom` (false otherwise: nothing written) (one round trip; the cursor never moves without the receipts). A plain command,
   * not inside MULTI: ioredis reloads a script Redis lost (NOSCRIPT) only for plain commands, and
   * a pipeline whose script load failed (Redis at maxmemory) would otherwise fail for ever.
   */
  async commitBatch(node: string, results: Map<string, string>, cursor: string, seq: number, readFrom: string): Promise<boolean> {
    const refs = [...results.keys()];
    const n = await this.redis.purgerCommit(
      refs.length * 2 + 1, this.nodeKey(node), ...refs.map((ref) => this.eventKey(ref)),
      ...refs.map((ref) => this.legacyEventKey(ref.slice(ref.indexOf('/') + 1))),
      `n:${node}`, cursor, seq, Date.now(), readFrom, ...refs.map((ref) => results.get(ref)!),
    );
    return Number(n) !== -1;
  }

  /**
   * The receipts of event `id`: of that site when `site` is given, else of every site that ever
   * sent events (ids are unique per site, so several sites can have one). A receipt written
   * before ids were scoped by site is found too (its site is in its `m` field).
   */
  async receipts(id: string, site?: string): Promise<{ site: string; fields: Record<string, string> }[]> {
    const sites = site !== undefined ? [site] : (await this.sites()).sort();
    const p = this.redis.pipeline();
    for (const s of sites) p.hgetall(this.eventKey(eventRef(s, id)));
    p.hgetall(this.legacyEventKey(id));
    const res = (await p.exec()) ?? [];
    for (const [err] of res) if (err) throw err;
    const found: { site: string; fields: Record<string, string> }[] = [];
    sites.forEach((s, i) => {
      const h = res[i]![1] as Record<string, string>;
      if (h.s) found.push({ site: s, fields: h });
    });
    const legacy = res[sites.length]![1] as Record<string, string>;
    if (legacy.s) {
      const legacySite = (JSON.parse(legacy.m ?? legacy.e ?? '{}') as { site?: string }).site ?? '';
      if ((site === undefined || legacySite === site) && !found.some((f) => f.site === legacySite)) found.push({ site: legacySite, fields: legacy });
    }
    return found;
  }

  /**
   * The receipts of several events of one site, in the order of `ids` (undefined: none), in one
   * round trip. A receipt written before ids were scoped by site counts when it names this site.
   */
  async siteReceipts(site: string, ids: readonly string[]): Promise<(Record<string, string> | undefined)[]> {
    const p = this.redis.pipeline();
    for (const id of ids) p.hgetall(this.eventKey(eventRef(site, id))).hgetall(this.legacyEventKey(id));
    const res = (await p.exec()) ?? [];
    for (const [err] of res) if (err) throw err;
    return ids.map((_, i) => {
      const scoped = res[2 * i]![1] as Record<string, string>;
      if (scoped.s) return scoped;
      const legacy = res[2 * i + 1]![1] as Record<string, string>;
      if (!legacy.s) return undefined;
      return (JSON.parse(legacy.m ?? legacy.e ?? '{}') as { site?: string }).site === site ? legacy : undefined;
    });
  }

  /** The event at one stream id, while the log still has it (receipts show its reason). */
  async entry(streamId: string): Promise<StoredEvent | undefined> {
    return (await this.entries([streamId]))[0];
  }

  /** The events at these stream ids (undefined where the log no longer has one), in one round trip. */
  async entries(streamIds: readonly string[]): Promise<(StoredEvent | undefined)[]> {
    if (streamIds.length === 0) return [];
    const p = this.redis.pipeline();
    for (const id of streamIds) p.xrange(this.stream, id, id, 'COUNT', 1);
    const res = (await p.exec()) ?? [];
    for (const [err] of res) if (err) throw err;
    return res.map(([, r]) => eventOfFields((r as [string, string[]][])[0]?.[1] ?? []));
  }

  /** Redis memory and the log's length, for the metrics that warn before maxmemory is reached. */
  async memory(): Promise<{ usedBytes: number; maxBytes: number; streamEntries: number }> {
    // (a pipeline, not MULTI: at maxmemory Redis refuses whatever is queued in MULTI)
    const res = await this.redis.pipeline().info('memory').xlen(this.stream).exec();
    if (!res) throw new Error('redis pipeline aborted');
    for (const [err] of res) if (err) throw err;
    const info = String(res[0]![1]);
    const field = (name: string): number => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0);
    return { usedBytes: field('used_memory'), maxBytes: field('maxmemory'), streamEntries: Number(res[1]![1]) };
  }
}

/** A log entry's sequence number (its `n` field; 0 when it has none). */
function seqOfFields(f: string[]): number {
  for (let i = 0; i + 1 < f.length; i += 2) if (f[i] === 'n') return Number(f[i + 1]) || 0;
  return 0;
}

/** The event in a log entry's fields, undefined when it has none or it is not JSON. */
function eventOfFields(f: string[]): StoredEvent | undefined {
  for (let i = 0; i + 1 < f.length; i += 2) {
    if (f[i] !== 'e') continue;
    try {
      return JSON.parse(f[i + 1]!) as StoredEvent;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
