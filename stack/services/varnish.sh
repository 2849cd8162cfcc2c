#!/usr/bin/env bash
# varnish.sh start|stop: varnishd on 127.0.0.1:$VARNISH_PORT with the generated stack.vcl
# (vcl/render-entry.sh: this stack's nginx, then vcl/microcache.vcl); admin port on a random
# loopback port. Request lines and headers up to 32 KB (wp-admin's bulk actions are GETs of
# ~17 bytes per post; Varnish's 8 KB default closed the connection on 500 posts with long ids).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
workdir=$STACK_DIR/varnish
case ${1:-} in
start)
  is_running varnish && exit 0
  mkdir -p "$workdir"
  log_file varnish.log root
  varnishd -n "$workdir" -a "127.0.0.1:$VARNISH_PORT" -T 127.0.0.1:0 \
    -f "$CONF_DIR/stack.vcl" -p "vcl_path=$STACK_REPO/vcl:/usr/share/varnish/vcl" \
    -s "$VARNISH_STORAGE" -P "$RUN_DIR/varnish.pid" \
    -p http_req_hdr_len=32k -p http_req_size=48k -p workspace_client=128k >>"$LOG_DIR/varnish.log" 2>&1 \
    || die "varnishd failed to start (VCL error?); see $LOG_DIR/varnish.log"
  wait_until 30 "Varnish on port $VARNISH_PORT" port_busy "$VARNISH_PORT" || die "varnishd did not listen on $VARNISH_PORT"
  ;;
stop) stop_pid varnish ;;
*) die "usage: $0 start|stop" ;;
esac
