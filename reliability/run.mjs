#!/usr/bin/env node
// Runs reliability checks against the native stack that reliability/run.sh started.
//   node reliability/run.mjs quick|chaos CHECK...   (CHECK = faults/origin-down, hostile/edge-acl, …)
// quick = shortened durations for `make test`; chaos = the durations of the issue.
// Prints PASS/FAIL and figures per check, writes reliability/results/<mode>.json, and ends
// with "reliability: N passed, M failed".
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
  console.log(`\n── ${name}: ${mod.title}`);
  const t0 = Date.now();
  let figures;
  let error;
  try {
    figures = await mod.run(ctx);
  } catch (e) {
    error = e.message;
  }
  const seconds = Math.round((Date.now() - t0) / 100) / 10;
  results.push({ check: name, title: mod.title, pass: !error, seconds, ...(error ? { error } : {}), figures });
  if (figures) console.log(`   figures: ${JSON.stringify(figures)}`);
  console.log(error ? `FAIL ${name}: ${error}` : `PASS ${name} (${seconds} s)`);
}

const passed = results.filter((r) => r.pass).length;
const file = writeResult(env.repo, process.env.REL_RESULT_NAME || mode, { mode, finishedAt: new Date().toISOString(), passed, failed: results.length - passed, results });
console.log(`\nresults: ${file}`);
console.log(`reliability: ${passed} passed, ${results.length - passed} failed`);
process.exit(passed === results.length ? 0 : 1);
