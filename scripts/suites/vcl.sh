#!/usr/bin/env bash
# varnishtest over vcl/tests, in parallel; each .vtc starts its own varnishd and servers.
set -uo pipefail
cd "$(dirname "$0")/../../vcl/tests"
tests=(*.vtc)
out=$(mktemp)
varnishtest -k -j 4 -q "${tests[@]}" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
failed=$(grep -c '^#.*TEST .* FAILED' "$out" || true)
rm -f "$out"
echo "vcl: $((${#tests[@]} - failed)) passed, $failed failed"
exit "$rc"
