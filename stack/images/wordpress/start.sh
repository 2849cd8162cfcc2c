#!/usr/bin/env bash
# start.sh install|web|cron: the compose "wordpress-install", "wordpress" and "wp-cron" services
# (stack/images/wordpress).
#   install  (one-shot, the only one given the admin password) renders WordPress's configuration,
#         upgrades the database to this image's core when it is older (a rebuilt image brings
#         Debian's newer package), installs the site, demo content and the plugin when the
#         database has none (stack/prepare-wordpress.sh install, as make up does), and sets the
#         admin password from the secrets
#   web   renders nginx's, php-fpm's and WordPress's configuration (stack/render-config.sh; with
#         WEB_TRUSTED_PROXIES=network, X-Forwarded-For believed from this container's network),
#         upgrades the database if needed, runs php-fpm and nginx on :8081, delivers the
#         install's events to the purger, then marks itself ready for the health check. Ends
#         when either server ends, so Docker restarts the container.
#   cron  runs WordPress's due cron events every WP_CRON_INTERVAL s (stack/services/wp-cron.sh).
set -euo pipefail
source "$(dirname "$0")/../../lib.sh"
# "network": nginx believes X-Forwarded-For from this container's own network, which only the
# stack's containers join (compose's internal "backend"), less its gateway (the Docker host):
# Varnish's address is not pinned.
if [[ $WEB_TRUSTED_PROXIES == network ]]; then
  own=$(getent ahostsv4 "$(hostname)" | awk 'NR == 1 { print $1 }')
  WEB_TRUSTED_PROXIES=$("$STACK_REPO/stack/compose/subnet-of.sh" --without-gateway "$own")
  [[ -n $WEB_TRUSTED_PROXIES ]] || die "WEB_TRUSTED_PROXIES=network: no route for this container's address $own"
  export WEB_TRUSTED_PROXIES
fi
"$STACK_REPO/stack/render-config.sh" wordpress
# in_a_minute COMMAND...: MariaDB answers before compose starts this container (depends_on:
# service_healthy); a restart of both at once gets a minute.
in_a_minute() {
  local try
  for try in $(seq 1 30); do
    "$@" && return 0
    ((try < 30)) || die "$* did not succeed; see the messages above"
    sleep 2
  done
}
# db_answers: MariaDB (WP_DB_HOST) takes connections. Compose starts this container once MariaDB is
# healthy; engines without that ordering (Swarm) start both at once, and a WordPress that finds no
# database answers its error page and exits 0, so the install would pass for done.
db_answers() { local h=${WP_DB_HOST%:*} p=${WP_DB_HOST##*:}; [[ $p == "$WP_DB_HOST" ]] && p=3306; (: <"/dev/tcp/$h/$p") 2>/dev/null; }
wait_until 300 "MariaDB at $WP_DB_HOST" db_answers || die "MariaDB at $WP_DB_HOST (WP_DB_HOST) did not answer in 300 s"
case ${1:-web} in
install) in_a_minute "$STACK_REPO/stack/prepare-wordpress.sh" install ;;
web)
  "$STACK_REPO/stack/render-config.sh" nginx php-fpm
  rm -f "$RUN_DIR/ready"
  in_a_minute "$STACK_REPO/stack/prepare-wordpress.sh" upgrade
  "$(php_fpm_bin)" -F -y "$CONF_DIR/php-fpm.conf" &
  nginx -c "$CONF_DIR/nginx.conf" -e stderr -g 'daemon off;' &
  wait_until 30 "nginx on $WEB_LISTEN" http_ok "http://127.0.0.1:${WEB_LISTEN##*:}/robots.txt" \
    || die "nginx or php-fpm did not serve /robots.txt"
  # Activating the plugin bans the whole site: deliver that before saying ready.
  "$STACK_REPO/stack/prepare-wordpress.sh" flush-outbox || log "the outbox could not be delivered yet; wp-cron retries it"
  : >"$RUN_DIR/ready"
  wait -n
  die "php-fpm or nginx ended"
  ;;
cron) exec "$STACK_REPO/stack/services/wp-cron.sh" loop ;;
*) die "usage: start.sh install|web|cron" ;;
esac
