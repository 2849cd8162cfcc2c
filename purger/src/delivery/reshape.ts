// What a node's answer means (retry it, or the request's shape is refused) and how a refused
// request is sent another way (docs/protocol.md §2, "Node answers"). Pure: node-sender.ts acts on it.
import type { Invalidation } from './coalesce.js';

/** applied; transient: the same request again later; refused: this request will never be accepted */
export type Verdict = 'applied' | 'transient' | 'refused';

/** How an invalidation the node refused was applied instead (receipts show it). */
export type Via = 'split' | 'host-ban';

/**
 * Answers a retry can fix: 403 (the ACL or the token, which the operator fixes), 408, 429, and
 * gateway errors. A 503 is Varnish's own answer to an overloaded or restarting node, except
 * "VCL failed": the VCL broke on this request and will on the same one again.
 */
const TRANSIENT = new Set([403, 408, 429, 502, 503, 504]);

export function classifyAnswer(status: number, body: string): Verdict {
  if (status >= 200 && status < 300) return 'applied';
  if (status === 503) return /VCL failed/i.test(body) ? 'refused' : 'transient';
  if (TRANSIENT.has(status)) return 'transient';
  // any other 4xx (400, 404, 405, 411, 413, 414, 417, 431, ...) and 500, 501, 505
  if ((status >= 400 && status < 500) || status === 500 || status === 501 || status === 505) return 'refused';
  // other 5xx, 1xx, 3xx: not about the request's shape (a proxy, a redirecting deployment)
  return 'transient';
}

/** A request that never got an answer: undici refusing an argument (a header it cannot send) will refuse it again; anything else is the network. */
export function classifyError(code: string): Exclude<Verdict, 'applied'> {
  return code === 'UND_ERR_INVALID_ARG' ? 'refused' : 'transient';
}

export type Reshaped =
  | { how: 'split'; requests: [Invalidation, Invalidation] }
  | { how: 'host-ban'; requests: [Invalidation] }
  | { how: 'failed'; requests: [] };

/**
 * The next shape for a refused request: a PURGEKEYS with 2+ keys in two halves (by bytes, so a
 * header that was too long halves too); one key, one URL or a URL-regex ban as a ban of the
 * whole site (a superset: it costs renders, never leaves a page stale; the site's keys are its
 * own, docs/protocol.md §3); a refused site ban has no wider form left: failed.
 */
export function reshape(inv: Invalidation): Reshaped {
  if (inv.kind === 'purgekeys' && inv.keys.length >= 2) {
    const at = halfByBytes(inv.keys);
    const half = (from: number, to: number): Invalidation => {
      const owners = inv.keyEventIds?.slice(from, to);
      return { ...inv, keys: inv.keys.slice(from, to), ...(owners ? { eventIds: [...new Set(owners.flat())], keyEventIds: owners } : {}) };
    };
    return { how: 'split', requests: [half(0, at), half(at, inv.keys.length)] };
  }
  if (inv.kind === 'ban' && inv.banUrl === undefined) return { how: 'failed', requests: [] };
  return { how: 'host-ban', requests: [{ kind: 'ban', site: inv.site, eventIds: inv.eventIds }] };
}

/** where to cut the keys so both halves' headers (keys and separators) are as even as can be; 1..n-1 */
function halfByBytes(keys: readonly string[]): number {
  const total = keys.reduce((n, k) => n + k.length + 1, -1);
  let size = -1;
  let best = 1;
  let bestGap = Number.POSITIVE_INFINITY;
  for (let i = 0; i < keys.length - 1; i++) {
    size += keys[i]!.length + 1;
    // first half `size` bytes, second `total - size - 1`
    const gap = Math.abs(2 * size + 1 - total);
    if (gap < bestGap) [best, bestGap] = [i + 1, gap];
  }
  return best;
}

/** host-ban over split over none: the strongest fallback an event went through */
export function strongerVia(a: Via | undefined, b: Via | undefined): Via | undefined {
  return a === 'host-ban' || b === 'host-ban' ? 'host-ban' : (a ?? b);
}
