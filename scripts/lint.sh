#!/usr/bin/env bash
# make lint: every linter of the repository (scripts/lint/<name>.sh: shell, php, ts, vcl), fast,
# before the suites of `make test`. Keeps going after a finding; exits non-zero if any had one.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
fail=0
for lint in scripts/lint/*.sh; do
  "$lint" || fail=1
done
((fail == 0)) && echo "lint: clean" || echo "lint: FAILED"
exit "$fail"
