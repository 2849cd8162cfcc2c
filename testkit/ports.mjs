// Free loopback TCP ports for test servers: the one way every suite picks its ports (shell and
// PHP through bin/free-port.mjs).
import net from 'node:net';

/** N distinct free ports on 127.0.0.1: all held open together, then released. */
export async function freePorts(n) {
  const servers = [];
  try {
    for (let i = 0; i < n; i++) {
      const s = net.createServer();
      servers.push(s);
      await new Promise((res, rej) => { s.once('error', rej); s.listen(0, '127.0.0.1', res); });
    }
    return servers.map((s) => s.address().port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => (s.listening ? s.close(r) : r()))));
  }
}

/** One free port on 127.0.0.1. */
export async function freePort() {
  return (await freePorts(1))[0];
}
