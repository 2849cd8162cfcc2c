#!/usr/bin/env bash
# nginx.sh start|stop: the origin web server (Varnish's backend) on 127.0.0.1:$WEB_PORT.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
case ${1:-} in
start)
  is_running nginx && exit 0
  mkdir -p "$STACK_DIR/tmp"
  # shellcheck disable=SC2094  # nginx appends to its error log; so does its stderr
  nginx -c "$CONF_DIR/nginx.conf" -e "$LOG_DIR/nginx-error.log" 2>>"$LOG_DIR/nginx-error.log" \
    || die "nginx failed to start; see $LOG_DIR/nginx-error.log"
  wait_until 30 "nginx on port $WEB_PORT" port_busy "$WEB_PORT" || die "nginx did not listen on $WEB_PORT"
  ;;
stop) stop_pid nginx ;;
*) die "usage: $0 start|stop" ;;
esac
