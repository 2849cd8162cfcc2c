#!/usr/bin/env bash
# start.sh primary | replica PRIMARY | sentinel PRIMARY | health [PORT]: the compose store
# (stack/images/valkey). The server's configuration is the native stack's redis.conf
# (stack/render-config.sh: password, append-only log, noeviction cap) on the tmpfs, mode 600;
# a replica adds replicaof and the primary's password. A sentinel (port 26379) watches PRIMARY
# as "purger" (quorum 2) and rewrites its own file, kept on the tmpfs. No secret on a command line.
set -euo pipefail
source "$(dirname "$0")/../../lib.sh"
load_secrets
[[ -n ${REDIS_PASSWORD:-} ]] || die "no redis_password in $STACK_SECRETS_DIR"
export REDISCLI_AUTH=$REDIS_PASSWORD
case ${1:-primary} in
primary | replica)
  "$STACK_REPO/stack/render-config.sh" redis
  mkdir -p "$REDIS_DATA_DIR"
  if [[ $1 == replica ]]; then
    [[ -n ${2:-} ]] || die "usage: start.sh replica PRIMARY_HOST"
    printf 'replicaof %s %s\nmasterauth %s\n' "$2" "$REDIS_PORT" "$REDIS_PASSWORD" >>"$CONF_DIR/redis.conf"
  fi
  exec valkey-server "$CONF_DIR/redis.conf"
  ;;
sentinel)
  [[ -n ${2:-} ]] || die "usage: start.sh sentinel PRIMARY_HOST"
  mkdir -p "$CONF_DIR"
  (umask 077; cat >"$CONF_DIR/sentinel.conf" <<CONF
port 26379
sentinel resolve-hostnames yes
sentinel announce-hostnames yes
sentinel monitor purger $2 $REDIS_PORT 2
sentinel auth-pass purger $REDIS_PASSWORD
sentinel down-after-milliseconds purger 5000
sentinel failover-timeout purger 30000
CONF
  )
  exec valkey-sentinel "$CONF_DIR/sentinel.conf"
  ;;
health) exec valkey-cli -p "${2:-$REDIS_PORT}" ping ;;
*) die "usage: start.sh primary | replica PRIMARY | sentinel PRIMARY | health [PORT]" ;;
esac
