#!/usr/bin/env bash
# nginx-microcache.sh start|stop: NGINX microcaching (bench/nginx-microcache.conf.in) on
# 127.0.0.1:$MICROCACHE_NGINX_PORT in front of the stack's origin (WEB_PORT), with its cache
# and logs under the stack's STACK_DIR (stack/lib.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../stack/lib.sh"
state=$STACK_DIR/nginx-microcache conf=$CONF_DIR/nginx-microcache.conf
case ${1:-} in
start)
  is_running nginx-microcache && exit 0
  port=${MICROCACHE_NGINX_PORT:?set MICROCACHE_NGINX_PORT}
  require_free_port "$port" MICROCACHE_NGINX_PORT
  mkdir -p "$state/tmp" "$CONF_DIR" "$RUN_DIR" "$LOG_DIR"   # nginx creates the leaves for its workers
  sed -e "s|@RUN_DIR@|$RUN_DIR|g" -e "s|@LOG_DIR@|$LOG_DIR|g" -e "s|@STATE@|$state|g" \
      -e "s|@WEB_PORT@|$WEB_PORT|g" -e "s|@PORT@|$port|g" "$here/nginx-microcache.conf.in" >"$conf"
  ! grep -q '@[A-Z_]*@' "$conf" || die "unrendered placeholder in $conf"
  # shellcheck disable=SC2094  # nginx appends to its error log; so does its stderr
  nginx -c "$conf" -e "$LOG_DIR/nginx-microcache-error.log" 2>>"$LOG_DIR/nginx-microcache-error.log" \
    || die "nginx (microcache) failed to start; see $LOG_DIR/nginx-microcache-error.log"
  wait_until 30 "NGINX microcache on port $port" port_busy "$port" || die "nginx did not listen on $port"
  ;;
stop) stop_pid nginx-microcache ;;
*) die "usage: $0 start|stop" ;;
esac
