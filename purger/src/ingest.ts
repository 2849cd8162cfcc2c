// Accepting a batch: site allow-list, per-event checks, durable append. Shared by the webhook and
// the operator route; either every event of a batch is stored or none is.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { HttpError } from './http-errors.js';
import type { Metrics } from './metrics.js';
import { toStoredEvent, type InputEvent, type StoredEvent } from './normalize.js';
import type { StreamLog } from './stream-log.js';

export interface IngestResult {
  accepted: string[];
  duplicates: string[];
}

export class Ingest {
  private readonly sites: Set<string>;

  constructor(
    private readonly log: StreamLog,
    sites: string[],
    private readonly metrics: Metrics,
    private readonly tagPrefixes: Map<string, string> = new Map(),
  ) {
    this.sites = new Set(sites);
  }

  async accept(messageId: string, body: { site: string; events: InputEvent[] }, logger: FastifyBaseLogger): Promise<IngestResult> {
    const n = body.events.length;
    if (!this.sites.has(body.site)) {
      this.metrics.eventsReceived.inc({ outcome: 'forbidden' }, n);
      throw new HttpError(403, 'forbidden_site', `site "${body.site}" is not in this purger's allow-list (PURGER_SITES)`, '/site');
    }
    const now = Date.now();
    const stored: StoredEvent[] = [];
    for (let i = 0; i < n; i++) {
      const r = toStoredEvent(body.events[i]!, body.site, i, `op-${randomUUID()}`, now, this.tagPrefixes.get(body.site));
      if ('field' in r) {
        this.metrics.eventsReceived.inc({ outcome: 'invalid' }, n);
        throw new HttpError(400, 'invalid', r.message, r.field);
      }
      stored.push(r);
    }
    let res;
    try {
      res = await this.log.append(messageId, body.site, stored);
    } catch (err) {
      this.metrics.eventsReceived.inc({ outcome: 'unavailable' }, n);
      logger.error({ err: String(err), messageId }, 'could not store events in Redis');
      throw new HttpError(503, 'storage_unavailable', 'Redis is unreachable, so the events were not stored; retry the same request later');
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
}
