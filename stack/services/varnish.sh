#!/usr/bin/env bash
# varnish.sh start|stop: varnishd on 127.0.0.1:$VARNISH_PORT with the generated stack.vcl
# (vcl/render-entry.sh: this stack's nginx, then vcl/microcache.vcl), a daemon with its pid file.
# The flags every Varnish of the project runs with (admin port, vcl_path, 32 KB request lines and
# headers) are stack/launch/varnishd.sh's.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
workdir=$STACK_DIR/varnish
case ${1:-} in
start)
  is_running varnish && exit 0
  mkdir -p "$workdir"
  log_file varnish.log root
  "$STACK_REPO/stack/launch/varnishd.sh" -n "$workdir" -a "127.0.0.1:$VARNISH_PORT" \
    -f "$CONF_DIR/stack.vcl" -s "$VARNISH_STORAGE" -P "$RUN_DIR/varnish.pid" >>"$LOG_DIR/varnish.log" 2>&1 \
    || die "varnishd failed to start (VCL error?); see $LOG_DIR/varnish.log"
  wait_until 30 "Varnish on port $VARNISH_PORT" port_busy "$VARNISH_PORT" || die "varnishd did not listen on $VARNISH_PORT"
  ;;
stop) stop_pid varnish ;;
*) die "usage: $0 start|stop" ;;
esac
