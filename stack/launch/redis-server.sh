#!/usr/bin/env bash
# redis-server.sh [CONFIG_FILE] [--NAME VALUE...]             the store: Redis or Valkey
# redis-server.sh --sentinel CONFIG_FILE [--NAME VALUE...]    a Sentinel watching it
# The one way this project starts the purger's store: the native stack (stack/services/redis.sh,
# with the redis.conf stack/render-config.sh writes), the Valkey image
# (stack/images/valkey/start.sh: primary, replica, sentinel) and the test kit (testkit/redis.mjs).
# It puts the flags every store runs with after the configuration file and before the caller's
# own, and execs the server in the foreground: the pid and the signals are the caller's, as if
# it had run the server itself.
#
# The caller gives what differs per use, in its configuration file or as --NAME VALUE: bind,
# port, dir, requirepass, maxmemory (the stacks' REDIS_MAXMEMORY), appendfsync (Redis's
# everysec, or the tests' always), replicaof. A later option wins over one below.
# Environment:
#   STORE_SERVER    the program: redis-server (default) or valkey-server (the image,
#                   scripts/platforms.sh's Valkey cells)
#   STORE_SENTINEL  the Sentinel's: redis-sentinel (default) or valkey-sentinel. A Sentinel gets
#                   no fixed flag: its file (which it rewrites) says everything.
#
# The fixed flags of the store, and why:
#   --daemonize no --logfile ""    in the foreground, logging to stdout: the caller keeps the pid
#                                  and the output (the native stack's redis.log, the container's log)
#   --appendonly yes               every write goes to the append-only file: the purger's accepted
#                                  events, cursors and receipts survive a restart
#   --save ""                      and no RDB snapshots besides it
#   --maxmemory-policy noeviction  full means refuse writes, never evict: the purger answers 503
#                                  and senders retry; nothing is lost (Redis's default, said here
#                                  because the purger depends on it)
set -euo pipefail
if [[ ${1:-} == --sentinel ]]; then
  shift
  [[ -n ${1:-} ]] || { echo "usage: $0 --sentinel CONFIG_FILE [--NAME VALUE...]" >&2; exit 2; }
  exec "${STORE_SENTINEL:-redis-sentinel}" "$@"
fi
conf=()
[[ $# -gt 0 && $1 != --* ]] && { conf=("$1"); shift; }   # the server reads a file only as its first argument
exec "${STORE_SERVER:-redis-server}" "${conf[@]}" --daemonize no --logfile "" --appendonly yes --save "" \
  --maxmemory-policy noeviction "$@"
