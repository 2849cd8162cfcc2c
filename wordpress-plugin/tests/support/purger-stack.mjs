// A real purger for the plugin's tests: testkit's Redis + Varnish nodes + the built purger
// (purger/dist), accepting the test site with a secret bound to it. Env: SITE (host:port),
// SECRET (whsec_…), NAMESPACE (the site's key namespace), NODES (default 1), ALLOWED_SITE (another
// host: PURGER_SITES holds only that one, and the secret is bound to no site, so the test site
// gets the 403 of a host outside PURGER_SITES). Prints one JSON line
// {url, nodes}, then obeys lines on stdin: "stop <i>" / "start <i>" stop or start node i and
// answer "ok". Everything stops when stdin closes (the test ended, or PHPUnit died).
import { createInterface } from 'node:readline';
import { PurgerStack } from '../../../testkit/purger-stack.mjs';
import { freePort } from '../../../testkit/ports.mjs';

const site = process.env.SITE;
const allowed = process.env.ALLOWED_SITE || site;
const stack = await PurgerStack.start({
  nodes: Number(process.env.NODES ?? 1),
  env: {
    PURGER_SITES: allowed,
    PURGER_WEBHOOK_SECRETS: allowed === site ? `${site}=${process.env.SECRET}` : process.env.SECRET,
    PURGER_TAG_PREFIXES: `${allowed}=${process.env.NAMESPACE}`,
  },
});
let closing = false;
const close = async () => {
  if (closing) return;
  closing = true;
  await stack.close();
  process.exit(0);
};
try {
  const port = await freePort();
  const purger = await stack.spawn({ PURGER_PORT: String(port) }).ready();
  console.log(JSON.stringify({ url: purger.url, nodes: stack.varnishes.map((v) => v.node) }));
} catch (err) {
  console.log(JSON.stringify({ error: String(err?.stack ?? err) }));
  await close();
}
const lines = createInterface({ input: process.stdin });
lines.on('line', async (line) => {
  const [command, index] = line.trim().split(' ');
  const node = stack.varnishes[Number(index)];
  if (node && command === 'stop') await node.stop();
  else if (node && command === 'start') await node.start();
  console.log(node && (command === 'stop' || command === 'start') ? 'ok' : `unknown command: ${line}`);
});
lines.on('close', close);
process.on('SIGTERM', close);
