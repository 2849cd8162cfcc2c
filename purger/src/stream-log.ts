// The durable log: a Redis Stream (capped by length and age) plus the pub/sub live channel.
// Appending is one Lua script, so dedupe, log entry, receipt and publish happen together or not
// at all. Workers read the stream from per-node cursors.
import type { Redis, Result } from 'ioredis';
import type { StoredEvent } from './normalize.js';

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
  entries: LogEntry[];
  /** the cursor's successor entries were trimmed away before this node got them */
  overrun: boolean;
}

export interface NodeCursors {
  cursor: string;
  seq: number;
  repurge: string;
}

const APPEND = `
local ttl = tonumber(ARGV[1])
if redis.call('SET', KEYS[3], '1', 'NX', 'EX', ttl) == false then return {0} end
redis.call('SADD', KEYS[4], ARGV[5])
local res = {1}
for i = 5, #KEYS do
  local payload = ARGV[i + 1]
  if redis.call('EXISTS', KEYS[i]) == 1 then
    res[#res + 1] = ''
  else
    local seq = redis.call('INCR', KEYS[2])
    local sid = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'e', payload, 'n', seq)
    redis.call('HSET', KEYS[i], 's', sid, 'n', seq, 'e', payload)
    redis.call('EXPIRE', KEYS[i], ttl)
    redis.call('PUBLISH', ARGV[4], '{"stream":"' .. sid .. '","seq":' .. seq .. ',"event":' .. payload .. '}')
    res[#res + 1] = sid .. ' ' .. seq
  end
end
redis.call('XTRIM', KEYS[1], 'MINID', '~', ARGV[3])
return res
`;

// Writes a node's result into receipts that still exist (an expired receipt is not recreated).
const RECEIPTS = `
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('HSET', KEYS[i], ARGV[1], ARGV[i + 1]) end
end
return #KEYS
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    purgerAppend(...args: (string | number)[]): Result<(string | number)[], Context>;
    purgerReceipts(...args: (string | number)[]): Result<number, Context>;
  }
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

  constructor(
    readonly redis: Redis,
    readonly prefix: string,
    private readonly opts: { maxLen: number; maxAgeS: number; dedupeTtlS: number },
  ) {
    this.stream = `${prefix}:log`;
    this.channel = `${prefix}:events`;
    this.seqKey = `${prefix}:seq`;
    this.sitesKey = `${prefix}:sites`;
    if (typeof (redis as Partial<Redis>).purgerAppend !== 'function') {
      redis.defineCommand('purgerAppend', { lua: APPEND });
      redis.defineCommand('purgerReceipts', { lua: RECEIPTS });
    }
  }

  eventKey(id: string): string {
    return `${this.prefix}:evt:${id}`;
  }

  nodeKey(node: string): string {
    return `${this.prefix}:node:${node}`;
  }

  /** Stores a batch atomically; resolves only after Redis has executed the whole script. */
  async append(messageId: string, site: string, events: StoredEvent[]): Promise<AppendResult> {
    const minId = `${Date.now() - this.opts.maxAgeS * 1000}-0`;
    const keys = [this.stream, this.seqKey, `${this.prefix}:msg:${messageId}`, this.sitesKey, ...events.map((e) => this.eventKey(e.id))];
    const args = [this.opts.dedupeTtlS, this.opts.maxLen, minId, this.channel, site, ...events.map((e) => JSON.stringify(e))];
    const res = await this.redis.purgerAppend(keys.length, ...keys, ...args);
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

  async sites(): Promise<string[]> {
    return this.redis.smembers(this.sitesKey);
  }

  async headSeq(): Promise<number> {
    return Number((await this.redis.get(this.seqKey)) ?? 0);
  }

  async lastId(): Promise<string> {
    try {
      const info = (await this.redis.xinfo('STREAM', this.stream)) as unknown[];
      return String(field(info, 'last-generated-id') ?? '0-0');
    } catch (err) {
      if (/no such key/i.test(String(err))) return '0-0';
      throw err;
    }
  }

  /**
   * Up to `count` entries after `cursor` (exclusive), not past `end` when given. Detects that
   * entries after the cursor were trimmed (the node missed them): Redis ≥ 7 keeps
   * max-deleted-entry-id for exactly this.
   */
  async read(cursor: string, count: number, end = '+'): Promise<ReadResult> {
    const [exists, range] = await this.redis
      .multi()
      .xrange(this.stream, cursor, cursor)
      .xrange(this.stream, `(${cursor}`, end, 'COUNT', count)
      .exec()
      .then((r) => {
        if (!r) throw new Error('redis transaction aborted');
        for (const [err] of r) if (err) throw err;
        return r.map(([, v]) => v as [string, string[]][]);
      });
    let overrun = false;
    if (exists!.length === 0 && cursor !== '0-0') {
      try {
        const info = (await this.redis.xinfo('STREAM', this.stream)) as unknown[];
        const maxDeleted = String(field(info, 'max-deleted-entry-id') ?? '0-0');
        overrun = compareIds(maxDeleted, cursor) > 0;
      } catch (err) {
        if (!/no such key/i.test(String(err))) throw err;
      }
    }
    const entries: LogEntry[] = [];
    for (const [streamId, fields] of range!) {
      let event: StoredEvent | undefined;
      let seq = 0;
      for (let i = 0; i + 1 < fields.length; i += 2) {
        if (fields[i] === 'e') event = JSON.parse(fields[i + 1]!) as StoredEvent;
        else if (fields[i] === 'n') seq = Number(fields[i + 1]);
      }
      if (event) entries.push({ streamId, seq, event });
    }
    return { entries, overrun };
  }

  /** A node's cursors; a node never seen before starts at the end of the log. */
  async cursors(node: string): Promise<NodeCursors> {
    const key = this.nodeKey(node);
    const h = await this.redis.hgetall(key);
    if (h.cursor && h.repurge) return { cursor: h.cursor, seq: Number(h.seq ?? 0), repurge: h.repurge };
    const last = await this.lastId();
    const seq = await this.headSeq();
    await this.redis.hset(key, { cursor: last, seq, repurge: last });
    return { cursor: last, seq, repurge: last };
  }

  async saveCursor(node: string, lane: 'cursor' | 'repurge', id: string, seq?: number): Promise<void> {
    const fields: Record<string, string | number> = { [lane]: id, updated: Date.now() };
    if (seq !== undefined) fields.seq = seq;
    await this.redis.hset(this.nodeKey(node), fields);
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
      out.set(n, { cursor: h.cursor ?? '0-0', seq: Number(h.seq ?? 0), repurge: h.repurge ?? '0-0' });
    });
    return out;
  }

  async writeReceipts(node: string, results: Map<string, string>): Promise<void> {
    if (results.size === 0) return;
    const ids = [...results.keys()];
    await this.redis.purgerReceipts(ids.length, ...ids.map((id) => this.eventKey(id)), `n:${node}`, ...ids.map((id) => results.get(id)!));
  }

  async receipt(id: string): Promise<Record<string, string>> {
    return this.redis.hgetall(this.eventKey(id));
  }
}

function field(info: unknown[], name: string): unknown {
  for (let i = 0; i + 1 < info.length; i += 2) if (info[i] === name) return info[i + 1];
  return undefined;
}
