// PageRefresher's two queues with a scripted node (the order and overlap of its requests): pages
// of hard invalidations at full concurrency, pages of soft ones one at a time behind them.
// refresh.test.ts covers the same against real varnishd.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../src/metrics.js';
import { PageRefresher, type RefreshTarget } from '../src/delivery/page-refresher.js';
import type { RefreshCopy } from '../src/delivery/varnish-client.js';
import { until } from '../../testkit/wait.mjs';

const page = (path: string): RefreshTarget => ({ site: 'example.test', path, https: false });

/** A node whose refreshes end when the test says so: the order they began in, and how many overlapped. */
function scriptedNode() {
  const started: string[] = [];
  const asked: string[] = [];
  const pending = new Map<string, () => void>();
  let now = 0;
  let max = 0;
  return {
    started,
    max: () => max,
    finish: (path: string) => {
      const done = pending.get(path);
      if (!done) throw new Error(`${path} is not in flight`);
      pending.delete(path);
      done();
    },
    /** every request, with its copy: a page's plain copy is asked for after its gzip one ends */
    asked,
    client: {
      refresh: (t: RefreshTarget, copy: RefreshCopy = 'gzip'): Promise<'fetched' | 'skipped'> => {
        asked.push(`${t.path} ${copy}`);
        // no reader without gzip in this script: the node skips the plain copy at once
        if (copy === 'plain') return Promise.resolve('skipped');
        started.push(t.path);
        max = Math.max(max, ++now);
        return new Promise((resolve) => pending.set(t.path, () => {
          now--;
          resolve('fetched');
        }));
      },
    },
  };
}

describe('refresh lanes', () => {
  it('refreshes the pages of soft invalidations one at a time, and a page named again by a hard one ahead of them', async () => {
    const node = scriptedNode();
    const refresher = new PageRefresher('n1', node.client, 4, createMetrics({ defaults: false }), pino({ level: 'silent' }));
    refresher.enqueue(['/a/', '/b/', '/c/', '/d/'].map(page), true);
    await until('the first background page in flight', () => node.started.length === 1);
    expect(node.started).toEqual(['/a/']);
    // a hard invalidation names /c/ and /e/: both go at once, beside the background one
    refresher.enqueue(['/c/', '/e/'].map(page));
    await until('the front pages in flight', () => node.started.length === 3);
    expect(node.started).toEqual(['/a/', '/c/', '/e/']);
    node.finish('/c/');
    node.finish('/e/');
    await new Promise((r) => setTimeout(r, 20));
    expect(node.started).toHaveLength(3); // /b/ waits for /a/: one background page at a time
    node.finish('/a/');
    await until('the next background page', () => node.started.length === 4);
    node.finish('/b/');
    await until('the last background page', () => node.started.length === 5);
    node.finish('/d/');
    expect(node.started).toEqual(['/a/', '/c/', '/e/', '/b/', '/d/']);
    expect(node.max()).toBe(3);
    await refresher.stop();
  });

  it('asks for a page\'s plain copy once its gzip copy was answered', async () => {
    const node = scriptedNode();
    const refresher = new PageRefresher('n1', node.client, 1, createMetrics({ defaults: false }), pino({ level: 'silent' }));
    refresher.enqueue(['/a/', '/b/'].map(page));
    await until('/a/ in flight', () => node.started.length === 1);
    expect(node.asked).toEqual(['/a/ gzip']);
    node.finish('/a/');
    await until('/b/ in flight', () => node.started.length === 2);
    expect(node.asked).toEqual(['/a/ gzip', '/a/ plain', '/b/ gzip']);
    node.finish('/b/');
    await until('/b/ plain asked', () => node.asked.length === 4);
    await refresher.stop();
  });

  it('queues a page in flight in the background again at the front when a hard invalidation names it', async () => {
    const node = scriptedNode();
    const refresher = new PageRefresher('n1', node.client, 2, createMetrics({ defaults: false }), pino({ level: 'silent' }));
    refresher.enqueue(['/a/', '/b/'].map(page), true);
    await until('/a/ in flight', () => node.started.length === 1);
    refresher.enqueue([page('/a/')]); // invalidated again, hard, while its background refresh runs
    node.finish('/a/');
    // /a/ again at once, at the front, beside the waiting background page /b/
    await until('both in flight', () => node.started.length === 3);
    expect(node.started.slice(1).sort()).toEqual(['/a/', '/b/']);
    node.finish('/a/');
    node.finish('/b/');
    await refresher.stop();
  });
});
