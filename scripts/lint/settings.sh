#!/usr/bin/env bash
# The stacks' settings and secrets against their one list, stack/settings.table: .env.example is
# its rendering, stack/lib.sh's and docker-compose.yml's defaults are its defaults. Then the
# purger's settings against their one declaration, purger/src/config/settings.ts: purger/README.md's
# table is its rendering, and the table's purger rows name its settings with its defaults.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
rc=0
stack/compose/check-env.sh || rc=1
[[ -d purger/node_modules ]] || npm --prefix purger ci --no-audit --no-fund --loglevel=error || exit 1
(cd purger && node_modules/.bin/tsx scripts/settings-table.ts) || rc=1
exit "$rc"
