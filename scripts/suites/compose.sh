#!/usr/bin/env bash
# Static validation of docker-compose.yml (no Docker engine here): stack/compose-check.py.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
py=/usr/bin/python3; [[ -x $py ]] || py=python3
exec "$py" stack/compose-check.py
