// Varnish in front of the test WordPress, as the edge: testkit's Varnish (the shipped VCL,
// vcl/microcache.vcl, in the entry vcl/render-entry.sh renders) with the site's `php -S` as its
// backend. Env: BACKEND (host:port of the site), PURGERS (the entry's `acl purgers`; unset: the
// default "127.0.0.1 ::1", so this machine is a trusted client that sees X-Varnish and Age;
// "192.0.2.1": this machine is an outsider, who sees neither). Prints one JSON line {port} (or
// {error}); varnishd stops when stdin closes (the test ended, or PHPUnit died).
import { createInterface } from 'node:readline';
import { Varnish } from '../../../testkit/varnish.mjs';

let varnish;
let closing = false;
const close = async () => {
  if (closing) return;
  closing = true;
  if (varnish) await varnish.destroy();
  process.exit(0);
};
try {
  varnish = await Varnish.start({ backend: process.env.BACKEND, purgers: process.env.PURGERS || undefined });
  console.log(JSON.stringify({ port: varnish.port }));
} catch (err) {
  console.log(JSON.stringify({ error: String(err?.stack ?? err) }));
  await close();
}
createInterface({ input: process.stdin }).on('close', close);
process.on('SIGTERM', close);
