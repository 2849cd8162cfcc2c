#!/usr/bin/env bash
# purger: build, then vitest (unit tests + integration tests against real redis-server and
# varnishd instances that the tests start on free loopback ports); vitest reports the files and
# tests that passed and failed, and exits non-zero when one failed.
set -uo pipefail
cd "$(dirname "$0")/../../purger" || exit 1
if [[ ! -d node_modules || package-lock.json -nt node_modules ]]; then
  npm ci --no-audit --no-fund || exit 1
fi
[[ -d ../testkit/node_modules ]] || npm --prefix ../testkit ci --no-audit --no-fund || exit 1   # the tests' signer
npm run build || exit 1
exec npx vitest run
