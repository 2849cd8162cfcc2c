#!/usr/bin/env bash
# Compose suite (make test-compose): the static checks of docker-compose.yml (pytest over
# tests/compose/test_compose.py: images built from debian:trixie-slim only, tags within
# platforms.json, loopback ports, secrets as files, least privilege), then the stack for real
# (tests/compose/live-test.sh: build, up --wait, e2e, audit, k6 smoke, two nodes, down -v), then the
# edge alone in front of a stock WordPress by the README's own commands (tests/compose/own-site-test.sh).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# make test-compose runs without make test's install step: Docker, compose v2, Node.js and the
# rest come from it here when they are missing.
if ! command -v dockerd >/dev/null || ! docker compose version >/dev/null 2>&1 || ! command -v node >/dev/null; then
  scripts/install-deps.sh --platforms || exit 1
fi
py=/usr/bin/python3; [[ -x $py ]] || py=python3
rc=0
PYTHONDONTWRITEBYTECODE=1 "$py" -m pytest -q -p no:cacheprovider tests/compose/test_compose.py || rc=1
tests/compose/live-test.sh || rc=1
tests/compose/own-site-test.sh || rc=1
exit $rc
