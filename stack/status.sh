#!/usr/bin/env bash
# make status: one line per service of the stack under $STACK_DIR: running or not, pid, and
# whether its endpoint answers. Exits 0 when everything runs.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
check() {
  case $1 in
    mariadb) [[ -S $DB_SOCKET ]] && echo "socket $DB_SOCKET" ;;
    redis) port_busy "$REDIS_PORT" && echo "127.0.0.1:$REDIS_PORT" ;;
    php-fpm) [[ -S $RUN_DIR/php-fpm.sock ]] && echo "socket $RUN_DIR/php-fpm.sock" ;;
    nginx) http_ok "http://127.0.0.1:$WEB_PORT/" "$SITE_HOST" && echo "http://127.0.0.1:$WEB_PORT/ (origin)" ;;
    purger) http_ok "http://127.0.0.1:$PURGER_PORT/readyz" && echo "http://127.0.0.1:$PURGER_PORT/ (ready)" ;;
    varnish) http_ok "http://127.0.0.1:$VARNISH_PORT/" "$SITE_HOST" && echo "$SITE_URL/" ;;
    wp-cron) echo "every ${WP_CRON_INTERVAL}s" ;;
  esac
}
down=0
echo "stack under $STACK_DIR"
for svc in "${STACK_SERVICES[@]}"; do
  if pid=$(pid_of "$svc"); then
    if where=$(check "$svc"); then printf '  %-8s up     pid %-7s %s\n' "$svc" "$pid" "$where"
    else printf '  %-8s UNHEALTHY pid %-7s (runs but does not answer; see %s)\n' "$svc" "$pid" "$LOG_DIR"; down=1; fi
  else printf '  %-8s down\n' "$svc"; down=1; fi
done
exit $down
