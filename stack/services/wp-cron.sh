#!/usr/bin/env bash
# wp-cron.sh start|stop|loop: calls wp-cron.php on the origin every $WP_CRON_INTERVAL seconds.
# Behind a full-page cache visitors rarely reach PHP, so WordPress's own visitor-driven cron
# would not run scheduled posts or the plugin's outbox retries: wp-config sets DISABLE_WP_CRON.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
case ${1:-} in
start)
  is_running wp-cron && exit 0
  spawn wp-cron "$0" loop
  ;;
loop)
  while :; do
    curl -s -o /dev/null --max-time 60 -H "Host: $SITE_HOST" "http://127.0.0.1:$WEB_PORT/wp-cron.php" || true
    sleep "$WP_CRON_INTERVAL"
  done
  ;;
stop) stop_pid wp-cron group ;;
*) die "usage: $0 start|stop|loop" ;;
esac
