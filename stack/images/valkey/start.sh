#!/usr/bin/env bash
# start.sh primary | replica PRIMARY | sentinel PRIMARY | server-auto SENTINELS SEED |
# sentinel-auto SENTINELS SEED | health [PORT] | cli PORT ARG...: the compose store (stack/images/valkey), run by stack/launch/redis-server.sh (valkey-server and
# valkey-sentinel: the image's STORE_SERVER, STORE_SENTINEL). The server's configuration is the
# native stack's redis.conf (stack/render-config.sh: password, maxmemory) on the tmpfs, mode 600,
# with the launcher's append-only log and noeviction;
# a replica adds replicaof and the primary's password. A sentinel (port 26379) watches PRIMARY
# as "purger" (quorum 2), requires its own password (redis_sentinel_password) and rewrites its
# own file, kept on the tmpfs. health and cli talk to this container's server, or its sentinel
# on 26379, with that one's password. No secret on a command line.
#
# On an engine that moves containers (Swarm, Kubernetes) no server can be told once which role it
# has: server-auto asks the sentinels (SENTINELS: host:port,...) which server is the primary and
# starts as its replica, or as the primary when that is itself; when no sentinel answers (the
# first start), SEED is the primary. sentinel-auto watches the primary the other sentinels know,
# else SEED. REDIS_ANNOUNCE_HOST is the stable name this server or sentinel is reached by (a
# per-server service or pod name): sentinels then know every member by name, and a restarted one,
# at a new address, takes its old place instead of counting as one more, absent, voter.
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
# primary_known SENTINELS: the primary's host as the first sentinel that answers knows it, or nothing.
primary_known() {
  local s out
  need_sentinel_password
  for s in ${1//,/ }; do
    out=$(REDISCLI_AUTH=$REDIS_SENTINEL_PASSWORD timeout 3 valkey-cli --no-auth-warning -h "${s%:*}" -p "${s##*:}" \
      sentinel get-master-addr-by-name purger 2>/dev/null | head -1) || continue
    [[ -n $out && $out != *ERR* && $out != *NOAUTH* ]] && { echo "$out"; return 0; }
  done
}
announce_host() {
  [[ -n ${REDIS_ANNOUNCE_HOST:-} ]] || die "REDIS_ANNOUNCE_HOST is not set: the name other members reach this one by (its service or pod name)"
  [[ $REDIS_ANNOUNCE_HOST =~ ^[A-Za-z0-9.-]+$ ]] || die "REDIS_ANNOUNCE_HOST=$REDIS_ANNOUNCE_HOST is not a host name"
}
case ${1:-primary} in
server-auto)
  [[ -n ${2:-} && -n ${3:-} ]] || die "usage: start.sh server-auto SENTINELS SEED"
  announce_host
  primary=$(primary_known "$2")
  [[ -n $primary ]] || primary=$3
  if [[ $primary == "$REDIS_ANNOUNCE_HOST" ]]; then set -- primary; else set -- replica "$primary"; fi
  log "server-auto: $REDIS_ANNOUNCE_HOST starts as ${1}${2:+ of $2}"
  "$STACK_REPO/stack/render-config.sh" redis
  mkdir -p "$REDIS_DATA_DIR"
  printf 'replica-announce-ip %s\n' "$REDIS_ANNOUNCE_HOST" >>"$CONF_DIR/redis.conf"
  [[ $1 == primary ]] || printf 'replicaof %s %s\nmasterauth %s\n' "$2" "$REDIS_PORT" "$REDIS_PASSWORD" >>"$CONF_DIR/redis.conf"
  exec "$STACK_REPO/stack/launch/redis-server.sh" "$CONF_DIR/redis.conf"
  ;;
sentinel-auto)
  [[ -n ${2:-} && -n ${3:-} ]] || die "usage: start.sh sentinel-auto SENTINELS SEED"
  announce_host
  primary=$(primary_known "$2")
  log "sentinel-auto: $REDIS_ANNOUNCE_HOST watches ${primary:-$3}${primary:+ (as the other sentinels know it)}"
  SENTINEL_ANNOUNCE=$REDIS_ANNOUNCE_HOST exec "$0" sentinel "${primary:-$3}"
  ;;
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
${SENTINEL_ANNOUNCE:+sentinel announce-ip $SENTINEL_ANNOUNCE}
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
*) die "usage: start.sh primary | replica PRIMARY | sentinel PRIMARY | server-auto SENTINELS SEED | sentinel-auto SENTINELS SEED | health [PORT] | cli PORT ARG..." ;;
esac
