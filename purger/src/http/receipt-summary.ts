// Where a set of one site's events stands on every node, summed up (POST /v1/receipts): a node
// is live once it applied (or skipped) every found event, `via` the strongest fallback it used;
// the set is complete once every node is live and every id was found.
import { strongerVia, type Via } from '../delivery/reshape.js';
import type { ReceiptT, SiteReceiptsT } from './schemas.js';

export interface FoundReceipt {
  receipt: ReceiptT;
  /** the event's `time` (ms), else when it was accepted */
  changedAt: number;
}

type NodeSummary = SiteReceiptsT['nodes'][number];

/** `nodes`: the live nodes, listed as pending when no event was found. */
export function summarizeReceipts(site: string, found: readonly FoundReceipt[], missing: string[], nodes: readonly string[]): SiteReceiptsT {
  const names = found.length > 0 ? [...new Set(found.flatMap((f) => f.receipt.nodes.map((n) => n.node)))].sort() : [...nodes].sort();
  const summaries = names.map((node) => nodeSummary(node, found));
  const live = summaries.filter((n) => n.state === 'applied').length;
  const complete = found.length > 0 && missing.length === 0 && live === names.length;
  const changedAt = found.length > 0 ? Math.min(...found.map((f) => f.changedAt)) : undefined;
  const out: SiteReceiptsT = { site, total: names.length, live, complete, missing, nodes: summaries, events: found.map((f) => f.receipt) };
  if (changedAt !== undefined) out.changedAt = new Date(changedAt).toISOString();
  if (complete && changedAt !== undefined) {
    // (a node that skipped every event has no time: the set was live when it changed)
    const liveAt = Math.max(changedAt, ...summaries.map((n) => (n.at ? Date.parse(n.at) : changedAt)));
    out.liveAt = new Date(liveAt).toISOString();
    out.ms = liveAt - changedAt;
  }
  return out;
}

function nodeSummary(node: string, found: readonly FoundReceipt[]): NodeSummary {
  const states = found.map((f) => f.receipt.nodes.find((n) => n.node === node));
  const failed = states.find((s) => s?.state === 'failed');
  if (failed) return { node, state: 'failed', ...(failed.error ? { error: failed.error } : {}) };
  if (found.length === 0 || states.some((s) => s === undefined || s.state === 'pending')) {
    // (an event whose receipt does not list the node: the node had no live worker then)
    const why = states.find((s) => s?.state === 'pending' && (s.error || s.detail));
    return { node, state: 'pending', ...(why?.error ? { error: why.error } : {}), ...(why?.detail ? { detail: why.detail } : {}) };
  }
  const times = states.map((s) => s?.at).filter((t): t is string => t !== undefined);
  // (the plugin counts the nodes that applied the change as a site-wide ban)
  const via = states.reduce<Via | undefined>((v, s) => strongerVia(v, s?.via), undefined);
  return {
    node,
    state: 'applied',
    ...(times.length > 0 ? { at: times.reduce((a, b) => (Date.parse(b) > Date.parse(a) ? b : a)) } : {}),
    ...(via ? { via } : {}),
  };
}
