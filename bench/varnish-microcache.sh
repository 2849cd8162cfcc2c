#!/usr/bin/env bash
# varnish-microcache.sh start|stop: a second varnishd on 127.0.0.1:$MICROCACHE_VARNISH_PORT in
# pure microcache mode (1 s TTL, grace, coalescing; no purges needed), in front of the same
# origin as the stack's own Varnish. Its entry VCL is the stack's (stack/native-vcl.sh) with
# bench/microcache-only.vcl included before microcache.vcl.
# Uses the stack's settings (STACK_DIR, WEB_PORT: stack/lib.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../stack/lib.sh"
workdir=$STACK_DIR/varnish-microcache vcl=$CONF_DIR/varnish-microcache.vcl
case ${1:-} in
start)
  is_running varnish-microcache && exit 0
  port=${MICROCACHE_VARNISH_PORT:?set MICROCACHE_VARNISH_PORT}
  require_free_port "$port" MICROCACHE_VARNISH_PORT
  mkdir -p "$workdir" "$CONF_DIR" "$RUN_DIR" "$LOG_DIR"
  "$STACK_REPO/stack/native-vcl.sh" 127.0.0.1 "$WEB_PORT" "$CONF_DIR/varnish_purge_token" "$here/microcache-only.vcl" \
    >"$vcl.tmp" || die "cannot write $vcl"
  mv "$vcl.tmp" "$vcl"
  chmod 644 "$vcl"
  varnishd -n "$workdir" -a "127.0.0.1:$port" -T 127.0.0.1:0 -f "$vcl" \
    -p "vcl_path=$STACK_REPO/vcl:/usr/share/varnish/vcl" -s "$VARNISH_STORAGE" \
    -P "$RUN_DIR/varnish-microcache.pid" >>"$LOG_DIR/varnish-microcache.log" 2>&1 \
    || die "varnishd (microcache) failed to start; see $LOG_DIR/varnish-microcache.log"
  wait_until 30 "microcache Varnish on port $port" port_busy "$port" || die "varnishd did not listen on $port"
  ;;
stop) stop_pid varnish-microcache ;;
*) die "usage: $0 start|stop" ;;
esac
