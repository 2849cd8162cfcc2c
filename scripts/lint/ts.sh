#!/usr/bin/env bash
# The purger's TypeScript: tsc --noEmit over the sources and the tests (tsconfig.check.json).
set -uo pipefail
cd "$(dirname "$0")/../../purger" || exit 1
[[ -d node_modules ]] || npm ci --no-audit --no-fund --loglevel=error || exit 1
npx tsc -p tsconfig.check.json
rc=$?
echo "lint ts: tsc --noEmit $( ((rc == 0)) && echo clean || echo FAILED)"
exit "$rc"
