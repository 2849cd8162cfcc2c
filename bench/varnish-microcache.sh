#!/usr/bin/env bash
# varnish-microcache.sh start|stop|vcl [FLAVOUR [NAME PORT]]: another varnishd in front of the same
# origin as the stack's own Varnish, started the same way (stack/launch/varnishd.sh: the same
# flags and parameters) and with the same storage ($VARNISH_STORAGE); the flavours differ only in
# their VCL. Its pid is in $RUN_DIR/NAME.pid, its work dir $STACK_DIR/NAME.
#   full     (default; NAME varnish-microcache on $MICROCACHE_VARNISH_PORT) the stack's entry VCL
#            (vcl/render-entry.sh) trusting no address, with bench/microcache-only.vcl (pure 1 s
#            microcache: Surrogate-Control ignored) and bench/debug-for-all.vcl (X-Cache for
#            everyone, for k6's hit counts) before vcl/microcache.vcl
#   quiet    the same without bench/debug-for-all.vcl: the VCL as a user runs it in pure
#            microcache mode; what bench/hit_path.py measures
#   product  the stack's entry trusting no address and nothing else: the plugin's long TTLs kept
#            fresh by purges, as `make up` serves a visitor
#   minimal  (NAME varnish-minimal on $MICROCACHE_MINIMAL_PORT) the same origin and
#            bench/minimal-varnish.vcl only (render-entry.sh --minimal), the reference a hit
#            through the full VCL is measured against
#   profiled quiet, its VCL compiled without inlining and with its symbols kept (cc_command), so
#            a profile (bench/hit-path.sh profile) names the mc_ subroutine a sample fell in
#   without:FEATURE[,FEATURE...]  quiet with the calls of those features removed (every
#            `call mc_FEATURE_...;` line of vcl/microcache.vcl, in a copy of vcl/ under the work
#            dir; varnishd's vcc_err_unref off for the subs left uncalled): bench/hit-path.sh
#            ablate, never a configuration to run
# Uses the stack's settings (STACK_DIR, WEB_PORT: stack/lib.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../stack/lib.sh"
usage() { die "usage: $0 start|stop|vcl [full|quiet|product|profiled|minimal|without:FEATURE,... [NAME PORT]]"; }
cmd=${1:-} flavour=${2:-full}
case $flavour in
  full) name=varnish-microcache port=${MICROCACHE_VARNISH_PORT:-} ;;
  minimal) name=varnish-minimal port=${MICROCACHE_MINIMAL_PORT:-} ;;
  quiet | product | profiled | without:?*) name=varnish-$flavour port="" ;;
  *) usage ;;
esac
name=${3:-$name} port=${4:-$port}
[[ $name =~ ^[a-z0-9:,_-]+$ ]] || die "NAME '$name': letters, digits, - _ , : only"
name=${name//[:,]/-}
workdir=$STACK_DIR/$name vcl=$CONF_DIR/$name.vcl
entry=(--backend "127.0.0.1:$WEB_PORT" --purgers "" --token-file "$CONF_DIR/varnish_purge_token")
extra=()

# The entry VCL: the origin at 127.0.0.1:$WEB_PORT, then the flavour's VCL.
entry_vcl() {
  case $flavour in
    full) "$STACK_REPO/vcl/render-entry.sh" "${entry[@]}" --include "$here/microcache-only.vcl" --include "$here/debug-for-all.vcl" ;;
    quiet | profiled | without:*) "$STACK_REPO/vcl/render-entry.sh" "${entry[@]}" --include "$here/microcache-only.vcl" ;;
    product) "$STACK_REPO/vcl/render-entry.sh" "${entry[@]}" ;;
    minimal) "$STACK_REPO/vcl/render-entry.sh" --minimal --backend "127.0.0.1:$WEB_PORT" --include "$here/minimal-varnish.vcl" ;;
  esac
}

# without:F1,F2: a copy of vcl/ whose microcache.vcl calls none of F1's and F2's subs.
vcl_without() {
  local copy=$workdir/vcl f
  rm -rf "$copy"; mkdir -p "$workdir"; cp -r "$STACK_REPO/vcl" "$copy"
  IFS=, read -ra features <<<"${flavour#without:}"
  for f in "${features[@]}"; do
    [[ $f =~ ^[a-z0-9_]+$ ]] || die "feature '$f': a name like grace or refresh (the mc_<feature>_ of its subs)"
    grep -q "call mc_${f}_" "$copy/microcache.vcl" || die "vcl/microcache.vcl calls no mc_${f}_ sub"
    sed -i "/call mc_${f}_[a-z_]*;/d" "$copy/microcache.vcl"
  done
  export VARNISH_VCL_DIR=$copy
  extra=(-p vcc_err_unref=off)
}

case $cmd in
vcl) entry_vcl ;;   # for scripts/lint/vcl.sh
start)
  is_running "$name" && exit 0
  [[ -n $port ]] || die "the $flavour flavour needs NAME PORT (or its port variable)"
  require_free_port "$port" "port of $name"
  mkdir -p "$workdir" "$CONF_DIR" "$RUN_DIR" "$LOG_DIR"
  [[ $flavour == without:* ]] && vcl_without
  [[ $flavour == profiled ]] &&
    extra=(-p "cc_command=exec ${CC:-cc} -g -O2 -fno-inline -fno-omit-frame-pointer -Wall -Werror -Wno-error=unused-result -pthread -fpic -shared -o %o %s")
  entry_vcl >"$vcl.tmp" || die "cannot write $vcl"
  mv "$vcl.tmp" "$vcl"
  chmod 644 "$vcl"
  "$STACK_REPO/stack/launch/varnishd.sh" -n "$workdir" -a "127.0.0.1:$port" -f "$vcl" "${extra[@]}" \
    -s "$VARNISH_STORAGE" -P "$RUN_DIR/$name.pid" >>"$LOG_DIR/$name.log" 2>&1 \
    || die "varnishd ($flavour) failed to start; see $LOG_DIR/$name.log"
  wait_until 30 "$flavour Varnish $name on port $port" port_busy "$port" || die "varnishd did not listen on $port"
  ;;
stop) stop_pid "$name" ;;
*) usage ;;
esac
