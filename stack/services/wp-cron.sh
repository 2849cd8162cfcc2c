#!/usr/bin/env bash
# wp-cron.sh start|stop|loop: runs WordPress's due cron events (stack/wp/run-cron.php, PHP CLI)
# every $WP_CRON_INTERVAL seconds, one run at a time. Behind a full-page cache visitors rarely
# reach PHP, so WordPress's own visitor-driven cron would not publish scheduled posts or retry
# the plugin's outbox: wp-config sets DISABLE_WP_CRON.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
case ${1:-} in
start)
  is_running wp-cron && exit 0
  spawn wp-cron "$0" loop
  ;;
loop)
  while :; do
    # wp-cron.ok: when the last run succeeded (compose's health check reads its age).
    if timeout 300 "$STACK_REPO/stack/prepare-wordpress.sh" cron >/dev/null; then : >"$RUN_DIR/wp-cron.ok"; fi
    sleep "$WP_CRON_INTERVAL"
  done
  ;;
stop) stop_pid wp-cron group ;;
*) die "usage: $0 start|stop|loop" ;;
esac
