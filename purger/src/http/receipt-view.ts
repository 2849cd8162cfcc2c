// One event's receipt as the API shows it (GET /v1/events/:id, POST /v1/receipts): per node
// applied (and `via` a fallback when the node refused its request as built), failed, skipped or
// pending, from the receipt hash and the nodes' cursors.
import type { Via } from '../delivery/reshape.js';
import type { StoredEvent } from '../model/event-model.js';
import { compareIds, type NodeCursors, type ReceiptMeta } from '../store/stream-log.js';
import type { ReceiptT } from './schemas.js';

/** A receipt hash as Redis holds it (`s` stream id, `m` meta, `n:<node>` results). */
export type ReceiptFields = Record<string, string>;

/** The receipt's log entry id, or undefined when the hash is not (or no longer) a receipt. */
export function receiptStreamId(h: ReceiptFields | undefined): string | undefined {
  return h && (h.m || h.e) && h.s ? h.s : undefined;
}

/** The whole event, which receipts written before receipts became small carry in `e`. */
export function embeddedEvent(h: ReceiptFields): StoredEvent | undefined {
  return h.e ? (JSON.parse(h.e) as StoredEvent) : undefined;
}

/**
 * The receipt of event `id` from its hash (receiptStreamId(h) defined), the live nodes' cursors
 * and the event itself while the log holds it (for its reason).
 */
export function receiptView(id: string, h: ReceiptFields, nodes: ReadonlyMap<string, NodeCursors>, event: StoredEvent | undefined): ReceiptT {
  const streamId = h.s!;
  const meta = JSON.parse(h.m ?? h.e!) as ReceiptMeta;
  const reason = (embeddedEvent(h) ?? event)?.reason;
  const names = new Set([...nodes.keys(), ...Object.keys(h).filter((k) => k.startsWith('n:')).map((k) => k.slice(2))]);
  const out: ReceiptT['nodes'] = [];
  for (const node of [...names].sort()) {
    const r = h[`n:${node}`];
    if (r) {
      const v = JSON.parse(r) as { s: 'applied' | 'failed'; t: string; i?: number; e?: string; v?: Via };
      out.push({ node, state: v.s, at: v.t, ...(v.i !== undefined ? { invalidated: v.i } : {}), ...(v.v ? { via: v.v } : {}), ...(v.e ? { error: v.e } : {}) });
      continue;
    }
    const c = nodes.get(node);
    if (c && compareIds(c.cursor, streamId) >= 0) {
      out.push({ node, state: 'skipped', detail: 'the node restarted with an empty cache, joined after the event (older than PURGER_NEW_NODE_CATCHUP_MS), or got a site-wide ban after its cursor fell off the log' });
    } else {
      out.push({ node, state: 'pending', ...(c?.down ? { error: c.down.error, detail: `node failing since ${c.down.since}; retrying` } : {}) });
    }
  }
  return {
    id,
    site: meta.site,
    kind: meta.kind,
    soft: meta.soft,
    ...(reason !== undefined ? { reason } : {}),
    acceptedAt: new Date(meta.acceptedAt).toISOString(),
    nodes: out,
  };
}
