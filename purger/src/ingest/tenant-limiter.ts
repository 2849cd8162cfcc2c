// Per-tenant (per-site) ingest caps: two token buckets per site, events and bytes, so one signer
// cannot fill Redis for everyone. Each bucket holds up to `burst` and refills at `perS`; a batch
// passes only if both buckets hold enough for all of it (nothing is taken otherwise). In memory,
// per ingest instance: N ingest instances behind a load balancer allow up to N times the rate.

export interface BucketLimit {
  /** refill per second; 0 = unlimited */
  perS: number;
  /** bucket size (the most a quiet tenant may send at once) */
  burst: number;
}

export interface TenantLimits {
  events: BucketLimit;
  bytes: BucketLimit;
}

export type LimitName = keyof TenantLimits;

export type TakeResult = { ok: true } | { ok: false; limit: LimitName; retryAfterS: number };

class Bucket {
  private tokens: number;
  private at: number;

  constructor(
    private readonly limit: BucketLimit,
    now: number,
  ) {
    this.tokens = limit.burst;
    this.at = now;
  }

  private refill(now: number): void {
    this.tokens = Math.min(this.limit.burst, this.tokens + ((now - this.at) / 1000) * this.limit.perS);
    this.at = now;
  }

  /** seconds until `n` fit (0 when they fit now) */
  waitFor(n: number, now: number): number {
    if (this.limit.perS === 0) return 0;
    this.refill(now);
    return n <= this.tokens ? 0 : (n - this.tokens) / this.limit.perS;
  }

  take(n: number): void {
    if (this.limit.perS !== 0) this.tokens -= n;
  }

  /** 0..1, how full the bucket is (1 = the whole burst available) */
  remaining(now: number): number {
    if (this.limit.perS === 0) return 1;
    this.refill(now);
    return this.tokens / this.limit.burst;
  }
}

export class TenantLimiter {
  private readonly buckets = new Map<string, { events: Bucket; bytes: Bucket }>();

  constructor(
    private readonly limits: TenantLimits,
    private readonly clock: () => number = Date.now,
  ) {}

  private of(site: string): { events: Bucket; bytes: Bucket } {
    let b = this.buckets.get(site);
    if (!b) {
      const now = this.clock();
      b = { events: new Bucket(this.limits.events, now), bytes: new Bucket(this.limits.bytes, now) };
      this.buckets.set(site, b);
    }
    return b;
  }

  /** Takes `events` and `bytes` from the site's buckets, or nothing and says which cap and for how long. */
  take(site: string, events: number, bytes: number): TakeResult {
    const b = this.of(site);
    const now = this.clock();
    const waitEvents = b.events.waitFor(events, now);
    const waitBytes = b.bytes.waitFor(bytes, now);
    if (waitEvents > 0 || waitBytes > 0) {
      const limit: LimitName = waitEvents >= waitBytes ? 'events' : 'bytes';
      return { ok: false, limit, retryAfterS: Math.max(1, Math.ceil(Math.max(waitEvents, waitBytes))) };
    }
    b.events.take(events);
    b.bytes.take(bytes);
    return { ok: true };
  }

  /** per site and limit, the share of the burst still available (for the metrics gauge) */
  remaining(): { site: string; limit: LimitName; ratio: number }[] {
    const now = this.clock();
    const out: { site: string; limit: LimitName; ratio: number }[] = [];
    for (const [site, b] of this.buckets) {
      out.push({ site, limit: 'events', ratio: b.events.remaining(now) }, { site, limit: 'bytes', ratio: b.bytes.remaining(now) });
    }
    return out;
  }
}
