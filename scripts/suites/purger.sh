#!/usr/bin/env bash
# purger: build, then vitest (unit tests + integration tests against real redis-server and
# varnishd instances that the tests start on free loopback ports).
set -euo pipefail
cd "$(dirname "$0")/../../purger"
if [[ ! -d node_modules || package-lock.json -nt node_modules ]]; then
  npm ci --no-audit --no-fund
fi
npm run build
npx vitest run
