// Which pages a node refreshes after a batch: the events' `refresh` lists merged by rank.
import { describe, expect, it } from 'vitest';
import { refreshTargets } from '../src/delivery/page-refresher.js';
import type { StoredEvent } from '../src/model/event-model.js';
import type { LogEntry } from '../src/store/stream-log.js';

let seq = 0;
const entry = (site: string, refresh?: string[], https = false): LogEntry => {
  const event: StoredEvent = {
    id: `e-${++seq}`, site, kind: 'tags', tags: ['k'], soft: false, reason: '', time: '2026-11-22T10:00:00Z', acceptedAt: 0,
    ...(refresh ? { refresh } : {}), ...(https ? { refreshHttps: true as const } : {}),
  };
  return { streamId: `${seq}-0`, seq, event };
};

describe('refreshTargets', () => {
  it("takes every event's first page, then every event's second…, each page once per site", () => {
    const targets = refreshTargets([
      entry('a.test', ['/post-1/', '/', '/feed/']),
      entry('a.test'),
      entry('a.test', ['/post-2/', '/']),
      entry('b.test', ['/']),
    ]);
    expect(targets).toEqual([
      { site: 'a.test', path: '/post-1/', https: false },
      { site: 'a.test', path: '/post-2/', https: false },
      { site: 'b.test', path: '/', https: false },
      { site: 'a.test', path: '/', https: false },
      { site: 'a.test', path: '/feed/', https: false },
    ]);
  });

  it('keeps the http and the https copy of a page apart', () => {
    expect(refreshTargets([entry('a.test', ['/']), entry('a.test', ['/'], true), entry('a.test', ['/'], true)])).toEqual([
      { site: 'a.test', path: '/', https: false },
      { site: 'a.test', path: '/', https: true },
    ]);
  });

  it('is empty for events stored without refresh', () => {
    expect(refreshTargets([entry('a.test'), entry('a.test', [])])).toEqual([]);
  });
});
