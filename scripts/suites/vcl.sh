#!/usr/bin/env bash
# The VCL suite: default.vcl compiles, then varnishtest over vcl/tests in parallel
# (each .vtc starts its own varnishd and servers, loading the shipped microcache.vcl).
set -uo pipefail
cd "$(dirname "$0")/../../vcl"

# default.vcl names the compose service "wordpress", which does not resolve here.
tmp=$(mktemp -d)
chmod 755 "$tmp"   # the VCL compiler runs as the unprivileged varnish user
trap 'rm -rf "$tmp"' EXIT
sed 's/\.host = "wordpress";/.host = "127.0.0.1";/' default.vcl > "$tmp/default.vcl"
if ! varnishd -C -p vcl_path="$PWD" -f "$tmp/default.vcl" > /dev/null 2> "$tmp/vcc.err"; then
  tail -n 20 "$tmp/vcc.err"
  echo "vcl: default.vcl does not compile"
  exit 1
fi

cd tests
tests=(*.vtc)
varnishtest -k -j 8 -q "${tests[@]}" 2>&1 | tee "$tmp/out"
rc=${PIPESTATUS[0]}
failed=$(grep -c '^#.*TEST .* FAILED' "$tmp/out")
echo "vcl: $((${#tests[@]} - failed)) passed, $failed failed"
exit "$rc"
