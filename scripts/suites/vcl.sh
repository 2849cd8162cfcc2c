#!/usr/bin/env bash
# The VCL suite: varnishtest over vcl/tests in parallel (each .vtc starts its own varnishd and
# servers and entry VCL including the shipped vcl/microcache.vcl); varnishtest reports each test
# ("passed" or "FAILED" with its log) and exits non-zero when one failed. That every VCL compiles
# is checked earlier, by make lint (scripts/lint/vcl.sh).
# VARNISH_IMAGE=varnish-edge/varnish:7.7 runs the same tests with that image's varnishtest and
# varnishd, the repository mounted read-only (scripts/platforms.sh builds the images).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
run=()
# --entrypoint "": the tools themselves, not the image's entry point (which renders compose's VCL).
[[ -n ${VARNISH_IMAGE:-} ]] && run=(docker run --rm --entrypoint "" -v "$PWD:/src:ro" -w /src/vcl/tests "$VARNISH_IMAGE")
cd vcl/tests || exit 1
echo "vcl: $("${run[@]}" varnishd -V 2>&1 | head -n 1)"
# -t 300: a test's own waits are short; the default 60 s limit on the whole test is what a busy
# machine (eight tests and their varnishds on two cores) ran past.
exec "${run[@]}" varnishtest -k -j 8 -t 300 ./*.vtc
