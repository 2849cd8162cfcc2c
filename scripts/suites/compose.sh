#!/usr/bin/env bash
# Static validation of docker-compose.yml (no Docker engine here): pytest over
# stack/compose/test_compose.py, one test per check plus the broken copies that must fail.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
py=/usr/bin/python3; [[ -x $py ]] || py=python3
PYTHONDONTWRITEBYTECODE=1 exec "$py" -m pytest -v -p no:cacheprovider stack/compose/test_compose.py
