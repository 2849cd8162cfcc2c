#!/usr/bin/env bash
# make up: installs what is missing, then starts MariaDB, Redis, php-fpm + nginx (WordPress),
# the purger, Varnish and a wp-cron ticker under $STACK_DIR, installs WordPress with demo
# content and the varnish-edge plugin, and prints where everything is. Idempotent.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ ${STACK_SKIP_DEPS:-0} == 1 ]] || "$STACK_REPO/scripts/install-deps.sh"

for v in VARNISH_PORT WEB_PORT PURGER_PORT REDIS_PORT; do
  if ! [[ ${!v} =~ ^[0-9]+$ ]] || ((${!v} < 1 || ${!v} > 65535)); then die "$v='${!v}' is not a port number"; fi
done
dups=$(printf '%s\n' "$VARNISH_PORT" "$WEB_PORT" "$PURGER_PORT" "$REDIS_PORT" | sort | uniq -d)
[[ -z $dups ]] || die "port $dups is given to two services; VARNISH_PORT, WEB_PORT, PURGER_PORT and REDIS_PORT must differ"

mkdir -p "$STACK_DIR" "$RUN_DIR" "$LOG_DIR" "$CONF_DIR"
chmod 755 "$STACK_DIR"   # varnishd's unprivileged compiler user reads the VCL under it
service_users
"$STACK_REPO/stack/gen-secrets.sh"

# Refuse ports held by something that is not this stack, naming the variable to change.
is_running nginx   || require_free_port "$WEB_PORT" WEB_PORT
is_running varnish || require_free_port "$VARNISH_PORT" VARNISH_PORT
is_running purger  || require_free_port "$PURGER_PORT" PURGER_PORT
is_running redis   || require_free_port "$REDIS_PORT" REDIS_PORT

# A rerun may follow a fix (a theme installed, a PHP error mended): whatever Varnish cached while
# the site was broken must not outlive it.
varnish_was_running=0; is_running varnish && varnish_was_running=1

"$STACK_REPO/stack/prepare-wordpress.sh" layout
"$STACK_REPO/stack/render-config.sh"
for svc in mariadb redis php-fpm nginx; do "$STACK_REPO/stack/services/$svc.sh" start; done
"$STACK_REPO/stack/prepare-wordpress.sh" install
for svc in purger varnish wp-cron; do "$STACK_REPO/stack/services/$svc.sh" start; done
# The install's own events (activating the plugin bans the whole site) waited in the outbox for
# the purger: deliver them now, so no ban lands on pages cached after the stack says it is ready.
"$STACK_REPO/stack/prepare-wordpress.sh" flush-outbox \
  || die "the plugin's outbox could not be delivered to the purger; see $LOG_DIR/purger.log"

wait_until 60 "WordPress through Varnish" http_ok "http://127.0.0.1:$VARNISH_PORT/" "$SITE_HOST" \
  || die "the site does not answer through Varnish; see $LOG_DIR/"
if ((varnish_was_running)); then
  varnishadm -n "$STACK_DIR/varnish" ban 'obj.status != 0' >/dev/null || die "cannot empty the running Varnish's cache (varnishadm ban)"
fi
"$STACK_REPO/stack/check-site.sh"
cat <<MSG

  Site (through Varnish):  $SITE_URL/
  wp-admin:                $SITE_URL/wp-admin/   user: $WP_ADMIN_USER   password: ADMIN_PASSWORD in $SECRETS_FILE
  Purger metrics:          http://127.0.0.1:$PURGER_PORT/metrics   (Authorization: Bearer OPERATOR_TOKEN from $SECRETS_FILE)
  Origin (nginx, bypass):  http://127.0.0.1:$WEB_PORT/  (send Host: $SITE_HOST)
  State, logs:             $STACK_DIR  ($LOG_DIR)
  make status | make audit | make down

MSG
