#!/usr/bin/env bash
# fuzz/run.sh: the schemathesis fuzz run (test_purger_openapi.py) against the stack's purger.
# Needs the stack's environment (STACK_DIR, PURGER_PORT, REDIS_PORT, SITE_HOST), as run.sh sets
# it. Installs the pinned requirements into reliability/.venv (gitignored) when missing; never
# into the system Python. FUZZ_EXAMPLES=N sets the examples per operation (default 150).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=$here/../.venv
req=$here/requirements.txt
if [[ ! -x $venv/bin/python ]] || ! cmp -s "$req" "$venv/requirements.installed"; then
  echo "fuzz: installing $(grep -c . "$req") pinned packages into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$req"
  cp "$req" "$venv/requirements.installed"
fi
set -a
# shellcheck disable=SC1091
source "$STACK_DIR/secrets.env"
set +a
results=${REL_RESULTS_DIR:-$here/../../.results/reliability}
mkdir -p "$results"
FUZZ_PURGER_URL=http://127.0.0.1:$PURGER_PORT FUZZ_SITE=$SITE_HOST FUZZ_SECRET=$WEBHOOK_SECRET \
FUZZ_TOKEN=$OPERATOR_TOKEN FUZZ_REDIS_PORT=$REDIS_PORT FUZZ_REDIS_AUTH=$REDIS_PASSWORD \
FUZZ_FIGURES=${FUZZ_FIGURES:-$results/fuzz.json} \
  timeout 900 "$venv/bin/python" -m pytest -q -p no:cacheprovider -s --rootdir "$here" "$here/test_purger_openapi.py"
