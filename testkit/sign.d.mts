// Types of sign.mjs for the purger's TypeScript tests.
export function signature(secret: string, id: string, timestamp: number | string, body: string): string;
export function signHeaders(secret: string, body: string, opts?: { id?: string; timestamp?: number }): Record<string, string>;
