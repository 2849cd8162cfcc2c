// The set of Varnish nodes: a static list plus every A/AAAA record of a DNS name, re-resolved
// periodically (so `docker compose --scale varnish=3` is picked up without a restart).
import { lookup } from 'node:dns/promises';
import type { Logger } from 'pino';
import type { NodeAddress } from '../config/load.js';

export type NodeSet = Map<string, NodeAddress>;

export function nodeKey(a: NodeAddress): string {
  return a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

export type Resolver = (name: string) => Promise<string[]>;

const systemResolver: Resolver = async (name) => (await lookup(name, { all: true })).map((r) => r.address);

export class NodeDiscovery {
  private timer: NodeJS.Timeout | undefined;
  private current: NodeSet = new Map();

  constructor(
    private readonly staticNodes: NodeAddress[],
    private readonly dns: NodeAddress | undefined,
    private readonly intervalMs: number,
    private readonly onChange: (nodes: NodeSet) => void,
    private readonly logger: Logger,
    private readonly resolve: Resolver = systemResolver,
  ) {}

  get nodes(): NodeSet {
    return this.current;
  }

  async start(): Promise<void> {
    await this.refresh();
    if (this.dns) this.timer = setInterval(() => void this.refresh(), this.intervalMs).unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async refresh(): Promise<void> {
    const next: NodeSet = new Map();
    for (const a of this.staticNodes) next.set(nodeKey(a), a);
    if (this.dns) {
      try {
        for (const address of await this.resolve(this.dns.host)) {
          const a = { host: address, port: this.dns.port };
          next.set(nodeKey(a), a);
        }
      } catch (err) {
        // Keep the DNS nodes we had: a resolver hiccup must not drop live nodes.
        this.logger.warn({ name: this.dns.host, err: String(err) }, 'VARNISH_DNS lookup failed; keeping the previous nodes');
        for (const [k, a] of this.current) if (!next.has(k)) next.set(k, a);
      }
    }
    const changed = next.size !== this.current.size || [...next.keys()].some((k) => !this.current.has(k));
    if (changed) {
      this.logger.info({ nodes: [...next.keys()] }, 'Varnish nodes');
      this.current = next;
      this.onChange(next);
    }
  }
}
