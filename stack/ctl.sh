#!/usr/bin/env bash
# ctl.sh VERB...: what tests do to a running native stack (make up's, or a test's STACK_DIR),
# with the same verbs as stack/compose/ctl.sh for the compose stack, so one test drives either
# (tests/e2e/e2e.mjs reads STACK_CTL):
#   sql QUERY                 runs QUERY on the wordpress database, prints rows tab-separated
#   wp SCRIPT [ARG...]        stack/prepare-wordpress.sh SCRIPT (change, app-password, cron...)
#   secret NAME               prints one secret (admin_password, operator_token...)
#   stop|start SERVICE        stops or starts one service (purger, varnish...)
#   php-log                   prints what PHP logged (warnings, errors) since the stack started
set -euo pipefail
source "$(dirname "$0")/lib.sh"
case ${1:-} in
sql) mariadb --no-defaults --socket="$DB_SOCKET" -N wordpress -e "$2" ;;
wp) exec "$STACK_REPO/stack/prepare-wordpress.sh" "${@:2}" ;;
secret) load_secrets; v=${2^^}; [[ -n ${!v:-} ]] || die "no secret '$2'"; printf '%s\n' "${!v}" ;;
stop | start) exec "$STACK_REPO/stack/services/$2.sh" "$1" ;;
php-log) if [[ -f $LOG_DIR/php-error.log ]]; then cat "$LOG_DIR/php-error.log"; fi ;;
*) die "usage: ctl.sh sql QUERY | wp SCRIPT [ARG...] | secret NAME | stop|start SERVICE | php-log" ;;
esac
