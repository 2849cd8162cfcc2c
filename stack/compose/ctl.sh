#!/usr/bin/env bash
# ctl.sh VERB...: what tests do to a running compose stack, the verbs of stack/ctl.sh (native):
#   sql QUERY | wp SCRIPT [ARG...] | secret NAME | stop|start SERVICE | php-log
# (php-log: the wordpress container's output, where PHP logs its warnings and errors)
# The project and files come from the environment as docker compose reads them
# (COMPOSE_PROJECT_NAME, COMPOSE_FILE).
set -euo pipefail
die() { printf 'compose-ctl: %s\n' "$*" >&2; exit 1; }
case ${1:-} in
sql) docker compose exec -T mariadb mariadb --no-defaults --socket=/tmp/mysqld.sock -N wordpress -e "$2" ;;
wp) docker compose exec -T wordpress /opt/varnish-edge/stack/prepare-wordpress.sh "${@:2}" ;;
secret) docker compose run --rm --no-deps -T secrets show "$2" ;;
stop | start) docker compose "$1" "$2" 2>/dev/null ;;
php-log) docker compose logs --no-color --no-log-prefix wordpress ;;
*) die "usage: ctl.sh sql QUERY | wp SCRIPT [ARG...] | secret NAME | stop|start SERVICE | php-log" ;;
esac
