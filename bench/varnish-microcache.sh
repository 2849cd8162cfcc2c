#!/usr/bin/env bash
# varnish-microcache.sh start|stop|vcl [full|minimal]: another varnishd in pure microcache mode (1 s
# TTL, grace, coalescing; no purges needed) in front of the same origin as the stack's own
# Varnish, started the same way (stack/launch/varnishd.sh: the same flags and parameters) and with
# the same storage ($VARNISH_STORAGE). Both flavours differ only in their VCL. (Before the
# launcher they ran with Debian's default request-size limits and client workspace, not the
# stack's 32k/48k/128k; those bound how big a request may be, not how fast a hit is served.)
#   full     (default) on $MICROCACHE_VARNISH_PORT: the stack's entry VCL (vcl/render-entry.sh)
#            trusting no address, with bench/microcache-only.vcl included before vcl/microcache.vcl
#   minimal  on $MICROCACHE_MINIMAL_PORT: the same origin and bench/minimal-varnish.vcl only
#            (render-entry.sh --minimal), the reference a hot hit through the full VCL is measured
#            against
# Uses the stack's settings (STACK_DIR, WEB_PORT: stack/lib.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../stack/lib.sh"
flavour=${2:-full}
case $flavour in
  full) name=varnish-microcache port_var=MICROCACHE_VARNISH_PORT ;;
  minimal) name=varnish-minimal port_var=MICROCACHE_MINIMAL_PORT ;;
  *) die "usage: $0 start|stop|vcl [full|minimal]" ;;
esac
workdir=$STACK_DIR/$name vcl=$CONF_DIR/$name.vcl

# The entry VCL: the origin at 127.0.0.1:$WEB_PORT, then the flavour's VCL.
entry_vcl() {
  if [[ $flavour == full ]]; then
    "$STACK_REPO/vcl/render-entry.sh" --backend "127.0.0.1:$WEB_PORT" --purgers "" \
      --token-file "$CONF_DIR/varnish_purge_token" --include "$here/microcache-only.vcl"
  else
    "$STACK_REPO/vcl/render-entry.sh" --minimal --backend "127.0.0.1:$WEB_PORT" --include "$here/minimal-varnish.vcl"
  fi
}

case ${1:-} in
vcl) entry_vcl ;;   # for scripts/lint/vcl.sh
start)
  is_running "$name" && exit 0
  port=${!port_var:?set $port_var}
  require_free_port "$port" "$port_var"
  mkdir -p "$workdir" "$CONF_DIR" "$RUN_DIR" "$LOG_DIR"
  entry_vcl >"$vcl.tmp" || die "cannot write $vcl"
  mv "$vcl.tmp" "$vcl"
  chmod 644 "$vcl"
  "$STACK_REPO/stack/launch/varnishd.sh" -n "$workdir" -a "127.0.0.1:$port" -f "$vcl" \
    -s "$VARNISH_STORAGE" -P "$RUN_DIR/$name.pid" >>"$LOG_DIR/$name.log" 2>&1 \
    || die "varnishd ($flavour microcache) failed to start; see $LOG_DIR/$name.log"
  wait_until 30 "$flavour microcache Varnish on port $port" port_busy "$port" || die "varnishd did not listen on $port"
  ;;
stop) stop_pid "$name" ;;
*) die "usage: $0 start|stop|vcl [full|minimal]" ;;
esac
