// Types of wait.mjs for the purger's TypeScript tests and bench.
export function sleep(ms: number): Promise<void>;
export function until<T>(what: string, fn: () => Promise<T | undefined | null | false> | T | undefined | null | false, limitMs?: number, everyMs?: number): Promise<T>;
export function portOpen(port: number, host?: string): Promise<boolean>;
export function msUntil(what: string, fn: () => unknown, limitMs?: number, everyMs?: number): Promise<number>;
