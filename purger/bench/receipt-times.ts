// When each event was accepted and applied on each node, read from the purger's receipts in
// Redis (the bench measures the running service from outside, through its store).
import type { Redis } from 'ioredis';

export interface ReceiptTimes {
  acceptedAt: number;
  /** per node, in the order asked: when it applied the event (ms; NaN: not yet) */
  applied: number[];
}

export async function receiptTimes(redis: Redis, site: string, ids: string[], nodes: string[]): Promise<ReceiptTimes[]> {
  const out: ReceiptTimes[] = [];
  for (let i = 0; i < ids.length; i += 1000) {
    const p = redis.pipeline();
    for (const id of ids.slice(i, i + 1000)) p.hgetall(`purger:evt:${site}/${id}`);
    for (const [, h] of (await p.exec()) ?? []) {
      const r = h as Record<string, string>;
      const acceptedAt = (JSON.parse(r.m ?? r.e!) as { acceptedAt: number }).acceptedAt;
      out.push({ acceptedAt, applied: nodes.map((n) => Date.parse((JSON.parse(r[`n:${n}`] ?? '{"t":"NaN"}') as { t: string }).t)) });
    }
  }
  return out;
}
