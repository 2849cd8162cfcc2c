#!/usr/bin/env bash
# mariadb.sh start|stop: a private MariaDB on a unix socket in $STACK_DIR/run/mysqld (no TCP
# port), running as the mysql user when started by root; creates the data directory, the
# `wordpress` database and its user on first start.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
datadir=$STACK_DIR/mysql sock=$DB_SOCKET
me=$(id -un)

sql() { mariadb --no-defaults --socket="$sock" -u "$me" "$@"; }

case ${1:-} in
start)
  is_running mariadb && exit 0
  load_secrets
  if [[ ! -d $datadir/mysql ]]; then
    log "mariadb: initialising $datadir"
    mkdir -p "$datadir"
    own "$DB_OS_USER" 700 "$datadir"
    log_file mariadb-install.log root
    mariadb-install-db --no-defaults --datadir="$datadir" --user="$DB_OS_USER" --skip-test-db \
      --auth-root-authentication-method=socket >"$LOG_DIR/mariadb-install.log" 2>&1 \
      || die "mariadb-install-db failed; see $LOG_DIR/mariadb-install.log"
  fi
  ((STACK_ROOT)) && chown -R "$DB_OS_USER" "$datadir"   # a data directory from before the mysql user
  # stack/launch/mariadbd.sh adds the fixed flags; this stack's own: no TCP, the data safe in
  # the OS's cache at each commit (flushed to disk once a second).
  spawn mariadb "$STACK_REPO/stack/launch/mariadbd.sh" "$datadir" "$sock" "$DB_SOCKET_DIR/mariadbd.pid" \
    --skip-networking --user="$DB_OS_USER" --log-error="$LOG_DIR/mariadb-error.log" \
    --innodb-flush-log-at-trx-commit=2
  wait_until 60 "MariaDB on $sock" sql -e 'SELECT 1' \
    || die "MariaDB did not start; see $LOG_DIR/mariadb-error.log"
  db_grants_sql localhost | sql --batch
  ;;
stop) stop_pid mariadb ;;
*) die "usage: $0 start|stop" ;;
esac
