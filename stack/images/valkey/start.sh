#!/usr/bin/env bash
# start.sh primary | replica PRIMARY | sentinel PRIMARY | health [PORT] | cli PORT ARG...: the
# compose store (stack/images/valkey), run by stack/launch/redis-server.sh (valkey-server and
# valkey-sentinel: the image's STORE_SERVER, STORE_SENTINEL). The server's configuration is the
# native stack's redis.conf (stack/render-config.sh: password, maxmemory) on the tmpfs, mode 600,
# with the launcher's append-only log and noeviction;
# a replica adds replicaof and the primary's password. A sentinel (port 26379) watches PRIMARY
# as "purger" (quorum 2), requires its own password (redis_sentinel_password) and rewrites its
# own file, kept on the tmpfs. health and cli talk to this container's server, or its sentinel
# on 26379, with that one's password. No secret on a command line.
set -euo pipefail
source "$(dirname "$0")/../../lib.sh"
SENTINEL_PORT=26379
load_secrets
[[ -n ${REDIS_PASSWORD:-} ]] || die "no redis_password in $STACK_SECRETS_DIR"
export REDISCLI_AUTH=$REDIS_PASSWORD
# Sentinel turns protected mode off and any container on the network reaches it: without a
# password, anyone could SENTINEL REMOVE the primary and MONITOR their own, which the purger
# would follow and send the Redis password to.
need_sentinel_password() {
  [[ -n ${REDIS_SENTINEL_PASSWORD:-} ]] || die "no redis_sentinel_password in $STACK_SECRETS_DIR: the sentinels refuse to run without a password"
}
case ${1:-primary} in
primary | replica)
  "$STACK_REPO/stack/render-config.sh" redis
  mkdir -p "$REDIS_DATA_DIR"
  if [[ $1 == replica ]]; then
    [[ -n ${2:-} ]] || die "usage: start.sh replica PRIMARY_HOST"
    printf 'replicaof %s %s\nmasterauth %s\n' "$2" "$REDIS_PORT" "$REDIS_PASSWORD" >>"$CONF_DIR/redis.conf"
  fi
  exec "$STACK_REPO/stack/launch/redis-server.sh" "$CONF_DIR/redis.conf"
  ;;
sentinel)
  [[ -n ${2:-} ]] || die "usage: start.sh sentinel PRIMARY_HOST"
  need_sentinel_password
  mkdir -p "$CONF_DIR"
  # requirepass: clients must AUTH, and each sentinel AUTHs to the others with it (without ACL
  # users, Sentinel uses requirepass both ways).
  (umask 077; cat >"$CONF_DIR/sentinel.conf" <<CONF
port $SENTINEL_PORT
requirepass $REDIS_SENTINEL_PASSWORD
sentinel resolve-hostnames yes
sentinel announce-hostnames yes
sentinel monitor purger $2 $REDIS_PORT 2
sentinel auth-pass purger $REDIS_PASSWORD
sentinel down-after-milliseconds purger 5000
sentinel failover-timeout purger 30000
CONF
  )
  exec "$STACK_REPO/stack/launch/redis-server.sh" --sentinel "$CONF_DIR/sentinel.conf"
  ;;
health | cli)
  mode=$1 port=${2:-$REDIS_PORT}
  shift $(($# < 2 ? $# : 2))
  if [[ $port == "$SENTINEL_PORT" ]]; then need_sentinel_password; REDISCLI_AUTH=$REDIS_SENTINEL_PASSWORD; fi
  # valkey-cli exits 0 on an error reply (NOAUTH): healthy means PONG.
  if [[ $mode == health ]]; then [[ $(valkey-cli -p "$port" ping) == PONG ]]; exit; fi
  exec valkey-cli -p "$port" "$@"
  ;;
*) die "usage: start.sh primary | replica PRIMARY | sentinel PRIMARY | health [PORT] | cli PORT ARG..." ;;
esac
