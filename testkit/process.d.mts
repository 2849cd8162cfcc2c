// Types of process.mjs for the purger's TypeScript tests and bench.
import type { ChildProcess } from 'node:child_process';
export const REPO_ROOT: string;
export function tempDir(name: string): string;
export function running(child: ChildProcess | undefined): boolean;
export function stopChild(child: ChildProcess | undefined, signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
export function processTree(child: ChildProcess | undefined): number[];
export function freeze(child: ChildProcess | undefined, stopped: boolean): void;
