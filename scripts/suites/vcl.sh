#!/usr/bin/env bash
# The VCL suite: varnishtest over vcl/tests in parallel (each .vtc starts its own varnishd and
# servers and entry VCL including the shipped vcl/microcache.vcl). That every VCL compiles is
# checked earlier, by make lint (scripts/lint/vcl.sh).
# VARNISH_IMAGE=varnish-edge/varnish:7.7 runs the same tests with that image's varnishtest and
# varnishd, the repository mounted read-only (scripts/platforms.sh builds the images).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run=()
[[ -n ${VARNISH_IMAGE:-} ]] && run=(docker run --rm -v "$PWD:/src:ro" -w /src/vcl/tests "$VARNISH_IMAGE")
cd vcl/tests || exit 1
tests=(*.vtc)
version=$("${run[@]}" varnishd -V 2>&1 | head -n 1)
"${run[@]}" varnishtest -k -j 8 -q "${tests[@]}" 2>&1 | tee "$tmp/out"
rc=${PIPESTATUS[0]}
failed=$(grep -c '^#.*TEST .* FAILED' "$tmp/out")
echo "vcl: $((${#tests[@]} - failed)) passed, $failed failed ($version)"
exit "$rc"
