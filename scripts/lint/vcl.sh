#!/usr/bin/env bash
# varnishd -C over every VCL: vcl/default.vcl as shipped (its compose backend host "wordpress"
# pointed at loopback, which is all that needs a name resolver), vcl/microcache.vcl and
# bench/microcache-only.vcl through the smallest entry VCL that includes them.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d)
chmod 755 "$tmp"   # the VCL compiler runs as the unprivileged varnish user
trap 'rm -rf "$tmp"' EXIT
sed 's/\.host = "wordpress";/.host = "127.0.0.1";/' vcl/default.vcl >"$tmp/default.vcl"
cat >"$tmp/microcache-entry.vcl" <<VCL
vcl 4.1;
backend default { .host = "127.0.0.1"; .port = "80"; }
acl purgers { "127.0.0.1"; }
include "$PWD/bench/microcache-only.vcl";
include "microcache.vcl";
VCL
n=0 bad=0
for entry in "$tmp/default.vcl" "$tmp/microcache-entry.vcl"; do
  n=$((n + 1))
  if ! varnishd -C -p vcl_path="$PWD/vcl:/usr/share/varnish/vcl" -f "$entry" >/dev/null 2>"$tmp/err"; then
    echo "lint vcl: $(basename "$entry") does not compile:"; tail -n 15 "$tmp/err"; bad=$((bad + 1))
  fi
done
echo "lint vcl: $n entry VCLs (default.vcl, microcache.vcl, bench/microcache-only.vcl), $bad problems"
((bad == 0))
