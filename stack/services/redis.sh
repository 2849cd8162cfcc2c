#!/usr/bin/env bash
# redis.sh start|stop: Redis for the purger on 127.0.0.1:$REDIS_PORT, password-protected, as the
# redis user when started by root: stack/launch/redis-server.sh with the redis.conf
# stack/render-config.sh writes (STORE_SERVER=valkey-server runs Valkey instead).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
case ${1:-} in
start)
  is_running redis && exit 0
  load_secrets
  mkdir -p "$REDIS_DATA_DIR"
  own "$REDIS_OS_USER" 700 "$REDIS_DATA_DIR"
  drop_to "$REDIS_OS_USER"
  spawn redis "${DROP[@]}" "$STACK_REPO/stack/launch/redis-server.sh" "$CONF_DIR/redis.conf"
  wait_until 30 "Redis on port $REDIS_PORT" \
    env REDISCLI_AUTH="$REDIS_PASSWORD" redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping \
    || die "Redis did not answer; see $LOG_DIR/redis.log"
  ;;
stop) stop_pid redis ;;
*) die "usage: $0 start|stop" ;;
esac
