#!/usr/bin/env bash
# Runs the named suites (scripts/suites/<name>.sh), keeps going after a failure,
# and ends with one summary line per suite and a total.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

declare -a rows
pass=0 fail=0
for suite in "$@"; do
  script="scripts/suites/$suite.sh"
  [[ -x $script ]] || { echo "run-suites: no suite '$suite' ($script)"; rows+=("FAIL  $suite (missing)"); fail=$((fail + 1)); continue; }
  echo "════ suite: $suite"
  start=$SECONDS
  if "$script"; then
    rows+=("PASS  $suite ($((SECONDS - start)) s)"); pass=$((pass + 1))
  else
    rows+=("FAIL  $suite ($((SECONDS - start)) s)"); fail=$((fail + 1))
  fi
done

echo "════ summary"
printf '%s\n' "${rows[@]}"
echo "suites: $pass passed, $fail failed"
((fail == 0))
