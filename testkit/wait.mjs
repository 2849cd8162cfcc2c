// Waiting in tests: the one polling loop, and whether a port accepts connections.
import net from 'node:net';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls fn until it returns something other than undefined, null or false, and returns that;
 * an exception counts as not yet. Throws after limitMs, naming `what` and the last error.
 */
export async function until(what, fn, limitMs = 20_000, everyMs = 50) {
  const end = Date.now() + limitMs;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== null && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`not within ${limitMs} ms: ${what}${last ? ` (${last.message ?? last})` : ''}`);
    await sleep(everyMs);
  }
}

/** Whether something accepts TCP connections on host:port. */
export function portOpen(port, host = '127.0.0.1') {
  return new Promise((res) => {
    const s = net.connect(port, host);
    s.once('connect', () => { s.destroy(); res(true); });
    s.once('error', () => res(false));
  });
}

/** Like until, but resolves to how many ms it took (freshness timings). */
export async function msUntil(what, fn, limitMs = 20_000, everyMs = 50) {
  const t0 = performance.now();
  await until(what, fn, limitMs, everyMs);
  return performance.now() - t0;
}
