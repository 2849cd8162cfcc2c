#!/usr/bin/env node
// free-port.mjs [N]: prints N (default 1) distinct free loopback TCP ports, space-separated, for
// the shell suites (testkit/stack.sh free_ports) and the plugin's PHP tests.
import { freePorts } from '../ports.mjs';

const n = Number(process.argv[2] ?? 1);
if (!Number.isInteger(n) || n < 1 || n > 64) {
  console.error('usage: free-port.mjs [N]   (1 to 64 ports)');
  process.exit(2);
}
console.log((await freePorts(n)).join(' '));
