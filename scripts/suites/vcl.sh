#!/usr/bin/env bash
# The VCL suite: varnishtest over vcl/tests in parallel (each .vtc starts its own varnishd and
# servers and entry VCL including the shipped vcl/microcache.vcl). That every VCL compiles is
# checked earlier, by make lint (scripts/lint/vcl.sh).
set -uo pipefail
cd "$(dirname "$0")/../../vcl/tests" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tests=(*.vtc)
varnishtest -k -j 8 -q "${tests[@]}" 2>&1 | tee "$tmp/out"
rc=${PIPESTATUS[0]}
failed=$(grep -c '^#.*TEST .* FAILED' "$tmp/out")
echo "vcl: $((${#tests[@]} - failed)) passed, $failed failed"
exit "$rc"
