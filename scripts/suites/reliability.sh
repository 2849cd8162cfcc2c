#!/usr/bin/env bash
# Reliability suite (short): faults with shortened durations, hostile input end to end and a
# bounded schemathesis fuzz run, against the native stack started in a temporary directory.
# The full-length faults are `make chaos`, the ten-minute soak `make soak` (docs/reliability.md).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
exec reliability/run.sh quick
