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
# cc_command: each test compiles its VCL, and gcc -g -O2 on microcache.vcl's generated C was most
# of the suite's CPU; -O0 without debug info is a fraction of it. The optimisation level changes
# how fast the VCL runs, not what it does; the purger, e2e, reliability and bench suites run
# varnishd with its own default.
# The compiler: the first of cc, gcc and <arch>-linux-gnu-gcc where varnishd runs (the images have
# only the last, the one their varnishd's default names).
compiler=$("${run[@]}" sh -c 'for c in cc gcc "$(uname -m)-linux-gnu-gcc"; do command -v "$c" && exit; done; exit 1') ||
  { echo "vcl: no C compiler (cc, gcc) where varnishd runs: varnishd needs one to load VCL" >&2; exit 1; }
cc="exec $compiler -O0 -Wall -Werror -Wno-error=unused-result -pthread -fpic -shared -Wl,-x -o %o %s"
exec "${run[@]}" varnishtest -k -j 8 -t 300 -p "cc_command='$cc'" ./*.vtc
