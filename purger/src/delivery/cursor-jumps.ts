// Moves a node's cursors over events not sent one by one: after a log overrun and after a node restart.
import type { Logger } from 'pino';
import type { Invalidation } from './coalesce.js';
import type { NodeLanes } from './lane.js';
import type { Metrics } from '../metrics.js';
import type { NodeSender } from './node-sender.js';
import { compareIds, type StreamLog } from '../store/stream-log.js';

const RESTART_MARGIN_MS = 1000;

export interface JumpContext {
  node: string;
  lanes: NodeLanes;
  log: StreamLog;
  sender: NodeSender;
  metrics: Metrics;
  logger: Logger;
}

/**
 * The node's cursor points at entries the log no longer has: ban every site (`sites`, besides
 * every site the log has seen), jump to the end.
 */
export async function recoverOverrun(ctx: JumpContext, sites: readonly string[]): Promise<void> {
  const { node, lanes, log } = ctx;
  const { id: last, seq } = await log.lastPosition();
  const all = [...new Set([...sites, ...(await log.sites())])].sort();
  ctx.metrics.logOverruns.inc({ node });
  ctx.logger.error(
    { node, cursor: lanes.main.cursor, sites: all },
    'node cursor fell off the end of the log (events were trimmed before this node got them): banning everything for every site on this node',
  );
  const requests: Invalidation[] = all.map((site) => ({ kind: 'ban', site, eventIds: [] }));
  const done = await ctx.sender.sendAll(requests, 'main');
  if (!done) return;
  await log.saveCursor(node, 'cursor', last, seq);
  for (const lane of lanes.repurges) {
    await log.saveCursor(node, lane.field, last);
    lane.cursor = last;
  }
  lanes.main.cursor = last;
  lanes.main.seq = seq;
  lanes.main.seqKnown = true;
}

/**
 * The node refused connections while we retried, so its varnishd was not running: it came back
 * with an empty cache, and what was accepted before it stopped refusing cannot be in it.
 */
export async function skipAfterRestart(ctx: JumpContext, lastRefusedAt: number): Promise<void> {
  const { node, lanes, log } = ctx;
  const boundary = `${lastRefusedAt - RESTART_MARGIN_MS}-0`;
  if (compareIds(boundary, lanes.main.cursor) <= 0) return;
  ctx.metrics.backlogSkips.inc({ node });
  ctx.logger.warn(
    { node, from: lanes.main.cursor, to: boundary },
    'node was down (connection refused) and restarted with an empty cache: skipping its stale backlog',
  );
  await log.saveCursor(node, 'cursor', boundary);
  lanes.main.cursor = boundary;
  lanes.main.seqKnown = false;
  for (const lane of lanes.repurges) {
    if (compareIds(lane.cursor, boundary) < 0) {
      await log.saveCursor(node, lane.field, boundary);
      lane.cursor = boundary;
    }
  }
}
