import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { NodeDiscovery, nodeKey, type NodeSet } from '../src/delivery/discovery.js';

describe('NodeDiscovery', () => {
  it('merges static nodes with every DNS record, follows changes, and keeps nodes on a lookup error', async () => {
    let answer: string[] | Error = ['10.0.0.2', '10.0.0.3'];
    const changes: string[][] = [];
    const d = new NodeDiscovery(
      [{ host: 'varnish-a', port: 6081 }],
      { host: 'varnish', port: 8080 },
      60_000,
      (n: NodeSet) => changes.push([...n.keys()].sort()),
      pino({ level: 'silent' }),
      async () => {
        if (answer instanceof Error) throw answer;
        return answer;
      },
    );
    await d.start();
    expect(changes).toEqual([['10.0.0.2:8080', '10.0.0.3:8080', 'varnish-a:6081']]);
    answer = ['10.0.0.2', '10.0.0.4', 'fd00::5'];
    await d.refresh();
    expect(changes[1]).toEqual(['10.0.0.2:8080', '10.0.0.4:8080', '[fd00::5]:8080', 'varnish-a:6081']);
    answer = new Error('SERVFAIL');
    await d.refresh();
    expect(changes).toHaveLength(2);
    expect([...d.nodes.keys()].sort()).toEqual(changes[1]);
    answer = ['10.0.0.2', '10.0.0.4', 'fd00::5'];
    await d.refresh();
    expect(changes).toHaveLength(2);
    d.stop();
    expect(nodeKey({ host: '::1', port: 80 })).toBe('[::1]:80');
  });
});
