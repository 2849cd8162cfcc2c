# shellcheck shell=bash
# shellcheck disable=SC2034  # settings read by the scripts that source this file
# Shared helpers and configuration for the native stack scripts (sourced, never run).
# Every setting can be overridden from the environment; see stack/README.md.

PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin
STACK_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STACK_DIR=${STACK_DIR:-$STACK_REPO/.stack}
VARNISH_PORT=${VARNISH_PORT:-8080}
WEB_PORT=${WEB_PORT:-8081}
PURGER_PORT=${PURGER_PORT:-8090}
REDIS_PORT=${REDIS_PORT:-6380}
SITE_HOST=${SITE_HOST:-localhost:$VARNISH_PORT}
SITE_URL="http://$SITE_HOST"
WP_ADMIN_USER=${WP_ADMIN_USER:-admin}
DEMO_POSTS=${DEMO_POSTS:-300}
WP_CRON_INTERVAL=${WP_CRON_INTERVAL:-30}
VARNISH_EDGE_NAMESPACE=${VARNISH_EDGE_NAMESPACE:-wp1}
VARNISH_EDGE_TTL=${VARNISH_EDGE_TTL:-86400}
PURGER_REPURGE_DELAYS_MS=${PURGER_REPURGE_DELAYS_MS:-300,2000}
VARNISH_STORAGE=${VARNISH_STORAGE:-malloc,256m}
REDIS_MAXMEMORY=${REDIS_MAXMEMORY:-512mb}   # the purger's log and receipts; writes refused (not evicted) beyond
WP_SOURCE=${WP_SOURCE:-/usr/share/wordpress}   # the WordPress tree make up copies (Debian's package)
# Where each service listens and finds the others: loopback on this machine by default; the
# compose images (stack/images/) set them to their own addresses.
WEB_LISTEN=${WEB_LISTEN:-127.0.0.1:$WEB_PORT}
# The addresses Varnish reaches the origin from: nginx believes X-Forwarded-For from these only
# (space-separated addresses or CIDR ranges; compose: the varnish services' fixed addresses).
WEB_TRUSTED_PROXIES=${WEB_TRUSTED_PROXIES-127.0.0.1}
WEB_XMLRPC=${WEB_XMLRPC:-0}   # 1: nginx serves /xmlrpc.php (Jetpack, mobile apps, pingbacks)
PURGER_URL=${PURGER_URL:-http://127.0.0.1:$PURGER_PORT}
REDIS_BIND=${REDIS_BIND:-127.0.0.1}
STACK_LOG_STDOUT=${STACK_LOG_STDOUT:-0}   # 1: services log to stdout/stderr (containers), not $LOG_DIR

RUN_DIR=$STACK_DIR/run
LOG_DIR=$STACK_DIR/log
CONF_DIR=$STACK_DIR/conf
SECRETS_FILE=$STACK_DIR/secrets.env
WP_DIR=${STACK_WP_DIR:-$STACK_DIR/wordpress}
WP_CONFIG=${WP_CONFIG:-$WP_DIR/wp-config.php}
REDIS_DATA_DIR=${REDIS_DATA_DIR:-$STACK_DIR/redis}

# Services in start order; stop runs them backwards.
STACK_SERVICES=(mariadb redis php-fpm nginx purger varnish wp-cron)

# Least privilege. Started as root, every service runs as an unprivileged user of its own, as the
# Debian packages do: the PHP pool, nginx's workers and WordPress's CLI scripts as the web user,
# MariaDB as mysql, Redis as redis, the purger as a system user of its own; varnishd drops to its
# own users. Only the masters that must hand work to those users (nginx, php-fpm, varnishd) and
# the wp-cron timer loop keep root. Started as anyone else, everything runs as that user.
STACK_ROOT=0; [[ $(id -u) -eq 0 ]] && STACK_ROOT=1
WEB_USER=${STACK_WEB_USER:-www-data}
DB_OS_USER=mysql
REDIS_OS_USER=redis
PURGER_OS_USER=${STACK_PURGER_USER:-varnish-edge}
if ((!STACK_ROOT)); then WEB_USER=$(id -un) DB_OS_USER=$WEB_USER REDIS_OS_USER=$WEB_USER PURGER_OS_USER=$WEB_USER; fi
DB_SOCKET_DIR=$RUN_DIR/mysqld   # mysql may write here; its group (the web user) may connect
DB_SOCKET=$DB_SOCKET_DIR/mysqld.sock
WP_DB_HOST=${WP_DB_HOST:-localhost:$DB_SOCKET}   # WordPress's DB_HOST

# service_users: the users above must exist (the packages create www-data, mysql and redis; the
# purger's is created here).
service_users() {
  ((STACK_ROOT)) || return 0
  local u
  for u in "$WEB_USER" "$DB_OS_USER" "$REDIS_OS_USER"; do
    id -u "$u" >/dev/null 2>&1 || die "no system user '$u' (created by the nginx/php-fpm, mariadb-server and redis-server packages; run scripts/install-deps.sh)"
  done
  id -u "$PURGER_OS_USER" >/dev/null 2>&1 \
    || useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$PURGER_OS_USER" \
    || die "cannot create the system user '$PURGER_OS_USER' for the purger"
}

# drop_to USER: sets DROP to the command prefix that runs a program as USER (empty unless root).
drop_to() {
  DROP=()
  if ((STACK_ROOT)) && [[ $1 != root ]]; then
    DROP=(setpriv --reuid="$1" --regid="$1" --init-groups --inh-caps=-all --)
  fi
}
# as_user USER COMMAND...: run COMMAND as USER.
as_user() { local DROP; drop_to "$1"; shift; "${DROP[@]}" "$@"; }

# own OWNER[:GROUP] MODE PATH...: chown (as root) and chmod.
own() {
  local owner=$1 mode=$2; shift 2
  if ((STACK_ROOT)); then chown "$owner" "$@"; fi
  chmod "$mode" "$@"
}

# log_file NAME OWNER: a log the service opens itself, created private to its writer (access logs
# hold password-reset keys in query strings).
log_file() {
  local f=$LOG_DIR/$1
  [[ -e $f ]] || : >"$f"
  own "$2" 600 "$f"
}

log() { printf 'stack: %s\n' "$*" >&2; }
die() { printf 'stack: error: %s\n' "$*" >&2; exit 1; }

# pid_of NAME: the pid recorded for a service, if that process still runs.
pid_of() {
  local f=$RUN_DIR/$1.pid pid
  [[ -s $f ]] || return 1
  pid=$(tr -dc '0-9' <"$f")
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && { echo "$pid"; return 0; }
  return 1
}
is_running() { pid_of "$1" >/dev/null; }

# port_busy PORT: true when something accepts connections on 127.0.0.1:PORT.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# require_free_port PORT VARNAME: refuse to start with a clear message.
require_free_port() {
  port_busy "$1" && die "port $1 is already in use on 127.0.0.1; set $2 to a free port (e.g. $2=$(( $1 + 100 )) make up)"
  return 0
}

# wait_until DEADLINE_SECONDS DESCRIPTION COMMAND...: poll until COMMAND succeeds.
wait_until() {
  local limit=$1 what=$2; shift 2
  local end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < end)) || { log "timed out after ${limit}s waiting for $what"; return 1; }
    sleep 0.2
  done
}

# http_ok URL [HOST]: the URL answers with a 2xx/3xx status.
http_ok() {
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 ${2:+-H "Host: $2"} "$1") || return 1
  [[ $code =~ ^[23] ]]
}

# spawn NAME COMMAND...: run COMMAND in the background in its own session, output to
# $LOG_DIR/NAME.log, pid to $RUN_DIR/NAME.pid.
spawn() {
  local name=$1; shift
  (umask 077; : >>"$LOG_DIR/$name.log")
  setsid "$@" >>"$LOG_DIR/$name.log" 2>&1 </dev/null &
  echo $! >"$RUN_DIR/$name.pid"
}

# stop_pid NAME [group]: TERM the recorded process (with "group": its whole process group,
# as started by spawn), then KILL after a grace period.
stop_pid() {
  local name=$1 target pid
  pid=$(pid_of "$name") || { rm -f "$RUN_DIR/$name.pid"; return 0; }
  target=$pid; [[ ${2:-} == group ]] && target=-$pid
  kill -TERM -- "$target" 2>/dev/null
  local end=$((SECONDS + 20))
  while kill -0 "$pid" 2>/dev/null && ((SECONDS < end)); do sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -KILL -- "$target" 2>/dev/null
  rm -f "$RUN_DIR/$name.pid"
}

# Random secrets: rand_b64 N (base64 of N random bytes), rand_token N (alphanumeric).
rand_b64() { head -c "$1" /dev/urandom | base64 | tr -d '\n'; }
rand_token() { head -c "$1" /dev/urandom | base64 | tr -d '\n/+='; }

# The secrets both stacks use (native secrets.env and compose .env), with their generators.
secret_value() {
  case $1 in
    WEBHOOK_SECRET) echo "whsec_$(rand_b64 32)" ;;
    OPERATOR_TOKEN) rand_token 32 ;;
    ADMIN_PASSWORD) rand_token 18 ;;
    *) rand_token 24 ;;
  esac
}
STACK_SECRETS=(DB_PASSWORD REDIS_PASSWORD WEBHOOK_SECRET OPERATOR_TOKEN ADMIN_PASSWORD VARNISH_PURGE_TOKEN)
WP_KEYS=(AUTH_KEY SECURE_AUTH_KEY LOGGED_IN_KEY NONCE_KEY AUTH_SALT SECURE_AUTH_SALT LOGGED_IN_SALT NONCE_SALT)

# load_secrets: the secrets as variables, from $SECRETS_FILE (native), or with STACK_SECRETS_DIR
# (the compose images) one file per secret named in lower case (db_password...), as Docker
# mounts them at /run/secrets; a container gets only the files its service needs
# (stack/compose/secrets.sh). wp_keys holds WordPress's keys and salts (WP_AUTH_KEY=...).
load_secrets() {
  if [[ -n ${STACK_SECRETS_DIR:-} ]]; then
    local k f
    for k in "${STACK_SECRETS[@]}"; do
      f=$STACK_SECRETS_DIR/${k,,}
      [[ -r $f ]] && printf -v "$k" '%s' "$(<"$f")"
    done
    # shellcheck disable=SC1091
    [[ -r $STACK_SECRETS_DIR/wp_keys ]] && source "$STACK_SECRETS_DIR/wp_keys"
    return 0
  fi
  [[ -r $SECRETS_FILE ]] || die "no $SECRETS_FILE; run make up first"
  # shellcheck disable=SC1090
  source "$SECRETS_FILE"
}

# db_grants_sql HOST: creates the `wordpress` database and its user at HOST ('localhost' for the
# native stack's socket, '%' for compose's network) with DB_PASSWORD; safe to run on every start.
db_grants_sql() {
  local pw=${DB_PASSWORD//\\/\\\\}
  pw=${pw//\'/\\\'}
  cat <<SQL
CREATE DATABASE IF NOT EXISTS wordpress CHARACTER SET utf8mb4;
CREATE USER IF NOT EXISTS 'wordpress'@'$1' IDENTIFIED BY '$pw';
ALTER USER 'wordpress'@'$1' IDENTIFIED BY '$pw';
GRANT ALL PRIVILEGES ON wordpress.* TO 'wordpress'@'$1';
SQL
}

php_fpm_bin() { printf '%s\n' /usr/sbin/php-fpm* | grep -E '/php-fpm[0-9.]*$' | sort -V | tail -1; }

# free_ports N: prints N distinct free loopback TCP ports (for tests).
free_ports() {
  python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}
