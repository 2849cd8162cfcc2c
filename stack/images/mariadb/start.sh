#!/usr/bin/env bash
# The compose "mariadb" service (stack/images/mariadb): initialises /var/lib/mysql when empty,
# then runs mariadbd (stack/launch/mariadbd.sh) on :3306 with an init file (on the tmpfs, mode
# 600) that creates or updates the `wordpress` database and user from the db_password secret
# before the first connection.
# Health: start.sh health (a query over the socket as the OS user mysql).
set -euo pipefail
source "$(dirname "$0")/../../lib.sh"
datadir=/var/lib/mysql sock=/tmp/mysqld.sock
if [[ ${1:-} == health ]]; then
  exec mariadb --no-defaults --socket="$sock" -N -e 'SELECT 1 FROM mysql.user LIMIT 1'
fi
load_secrets
[[ -n ${DB_PASSWORD:-} ]] || die "no db_password in $STACK_SECRETS_DIR"
if [[ ! -d $datadir/mysql ]]; then
  log "mariadb: initialising $datadir"
  mariadb-install-db --no-defaults --datadir="$datadir" --skip-test-db \
    --auth-root-authentication-method=socket >/dev/null || die "mariadb-install-db failed"
fi
mkdir -p "$STACK_DIR"
# The OS user mysql owns the data anyway: it gets the socket account root has on Debian (the
# health check and `docker compose exec mariadb mariadb` use it; no password, no network).
(umask 077; {
  db_grants_sql '%'
  echo "CREATE USER IF NOT EXISTS 'mysql'@'localhost' IDENTIFIED VIA unix_socket;"
  echo "GRANT ALL PRIVILEGES ON *.* TO 'mysql'@'localhost' WITH GRANT OPTION;"
} >"$STACK_DIR/init.sql")
# stack/launch/mariadbd.sh adds the fixed flags; this image's own: TCP on :3306 for the other
# containers (no name lookups of their addresses), the init file above.
exec "$STACK_REPO/stack/launch/mariadbd.sh" "$datadir" "$sock" /tmp/mariadbd.pid \
  --bind-address=0.0.0.0 --port=3306 --skip-name-resolve --init-file="$STACK_DIR/init.sql"
