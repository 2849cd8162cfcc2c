// Types of purger.mjs for the purger's TypeScript tests and bench.
import type { ChildProcess } from 'node:child_process';
export class PurgerProcess {
  constructor(env: Record<string, string>, opts?: { main?: string });
  readonly child: ChildProcess;
  readonly port: number;
  readonly url: string;
  output: string;
  readonly exited: Promise<number | NodeJS.Signals | null>;
  get pid(): number | undefined;
  ready(path?: string, limitMs?: number): Promise<this>;
  kill(signal?: NodeJS.Signals): Promise<number | NodeJS.Signals | null>;
  stop(): Promise<void>;
}
