// The log's Lua scripts: each runs atomically in Redis, so what it writes happens together or not
// at all. Registered on a connection as the commands purgerAppend, purgerCommit, purgerRead and purgerStart.
import type { Redis, Result } from 'ioredis';

const APPEND = `
local ttl = tonumber(ARGV[1])
if redis.call('SET', KEYS[3], '1', 'NX', 'EX', ttl) == false then
  -- A retry of a stored webhook: write something (its own TTL) so a following WAIT covers the
  -- original append too (replicas apply the replication stream in order).
  redis.call('EXPIRE', KEYS[3], ttl)
  return {0}
end
redis.call('SADD', KEYS[4], ARGV[5])
local res = {1}
local n = #KEYS - 4
for i = 5, #KEYS do
  local payload = ARGV[i + 1]
  if redis.call('EXISTS', KEYS[i]) == 1 then
    res[#res + 1] = ''
  else
    local seq = redis.call('INCR', KEYS[2])
    local sid = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'e', payload, 'n', seq)
    -- The receipt keeps ids and a few fields, never the event itself (URLs, tags, reason).
    redis.call('HSET', KEYS[i], 's', sid, 'n', seq, 'm', ARGV[i + 1 + n])
    redis.call('EXPIRE', KEYS[i], ttl)
    redis.call('PUBLISH', ARGV[4], '{"stream":"' .. sid .. '","seq":' .. seq .. ',"event":' .. payload .. '}')
    res[#res + 1] = sid .. ' ' .. seq
  end
end
redis.call('XTRIM', KEYS[1], 'MINID', '~', ARGV[3])
return res
`;

// After a node applied a batch: its results into receipts that still exist (an expired receipt
// is not recreated), then its cursor, atomically. KEYS[1] is the node's hash. Only if the stored
// cursor is still where this worker read from (ARGV[5]); else -1 and nothing is written: after a
// Redis failover (or a restart that lost its last second) the cursor in Redis can be behind the
// worker's, and the receipts of what the worker committed in between are gone with it.
// KEYS[2..n+1] are the receipts (`evt:<site>/<id>`), KEYS[n+2..2n+1] the same events' receipts
// as written before ids were scoped by site (`evt:<id>`), used when only that one exists.
const COMMIT = `
if redis.call('HGET', KEYS[1], 'cursor') ~= ARGV[5] then return -1 end
local n = (#KEYS - 1) / 2
for i = 2, n + 1 do
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('HSET', KEYS[i], ARGV[1], ARGV[i + 4])
  elseif redis.call('EXISTS', KEYS[i + n]) == 1 then redis.call('HSET', KEYS[i + n], ARGV[1], ARGV[i + 4]) end
end
redis.call('HSET', KEYS[1], 'cursor', ARGV[2], 'seq', ARGV[3], 'updated', ARGV[4])
return #KEYS
`;

// Reads a range of the log and the sequence counter atomically (a gap check needs both from the
// same moment). A script rather than MULTI: at maxmemory Redis refuses every command queued in
// MULTI, but runs a script that does not write, so workers keep delivering while Redis is full.
// ARGV[4] = 'rev' reads the newest entry instead.
const READ = `
local range
if ARGV[4] == 'rev' then
  range = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
else
  range = redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[2], 'COUNT', ARGV[3])
end
return {range, redis.call('GET', KEYS[2]) or '0'}
`;

// Where a node seen for the first time starts when it catches up (stream-log.ts, catchupStart):
// the newest entry before ARGV[1] (an exclusive id, `(<ms>-0`), the entry after it (the first one
// replayed; with none before, the log's first entry) and the sequence counter, atomically.
// Writes nothing, like READ.
const START = `
local before = redis.call('XREVRANGE', KEYS[1], ARGV[1], '-', 'COUNT', 1)
local from = '-'
if before[1] then from = '(' .. before[1][1] end
return {before, redis.call('XRANGE', KEYS[1], from, '+', 'COUNT', 1), redis.call('GET', KEYS[2]) or '0'}
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    purgerAppend(...args: (string | number)[]): Result<(string | number)[], Context>;
    purgerCommit(...args: (string | number)[]): Result<number, Context>;
    purgerRead(...args: (string | number)[]): Result<[[string, string[]][], string], Context>;
    purgerStart(...args: (string | number)[]): Result<[[string, string[]][], [string, string[]][], string], Context>;
  }
}

/** Registers the scripts on a connection (once). */
export function defineLogScripts(r: Redis): void {
  if (typeof (r as Partial<Redis>).purgerAppend === 'function') return;
  r.defineCommand('purgerAppend', { lua: APPEND });
  r.defineCommand('purgerCommit', { lua: COMMIT });
  r.defineCommand('purgerRead', { lua: READ, numberOfKeys: 2 });
  r.defineCommand('purgerStart', { lua: START, numberOfKeys: 2 });
}
