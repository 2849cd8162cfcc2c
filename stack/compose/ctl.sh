#!/usr/bin/env bash
# ctl.sh VERB...: what tests do to a running compose stack, the verbs of stack/ctl.sh (native):
#   sql QUERY | wp SCRIPT [ARG...] | secret NAME | stop|start SERVICE
# The project and files come from the environment as docker compose reads them
# (COMPOSE_PROJECT_NAME, COMPOSE_FILE).
set -euo pipefail
die() { printf 'compose-ctl: %s\n' "$*" >&2; exit 1; }
case ${1:-} in
sql) docker compose exec -T mariadb mariadb --no-defaults --socket=/tmp/mysqld.sock -N wordpress -e "$2" ;;
wp) docker compose exec -T wordpress /opt/varnish-edge/stack/prepare-wordpress.sh "${@:2}" ;;
secret) docker compose run --rm --no-deps -T secrets show "$2" ;;
stop | start) docker compose "$1" "$2" 2>/dev/null ;;
*) die "usage: ctl.sh sql QUERY | wp SCRIPT [ARG...] | secret NAME | stop|start SERVICE" ;;
esac
