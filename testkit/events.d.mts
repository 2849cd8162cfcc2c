// Types of events.mjs for the purger's TypeScript tests and bench.
export interface TestEvent {
  id: string;
  kind: string;
  soft: boolean;
  reason: string;
  time: string;
  tags?: string[];
  urls?: string[];
  [field: string]: unknown;
}
export function eventId(prefix?: string): string;
export function tagEvent(tags: string[], extra?: Record<string, unknown>): TestEvent;
export function urlEvent(site: string, paths: string[], extra?: Record<string, unknown>): TestEvent;
export function postEvents(base: string, body: unknown, opts: { secret: string; id?: string; timestamp?: number; timeoutMs?: number }): Promise<{ status: number; json: Record<string, unknown> | null; body: string }>;
export function eventMix(site: string, n: number, prefix: string): TestEvent[];
