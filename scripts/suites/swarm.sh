#!/usr/bin/env bash
# Swarm suite (make test-swarm): deploy/topology.yml against docker-compose.yml, the Swarm stack
# file and the Helm chart as `helm template` renders it (tests/deploy/test_topology.py), then the
# stack for real on a swarm of four Docker engines on this machine (tests/swarm/swarm-test.sh:
# edits fresh on every Varnish task, scaling 2 → 4, a drained node, a Valkey failover, an engine
# killed mid-burst; figures in .results/swarm/).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# make test-swarm runs without make test's install step: Docker, compose v2, helm and the rest
# come from it here when they are missing.
if ! command -v dockerd >/dev/null || ! docker compose version >/dev/null 2>&1 || ! command -v node >/dev/null ||
  ! { command -v helm >/dev/null || [[ -x $HOME/go/bin/helm ]]; }; then
  scripts/install-deps.sh --platforms || exit 1
fi
py=/usr/bin/python3; [[ -x $py ]] || py=python3
rc=0
PYTHONDONTWRITEBYTECODE=1 "$py" -m pytest -q -p no:cacheprovider tests/deploy/test_topology.py || rc=1
tests/swarm/swarm-test.sh || rc=1
exit $rc
