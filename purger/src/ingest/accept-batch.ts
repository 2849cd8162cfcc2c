// Accepting a batch: site allow-list, per-event checks, durable append. Shared by the webhook and
// the operator route; either every event of a batch is stored or none is.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Metrics } from '../metrics.js';
import { toStoredEvent, type DroppedRefresh, type InputEvent, type StoredEvent } from '../model/event-model.js';
import { NotReplicatedError, type StreamLog } from '../store/stream-log.js';
import { IngestRejection } from './rejection.js';
import type { TenantLimiter, TenantLimits } from './tenant-limiter.js';

export interface IngestResult {
  accepted: string[];
  duplicates: string[];
}

/** What one event may carry (PURGER_MAX_URLS_PER_EVENT, PURGER_MAX_EVENT_BYTES). */
export interface EventLimits {
  maxItems: number;
  maxBytes: number;
}

const num = (n: number): string => n.toLocaleString('en-US');

/** The refusal of an event over its size caps, or undefined. Checked before anything is stored. */
export function oversizedEvent(e: InputEvent, index: number, limits: EventLimits): IngestRejection | undefined {
  const items = e.urls ?? e.tags;
  if (items && items.length > limits.maxItems) {
    const what = e.urls ? 'URLs' : 'keys';
    return new IngestRejection(
      'event_too_large',
      `event ${index} carries ${num(items.length)} ${what}; at most ${num(limits.maxItems)} per event (PURGER_MAX_URLS_PER_EVENT). Nothing was stored; split it into several events`,
      `/events/${index}/${e.urls ? 'urls' : 'tags'}`,
    );
  }
  const bytes = Buffer.byteLength(JSON.stringify(e));
  if (bytes > limits.maxBytes) {
    return new IngestRejection(
      'event_too_large',
      `event ${index} is ${num(bytes)} bytes of JSON; at most ${num(limits.maxBytes)} per event (PURGER_MAX_EVENT_BYTES). Nothing was stored; split it into several events`,
      `/events/${index}`,
    );
  }
  return undefined;
}

export class Ingest {
  private readonly sites: Set<string>;

  constructor(
    private readonly log: StreamLog,
    sites: string[],
    private readonly metrics: Metrics,
    private readonly tagPrefixes: Map<string, string> = new Map(),
    private readonly limiter?: TenantLimiter,
    private readonly limits?: TenantLimits,
    private readonly eventLimits: EventLimits = { maxItems: 1000, maxBytes: 262_144 },
  ) {
    this.sites = new Set(sites);
    if (limiter) metrics.sources.tenantBudget = () => limiter.remaining();
  }

  /**
   * Stores a valid batch. `charge.bytes` (the webhook route) subjects it to the site's ingest cap
   * after the allow-list and validation, before anything reaches Redis.
   */
  async accept(messageId: string, body: { site: string; events: InputEvent[] }, logger: FastifyBaseLogger, charge?: { bytes: number }): Promise<IngestResult> {
    const n = body.events.length;
    if (!this.sites.has(body.site)) {
      this.metrics.eventsReceived.inc({ outcome: 'forbidden' }, n);
      throw new IngestRejection('forbidden_site', `site "${body.site}" is not in this purger's allow-list (PURGER_SITES)`, '/site');
    }
    // Sizes first, for the whole batch: one oversized event refuses the request, nothing stored.
    for (let i = 0; i < n; i++) {
      const tooLarge = oversizedEvent(body.events[i]!, i, this.eventLimits);
      if (tooLarge) {
        this.metrics.eventsReceived.inc({ outcome: 'too_large' }, n);
        logger.warn({ messageId, site: body.site, event: i, reason: tooLarge.message }, 'event over its size cap: 413');
        throw tooLarge;
      }
    }
    const now = Date.now();
    const stored: StoredEvent[] = [];
    const dropped: DroppedRefresh[] = [];
    for (let i = 0; i < n; i++) {
      const r = toStoredEvent(body.events[i]!, body.site, i, `op-${randomUUID()}`, now, this.tagPrefixes.get(body.site), (d) => dropped.push(d));
      if ('field' in r) {
        this.metrics.eventsReceived.inc({ outcome: 'invalid' }, n);
        throw new IngestRejection('invalid', r.message, r.field);
      }
      stored.push(r);
    }
    if (dropped.length > 0) {
      // A refresh URL is a hint: a bad one (a menu link written http://user@host/) costs that
      // page's refresh, never the batch's invalidations.
      logger.warn({ messageId, site: body.site, count: dropped.length, dropped: dropped.slice(0, 10) }, 'refresh URLs outside the URL grammar dropped; the events are stored without them');
    }
    if (charge && this.limiter) this.enforceCap(body.site, n, charge.bytes, messageId, logger);
    let res: Awaited<ReturnType<typeof this.log.append>>;
    try {
      res = await this.log.append(messageId, body.site, stored);
    } catch (err) {
      if (err instanceof NotReplicatedError) {
        // Stored on the primary only: a failover now could lose it, so this is not a 202. The
        // retry (same webhook-id) is deduplicated and waits for the replicas again.
        this.metrics.eventsReceived.inc({ outcome: 'unreplicated' }, n);
        logger.warn({ messageId, site: body.site, acked: err.acked, required: err.required }, 'Redis replicas did not confirm the append in time: 503, the sender retries');
        throw new IngestRejection('storage_unreplicated', `Redis stored the events but only ${err.acked} of ${err.required} required replicas confirmed them in time, so they could be lost in a failover; retry the same request (same webhook-id): it is deduplicated`, undefined, 1);
      }
      // Redis at maxmemory (noeviction) refuses the whole append script before its first write:
      // nothing is stored, the sender keeps the batch and retries it. Never a lost event.
      if (/\bOOM\b/.test(String(err))) {
        this.metrics.eventsReceived.inc({ outcome: 'redis_full' }, n);
        logger.error({ messageId, site: body.site }, 'Redis is at maxmemory: events refused with 503 (raise maxmemory or find what fills it)');
        throw new IngestRejection('storage_full', 'Redis is out of memory (maxmemory reached), so the events were not stored; retry the same request later', undefined, 30);
      }
      this.metrics.eventsReceived.inc({ outcome: 'unavailable' }, n);
      logger.error({ err: String(err), messageId }, 'could not store events in Redis');
      throw new IngestRejection('storage_unavailable', 'Redis is unreachable, so the events were not stored; retry the same request later', undefined, 5);
    }
    const accepted = res.accepted.map((e) => e.event.id);
    this.metrics.eventsReceived.inc({ outcome: 'accepted' }, accepted.length);
    this.metrics.eventsReceived.inc({ outcome: 'duplicate' }, res.duplicates.length);
    logger.info(
      { messageId, site: body.site, accepted, duplicates: res.duplicates, duplicateMessage: !res.newMessage },
      'events stored',
    );
    return { accepted, duplicates: res.duplicates };
  }

  private enforceCap(site: string, events: number, bytes: number, messageId: string, logger: FastifyBaseLogger): void {
    const r = this.limiter!.take(site, events, bytes);
    if (r.ok) return;
    this.metrics.tenantRejections.inc({ site, limit: r.limit });
    this.metrics.eventsReceived.inc({ outcome: 'rate_limited' }, events);
    const l = this.limits![r.limit];
    const unit = r.limit === 'events' ? 'events' : 'bytes';
    logger.warn({ messageId, site, limit: r.limit, events, bytes, retryAfterS: r.retryAfterS }, 'site over its ingest cap: 429');
    throw new IngestRejection(
      'rate_limited',
      `site "${site}" is over its ingest cap of ${l.perS} ${unit}/s (burst ${l.burst} ${unit}; this batch: ${r.limit === 'events' ? events : bytes} ${unit}); nothing was stored, retry the same request after ${r.retryAfterS} s`,
      undefined,
      r.retryAfterS,
    );
  }
}
