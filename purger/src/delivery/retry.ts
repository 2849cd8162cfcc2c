// Retry timing: exponential backoff with jitter, and sleeps between attempts that a stop cuts short.

/** exponential backoff (base · 2^(attempt-1), capped at max) with jitter over the upper half */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  const cap = Math.min(maxMs, baseMs * 2 ** Math.min(attempt - 1, 20));
  return Math.round(cap / 2 + Math.random() * (cap / 2));
}

/** Sleeps that end early on stop(); after stop() they return at once. */
export class Sleeper {
  private stoppedFlag = false;
  private readonly sleepers = new Set<() => void>();

  get stopped(): boolean {
    return this.stoppedFlag;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.stoppedFlag) return resolve();
      const done = (): void => {
        clearTimeout(t);
        this.sleepers.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.sleepers.add(done);
    });
  }

  stop(): void {
    this.stoppedFlag = true;
    for (const wakeUp of [...this.sleepers]) wakeUp();
  }
}
