#!/usr/bin/env bash
# purger: build, then vitest (unit tests + integration tests against real redis-server and
# varnishd instances that the tests start on free loopback ports).
set -uo pipefail
cd "$(dirname "$0")/../../purger" || exit 1
if [[ ! -d node_modules || package-lock.json -nt node_modules ]]; then
  npm ci --no-audit --no-fund || exit 1
fi
[[ -d ../testkit/node_modules ]] || npm --prefix ../testkit ci --no-audit --no-fund || exit 1   # the tests' signer
npm run build || exit 1
report=$(mktemp)
npx vitest run --reporter=default --reporter=json --outputFile.json="$report"
rc=$?
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(`purger: ${r.numPassedTests} passed, ${r.numFailedTests} failed`);
' "$report" 2>/dev/null || echo "purger: 0 passed, 1 failed"
rm -f "$report"
exit "$rc"
