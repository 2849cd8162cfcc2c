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
PURGER_REPURGE_DELAYS_MS=${PURGER_REPURGE_DELAYS_MS-}
PURGER_REFRESH_CONCURRENCY=${PURGER_REFRESH_CONCURRENCY:-4}
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

# The secrets both stacks use, their generators and their rules: stack/settings.table, read when
# needed (the compose images that only load their own secrets do not carry it).
SETTINGS_TABLE=$STACK_REPO/stack/settings.table
WP_KEYS=(AUTH_KEY SECURE_AUTH_KEY LOGGED_IN_KEY NONCE_KEY AUTH_SALT SECURE_AUTH_SALT LOGGED_IN_SALT NONCE_SALT)

# settings_rows KIND: the table's rows of KIND (secret, setting, rule).
settings_rows() {
  [[ -r $SETTINGS_TABLE ]] || die "no $SETTINGS_TABLE"
  awk -v kind="$1" '$1 !~ /^#/ && NF >= 6 && $2 == kind' "$SETTINGS_TABLE"
}
# settings_field NAME COLUMN: one field of NAME's row (3 NATIVE, 4 COMPOSE, 5 RULE, 6 READERS,
# 7 the description).
settings_field() {
  [[ -r $SETTINGS_TABLE ]] || die "no $SETTINGS_TABLE"
  awk -v name="$1" -v col="$2" '$1 == name && NF >= 6 {
    if (col < 7) print $col; else { for (i = 1; i < 7; i++) $i = ""; sub(/^ +/, ""); print }
    exit
  }' "$SETTINGS_TABLE"
}
stack_secrets() { settings_rows secret | awk '{ print $1 }'; }

# secret_value NAME: a fresh value from NAME's generator (WP_KEYS: WP_<key>='...' lines).
secret_value() {
  local gen k
  gen=$(settings_field "$1" 3)
  case $gen in
    whsec) echo "whsec_$(rand_b64 32)" ;;
    random[1-9]*) rand_token "${gen#random}" ;;
    wpkeys) for k in "${WP_KEYS[@]}"; do echo "WP_$k='$(rand_b64 48)'"; done ;;
    *) die "stack/settings.table: $1 has no generator ('$gen')" ;;
  esac
}

# value_problem NAME VALUE: says what is wrong with VALUE for NAME (its rule, matched after
# trimming surrounding whitespace), or nothing when it fits. Never prints the value.
value_problem() {
  local LC_ALL=C rule regex value=$2
  rule=$(settings_field "$1" 5)
  [[ -n $rule && $rule != - ]] || return 0
  regex=$(settings_field "$rule" 3)
  value=${value#"${value%%[![:space:]]*}"}
  value=${value%"${value##*[![:space:]]}"}
  [[ $value =~ $regex ]] || echo "$1 must be $(settings_field "$rule" 7)"
}

# load_secrets: the secrets as variables, from $SECRETS_FILE (native), or with STACK_SECRETS_DIR
# (the compose images) one file per secret named in lower case (db_password...), as Docker
# mounts them at /run/secrets; a container gets only the files its service needs
# (stack/compose/secrets.sh). wp_keys holds WordPress's keys and salts (WP_AUTH_KEY=...).
load_secrets() {
  if [[ -n ${STACK_SECRETS_DIR:-} ]]; then
    local f name
    for f in "$STACK_SECRETS_DIR"/*; do
      name=${f##*/}
      [[ -r $f && $name =~ ^[a-z][a-z0-9_]*$ ]] || continue
      # shellcheck disable=SC1090
      if [[ $name == wp_keys ]]; then source "$f"; else printf -v "${name^^}" '%s' "$(<"$f")"; fi
    done
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
