#!/usr/bin/env bash
# TypeScript and JavaScript: tsc --noEmit over the purger and its tests (tsconfig.check.json),
# then Biome's lint rules over every TS/JS file of the repository (biome.jsonc), then every
# relative import names a file that exists (relative-imports.mjs: Biome does not resolve paths).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
[[ -d purger/node_modules ]] || npm --prefix purger ci --no-audit --no-fund --loglevel=error || exit 1
rc=0
(cd purger && npx tsc -p tsconfig.check.json) || rc=1
purger/node_modules/.bin/biome lint --error-on-warnings --no-errors-on-unmatched . || rc=1
node scripts/lint/relative-imports.mjs || rc=1
echo "lint ts: tsc --noEmit, biome and relative imports $( ((rc == 0)) && echo clean || echo FAILED)"
exit "$rc"
