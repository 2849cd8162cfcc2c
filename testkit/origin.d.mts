// Types of origin.mjs for the purger's TypeScript tests and bench.
export class Origin {
  static start(): Promise<Origin>;
  readonly hits: Map<string, number>;
  readonly versions: Map<string, number>;
  port: number;
  slowOnce(path: string, ms: number): void;
  edit(path: string): void;
  stop(): Promise<void>;
}
