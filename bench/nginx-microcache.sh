#!/usr/bin/env bash
# nginx-microcache.sh start|stop [NAME PORT [SETTING...]]: NGINX microcaching
# (bench/nginx-microcache.conf.in) on 127.0.0.1:PORT in front of the stack's origin (WEB_PORT),
# with its cache and logs under the stack's STACK_DIR (stack/lib.sh), its pid in
# $RUN_DIR/NAME.pid. Default NAME nginx-microcache on $MICROCACHE_NGINX_PORT (make bench's).
# SETTINGs change one thing from the article's block on NGINX's defaults, for bench/hit-path.sh
# explain: sendfile (sendfile on), tcp_nopush (tcp_nopush on: with sendfile, as Debian's nginx.conf has both),
# gzip (gzip on, Debian's nginx.conf), log=buffered (access_log buffer=64k flush=1s, make bench's
# NGINX before 2026-11-28), accept-encoding=cleared (Accept-Encoding "" to the origin, ditto),
# background-update (proxy_cache_background_update on: the request that finds an entry expired
# gets the stale copy too, instead of waiting for the origin; not in the article).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../stack/lib.sh"
cmd=${1:-} name=${2:-nginx-microcache}
state=$STACK_DIR/$name conf=$CONF_DIR/$name.conf
case $cmd in
start)
  is_running "$name" && exit 0
  port=${3:-${MICROCACHE_NGINX_PORT:?set MICROCACHE_NGINX_PORT}}
  settings="" location="" log_buffer=""
  for s in "${@:4}"; do
    case $s in
      sendfile) settings+="  sendfile on;"$'\n' ;;
      tcp_nopush) settings+="  tcp_nopush on;"$'\n' ;;
      gzip) settings+="  gzip on;"$'\n' ;;
      log=buffered) log_buffer=" buffer=64k flush=1s" ;;
      accept-encoding=cleared) location+="      proxy_set_header Accept-Encoding \"\";"$'\n' ;;
      background-update) location+="      proxy_cache_background_update on;"$'\n' ;;
      *) die "unknown setting '$s' (sendfile, tcp_nopush, gzip, log=buffered, accept-encoding=cleared, background-update)" ;;
    esac
  done
  require_free_port "$port" "port of $name"
  mkdir -p "$state/tmp" "$CONF_DIR" "$RUN_DIR" "$LOG_DIR"   # nginx creates the leaves for its workers
  python3 - "$here/nginx-microcache.conf.in" "$conf" "RUN_DIR=$RUN_DIR" "LOG_DIR=$LOG_DIR" "STATE=$state" \
    "WEB_PORT=$WEB_PORT" "PORT=$port" "NAME=$name" "LOG_BUFFER=$log_buffer" "SETTINGS=${settings%$'\n'}" \
    "LOCATION_SETTINGS=${location%$'\n'}" <<'PY'
import sys
src, out, *pairs = sys.argv[1:]
text = open(src).read()
for p in pairs:
    k, v = p.split("=", 1)
    text = text.replace(f"@{k}@", v)
open(out, "w").write(text)
PY
  ! grep -q '@[A-Z_]*@' "$conf" || die "unrendered placeholder in $conf"
  # shellcheck disable=SC2094  # nginx appends to its error log; so does its stderr
  nginx -c "$conf" -e "$LOG_DIR/$name-error.log" 2>>"$LOG_DIR/$name-error.log" \
    || die "nginx ($name) failed to start; see $LOG_DIR/$name-error.log"
  wait_until 30 "NGINX microcache $name on port $port" port_busy "$port" || die "nginx did not listen on $port"
  ;;
stop) stop_pid "$name" ;;
*) die "usage: $0 start|stop [NAME PORT [SETTING...]]" ;;
esac
