#!/usr/bin/env bash
# purger.sh start|stop: the purge service (purger/) on 127.0.0.1:$PURGER_PORT, all roles in
# one process, talking to Redis and to the Varnish node of this stack, as an unprivileged system
# user of its own when started by root. Builds it if needed.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
dir=$STACK_REPO/purger

build() {
  [[ -f $dir/package.json ]] || die "purger/ is not there yet (no purger/package.json)"
  # Several stacks (e2e, k6, bench, a developer's make up) may start at once: one build at a time.
  # The lock is the purger/ directory itself, opened read-only: every stack of this checkout
  # shares it, and no file is created for it (a lock file in /tmp, made by root, would follow a
  # link another user planted there).
  exec 9<"$dir"
  flock -w 600 9 || die "another purger build holds the lock on $dir for 10 minutes"
  mkdir -p "$LOG_DIR"
  log_file purger-build.log root
  if [[ ! -d $dir/node_modules ]]; then
    log "purger: npm ci"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >>"$LOG_DIR/purger-build.log" 2>&1 \
      || die "npm ci in purger/ failed; see $LOG_DIR/purger-build.log"
  fi
  # Rebuild when any source file is newer than the build output.
  if [[ ! -d $dir/dist ]] || [[ -n $(find "$dir/src" -newer "$dir/dist" -type f 2>/dev/null | head -1) ]]; then
    log "purger: npm run build"
    npm --prefix "$dir" run build >>"$LOG_DIR/purger-build.log" 2>&1 \
      || die "purger build failed; see $LOG_DIR/purger-build.log"
    touch "$dir/dist"
  fi
  exec 9>&-   # release the lock (the purger started next must not inherit it)
}

case ${1:-} in
build) build ;;
start)
  is_running purger && exit 0
  load_secrets
  build
  home=$STACK_DIR/tmp/purger   # npm's cache and logs; the purger itself writes nothing
  mkdir -p "$home"
  own "$PURGER_OS_USER" 700 "$home"
  drop_to "$PURGER_OS_USER"
  PURGER_ROLE=all PURGER_HOST=127.0.0.1 PURGER_PORT=$PURGER_PORT \
  REDIS_URL="redis://:$REDIS_PASSWORD@127.0.0.1:$REDIS_PORT" \
  PURGER_WEBHOOK_SECRETS=$WEBHOOK_SECRET PURGER_OPERATOR_TOKEN=$OPERATOR_TOKEN VARNISH_PURGE_TOKEN=$VARNISH_PURGE_TOKEN \
  PURGER_SITES=$SITE_HOST VARNISH_NODES=127.0.0.1:$VARNISH_PORT \
  PURGER_REPURGE_DELAYS_MS=$PURGER_REPURGE_DELAYS_MS PURGER_REFRESH_CONCURRENCY=$PURGER_REFRESH_CONCURRENCY NODE_ENV=production \
  HOME=$home npm_config_cache=$home/npm npm_config_update_notifier=false \
    spawn purger "${DROP[@]}" npm --prefix "$dir" start
  wait_until 60 "purger readiness on port $PURGER_PORT" http_ok "http://127.0.0.1:$PURGER_PORT/readyz" \
    || die "purger did not start; see $LOG_DIR/purger.log"
  ;;
stop) stop_pid purger group ;;
*) die "usage: $0 build|start|stop" ;;
esac
