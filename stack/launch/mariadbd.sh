#!/usr/bin/env bash
# mariadbd.sh DATADIR SOCKET PIDFILE [MARIADBD_OPTION...]: the one way this project starts
# mariadbd: the native stack (stack/services/mariadb.sh), the MariaDB image
# (stack/images/mariadb/start.sh) and the plugin's PHPUnit tests
# (wordpress-plugin/tests/support/Environment.php). It puts the flags every one of them runs with
# first, the caller's after, and execs mariadbd in the foreground: the pid and the signals are
# the caller's, as if it had run mariadbd itself.
#
# The caller gives the data directory, the unix socket and the pid file, then what differs per
# use as mariadbd options: how clients reach it (--skip-networking, or --bind-address/--port),
# --user, --log-error, --init-file, durability (--innodb-flush-log-at-trx-commit) and sizes of
# its own (a later option wins over one below: the tests' 64M buffer pool and 16M redo log).
#
# The fixed flags, and why:
#   --no-defaults                   no my.cnf of the machine's (Debian's /etc/mysql): everything
#                                   the server runs with is on this line (mariadbd wants it first)
#   --skip-log-bin                  one server, no replica and no point-in-time recovery: no
#                                   binary log to write or to fill the disk with
#   --character-set-server=utf8mb4  WordPress's charset (DB_CHARSET utf8mb4), the server's default
#                                   too, whatever the MariaDB version's own default
#   --innodb-buffer-pool-size=128M  WordPress's tables and indexes in memory (MariaDB's default
#                                   size, said here as the choice it is)
set -euo pipefail
(($# >= 3)) || { echo "usage: $0 DATADIR SOCKET PIDFILE [MARIADBD_OPTION...]" >&2; exit 2; }
datadir=$1 socket=$2 pidfile=$3
shift 3
PATH=$PATH:/usr/sbin   # mariadbd, for callers whose PATH lacks it (tests as an ordinary user)
exec mariadbd --no-defaults --datadir="$datadir" --socket="$socket" --pid-file="$pidfile" \
  --skip-log-bin --character-set-server=utf8mb4 --innodb-buffer-pool-size=128M "$@"
