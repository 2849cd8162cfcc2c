// Types of http.mjs (stack/audit/http.mjs's request) for the purger's TypeScript tests and bench.
export interface RequestOptions {
  host?: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer | object;
  timeoutMs?: number;
  localAddress?: string;
  insecure?: boolean;
}
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  ms: number;
}
export function request(base: string, path: string, opts?: RequestOptions): Promise<Answer>;
