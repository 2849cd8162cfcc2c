#!/usr/bin/env bash
# The generated blocks of README.md and docs/benchmarks.md match the published results files: figures are regenerated
# by make publish-results (bench/report.py, scripts/figures.py), never typed by hand.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
python3 bench/report.py --check || exit 1
python3 scripts/figures.py --check || exit 1
echo "docs: README figures match the results files"
