#!/usr/bin/env node
// Runs reliability checks against the native stack that reliability/run.sh started, as node:test
// tests (one per check, in order):
//   node reliability/run.mjs quick|chaos CHECK...   (CHECK = faults/origin-down, hostile/edge-acl, …)
// quick = shortened durations for `make test`; chaos = the durations of the issue.
// Each check's figures are printed and written with the results to <mode>.json (run.sh says
// where); node:test reports what passed and failed.
import { after, test } from 'node:test';
import { stackEnv, writeResult } from './lib/common.mjs';

const [mode, ...checks] = process.argv.slice(2);
if (!['quick', 'chaos'].includes(mode) || checks.length === 0) {
  console.error('usage: run.mjs quick|chaos CHECK...');
  process.exit(2);
}
const env = stackEnv();
const ctx = { env, mode, quick: mode === 'quick', appPassword: process.env.REL_APP_PASSWORD, log: (...a) => console.log('  ', ...a) };

const results = [];
for (const name of checks) {
  const mod = await import(`./${name}.mjs`);
  test(`${name}: ${mod.title}`, async () => {
    const t0 = Date.now();
    const entry = { check: name, title: mod.title, pass: false };
    results.push(entry);
    try {
      entry.figures = await mod.run(ctx);
      entry.pass = true;
      if (entry.figures) console.log(`   figures: ${JSON.stringify(entry.figures)}`);
    } catch (e) {
      entry.error = e.message;
      throw e;
    } finally {
      entry.seconds = Math.round((Date.now() - t0) / 100) / 10;
    }
  });
}

after(() => {
  const passed = results.filter((r) => r.pass).length;
  const file = writeResult(env.repo, process.env.REL_RESULT_NAME || mode, { mode, finishedAt: new Date().toISOString(), passed, failed: results.length - passed, results });
  console.log(`\nresults: ${file}`);
});
