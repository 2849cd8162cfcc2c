#!/usr/bin/env bash
# varnishd -C over every VCL, as each consumer loads it, without editing any of them:
#   - vcl/default.vcl as shipped. Its backend is the compose service "wordpress", which the VCL
#     compiler resolves; outside compose the name is given to it in a private mount namespace
#     (unshare: a copy of /etc/hosts plus "127.0.0.1 wordpress" bind-mounted over /etc/hosts for
#     this one command; the machine's /etc/hosts is untouched).
#   - the native stack's entry (stack/native-vcl.sh), which also includes microcache/sick-origin.vcl;
#   - bench's pure-microcache entry (the same plus bench/microcache-only.vcl);
#   - the smallest entry: a backend, acl purgers, include "microcache.vcl";
#   - bench's minimal Varnish (bench/minimal-varnish.vcl), the reference of make bench's hot path.
# Every file under vcl/microcache/ must be included by microcache.vcl or default.vcl, and the
# native stack's backends (probe, unprobed twin, timeouts) must be default.vcl's but for the address.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d)
chmod 755 "$tmp"   # the VCL compiler runs as the unprivileged varnish user
trap 'rm -rf "$tmp"' EXIT
vcl_path="$PWD/vcl:/usr/share/varnish/vcl"
n=0 bad=0
problem() { echo "lint vcl: $*"; bad=$((bad + 1)); }

compile() { # compile NAME FILE [WRAPPER...]: varnishd -C, run through WRAPPER when given
  local name=$1 file=$2
  shift 2
  n=$((n + 1))
  if ! "$@" varnishd -C "${jail[@]}" -p vcl_path="$vcl_path" -f "$file" >/dev/null 2>"$tmp/err"; then
    problem "$name does not compile:"
    grep -v '^Could not delete' "$tmp/err" | tail -n 15
  fi
}
jail=()

# Runs "$@" where the name "wordpress" resolves to 127.0.0.1.
with_wordpress_host() {
  { cat /etc/hosts; echo "127.0.0.1 wordpress"; } >"$tmp/hosts"
  chmod 644 "$tmp/hosts"
  # shellcheck disable=SC2016 # $1 and $@ belong to the inner shell
  unshare "${ns[@]}" sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh "$tmp/hosts" "$@"
}

if getent hosts wordpress >/dev/null; then
  compile "vcl/default.vcl" "$PWD/vcl/default.vcl"
elif ! command -v unshare >/dev/null; then
  problem "cannot compile vcl/default.vcl: 'wordpress' does not resolve and unshare (util-linux) is missing"
else
  ns=(--mount)
  # Without real root: a user namespace, where the jail cannot switch to the varnish user.
  ((EUID == 0)) || { ns=(--map-root-user --mount); jail=(-j none); }
  compile "vcl/default.vcl" "$PWD/vcl/default.vcl" with_wordpress_host
  jail=()
fi

printf 'tok-0123456789abcdef\n' >"$tmp/token"
stack/native-vcl.sh 127.0.0.1 80 "$tmp/token" >"$tmp/stack.vcl" || problem "stack/native-vcl.sh failed"
compile "the native stack's entry (stack/native-vcl.sh)" "$tmp/stack.vcl"
STACK_DIR=$tmp/stack bench/varnish-microcache.sh vcl full >"$tmp/bench.vcl" || problem "bench/varnish-microcache.sh vcl full failed"
compile "bench's entry (+ bench/microcache-only.vcl)" "$tmp/bench.vcl"
cat >"$tmp/minimal.vcl" <<'VCL'
vcl 4.1;
backend default { .host = "127.0.0.1"; .port = "80"; }
acl purgers { "127.0.0.1"; }
include "microcache.vcl";
VCL
compile "the minimal entry (include \"microcache.vcl\")" "$tmp/minimal.vcl"
STACK_DIR=$tmp/stack bench/varnish-microcache.sh vcl minimal >"$tmp/bench-minimal.vcl" || problem "bench/varnish-microcache.sh vcl minimal failed"
compile "bench's minimal Varnish (bench/minimal-varnish.vcl)" "$tmp/bench-minimal.vcl"

# The native stack's backends are default.vcl's (probe, twin, timeouts) but for the address.
backends() { awk '/^backend /{on=1} on && !/^[[:space:]]*#/ && !/\.(host|port)[[:space:]]*=/{print} on && /^}/{on=0}' "$1"; }
diff <(backends vcl/default.vcl) <(backends "$tmp/stack.vcl") >"$tmp/diff" ||
  { problem "stack/native-vcl.sh's backends differ from vcl/default.vcl's (besides .host/.port):"; cat "$tmp/diff"; }

for f in vcl/microcache/*.vcl; do
  grep -Eq "^include \"(\./)?microcache/${f##*/}\";" vcl/microcache.vcl vcl/default.vcl ||
    problem "$f is included by neither vcl/microcache.vcl nor vcl/default.vcl"
done

features=(vcl/microcache/*.vcl)
echo "lint vcl: $n entry VCLs (default.vcl, the native stack's, bench's two, the minimal one) over ${#features[@]} feature files, $bad problems"
((bad == 0))
