#!/usr/bin/env bash
# varnishd -C over every entry VCL, as each consumer loads it; all are rendered from
# vcl/entry.vcl.in by vcl/render-entry.sh:
#   - vcl/default.vcl as shipped, which must be the template's rendering with compose's values
#     (DEFAULT_VCL_ARGS). Its backend is the compose service "wordpress", which the VCL
#     compiler resolves; outside compose the name is given to it in a private mount namespace
#     (unshare: a copy of /etc/hosts plus "127.0.0.1 wordpress" bind-mounted over /etc/hosts for
#     this one command; the machine's /etc/hosts is untouched).
#   - an entry like the native stack's and the tests' (stack/render-config.sh, testkit/varnish.mjs):
#     loopback, a token file;
#   - bench's pure-microcache entry (+ bench/microcache-only.vcl) and its minimal Varnish
#     (--minimal + bench/minimal-varnish.vcl), the reference of make bench's hot path.
# Every file under vcl/microcache/ must be included by microcache.vcl or default.vcl, or be an opt-in
# the compose image's entry point includes (--include microcache/<file> in stack/images/varnish/start.sh)
# or vcl/render-entry.sh includes for a flag of its own (--purge-listener: microcache/purge-listener.vcl).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d)
chmod 755 "$tmp"   # the VCL compiler runs as the unprivileged varnish user
trap 'rm -rf "$tmp"' EXIT
vcl_path="$PWD/vcl:/usr/share/varnish/vcl"
n=0 bad=0
problem() { echo "lint vcl: $*"; bad=$((bad + 1)); }
# vcl/default.vcl is this rendering: the compose demo's service "wordpress", loopback as purgers,
# the token docker compose mounts (compose's Varnish renders its own when it starts, from its
# settings and with the network it shares with the purger: stack/images/varnish/start.sh).
DEFAULT_VCL_ARGS=(--backend wordpress:8081 --token-file /run/secrets/varnish_purge_token --purgers "127.0.0.1 ::1")

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

if ! vcl/render-entry.sh "${DEFAULT_VCL_ARGS[@]}" >"$tmp/default.vcl"; then
  problem "vcl/render-entry.sh cannot render vcl/default.vcl"
elif ! diff -u vcl/default.vcl "$tmp/default.vcl" >"$tmp/diff"; then
  problem "vcl/default.vcl is not vcl/entry.vcl.in's rendering; render it again with:"
  sed -n 's/^#   \(vcl\/render-entry.sh .*\)/  \1 >vcl\/default.vcl/p' "$tmp/default.vcl"
  head -n 40 "$tmp/diff"
fi

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
chmod 644 "$tmp/token"
vcl/render-entry.sh --backend 127.0.0.1:8081 --token-file "$tmp/token" >"$tmp/stack.vcl" || problem "vcl/render-entry.sh failed"
compile "the native stack's entry (loopback, a token file)" "$tmp/stack.vcl"
# Compose's Varnish behind its TLS front (stack/images/varnish/start.sh with SITE_SCHEME=https).
vcl/render-entry.sh --backend 127.0.0.1:8081 --token-file "$tmp/token" --probe-host blog.example.test --probe-https \
  --include microcache/https-redirect.vcl >"$tmp/https.vcl" || problem "vcl/render-entry.sh --include microcache/https-redirect.vcl failed"
compile "compose's entry behind the TLS front (+ microcache/https-redirect.vcl)" "$tmp/https.vcl"
# The image's entry with PURGE_PORT (render-entry.sh --purge-listener), behind the TLS front too.
vcl/render-entry.sh --backend 127.0.0.1:8081 --token-file "$tmp/token" --purge-listener --probe-host blog.example.test --probe-https \
  --include microcache/https-redirect.vcl >"$tmp/purge.vcl" || problem "vcl/render-entry.sh --purge-listener failed"
compile "the image's entry with PURGE_PORT (+ microcache/purge-listener.vcl, microcache/https-redirect.vcl)" "$tmp/purge.vcl"
STACK_DIR=$tmp/stack bench/varnish-microcache.sh vcl full >"$tmp/bench.vcl" || problem "bench/varnish-microcache.sh vcl full failed"
compile "bench's entry (+ bench/microcache-only.vcl)" "$tmp/bench.vcl"
STACK_DIR=$tmp/stack bench/varnish-microcache.sh vcl minimal >"$tmp/bench-minimal.vcl" || problem "bench/varnish-microcache.sh vcl minimal failed"
compile "bench's minimal Varnish (bench/minimal-varnish.vcl)" "$tmp/bench-minimal.vcl"

for f in vcl/microcache/*.vcl; do
  grep -Eq "^include \"(\./)?microcache/${f##*/}\";" vcl/microcache.vcl vcl/default.vcl ||
    grep -Fq -- "--include microcache/${f##*/}" stack/images/varnish/start.sh ||
    grep -Fq -- "include \"microcache/${f##*/}\";" vcl/render-entry.sh ||
    problem "$f is included by neither vcl/microcache.vcl nor vcl/default.vcl, nor opted into by stack/images/varnish/start.sh or a flag of vcl/render-entry.sh"
done

features=(vcl/microcache/*.vcl)
echo "lint vcl: $n entry VCLs (default.vcl, the native stack's, compose's two, bench's two) over ${#features[@]} feature files, $bad problems"
((bad == 0))
