// Types of ports.mjs for the purger's TypeScript tests and bench.
export function freePorts(n: number): Promise<number[]>;
export function freePort(): Promise<number>;
