#!/usr/bin/env bash
# make bench-cache-size: what one edit costs Varnish as its cache grows (1k, 10k, 100k pages):
# edit → fresh at the edge and Varnish CPU per edit, plus a bulk action (~7 KB of keys), with
# the shipped VCL, Redis and the built purger in front of a synthetic origin
# (bench/cache-size.mjs says how). Settings: BENCH_CACHE_SIZES (1000,10000,100000),
# BENCH_CACHE_EDITS (30), BENCH_BULK_BYTES (7000), BENCH_BULK_REPEATS (3),
# BENCH_FRESH_LIMIT_MS (10000), BENCH_FILL_CONCURRENCY (32). Writes .results/bench/cache-size.json
# (gitignored; `make publish-results` copies it to bench/cache-size.json). One to two minutes; a
# record, not a test: it fails only when it could not run.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export PATH=$PATH:/usr/sbin   # varnishd
for tool in varnishd varnishstat redis-server node; do
  command -v "$tool" >/dev/null || { echo "cache-size: $tool not found (make deps)" >&2; exit 1; }
done
[[ -d testkit/node_modules ]] || npm --prefix testkit ci --no-audit --no-fund --loglevel=error || exit 1
[[ -d purger/node_modules ]] || npm --prefix purger ci --no-audit --no-fund --loglevel=error || exit 1
(cd purger && npm run --silent build) || { echo "cache-size: the purger does not build" >&2; exit 1; }
exec node bench/cache-size.mjs
