#!/usr/bin/env bash
# render-config.sh [SERVICE...]: writes the configuration of each SERVICE (nginx, php-fpm, redis,
# varnish, wordpress; default all) into $STACK_DIR/conf, and wp-config.php to $WP_CONFIG (the
# WordPress tree's), from the current settings and secrets (stack/lib.sh). Safe to run again:
# files are rewritten. The native stack (make up) renders all of them; each compose image
# (stack/images/) renders its own service's with its own settings (listen addresses, database
# host, logs to stdout).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
load_secrets
(($#)) || set -- nginx php-fpm redis varnish wordpress
# Services run as their own users (lib.sh): each reaches only its own files. nginx workers and the
# PHP pool (the web user) traverse run/ to php-fpm's socket and read the WordPress tree; logs are
# private to their writer and the log directory cannot be listed. Secrets stay in 600 files.
mkdir -p "$CONF_DIR" "$RUN_DIR" "$LOG_DIR" "$STACK_DIR/tmp" "$DB_SOCKET_DIR"
chmod 755 "$STACK_DIR" "$RUN_DIR" "$CONF_DIR"
chmod 711 "$LOG_DIR"
own "$DB_OS_USER:$WEB_USER" 750 "$DB_SOCKET_DIR"
umask 077
# Logs: files private to their writer, or (STACK_LOG_STDOUT=1, in containers) the process's own
# stdout/stderr, which Docker collects.
if ((STACK_LOG_STDOUT)); then
  nginx_error=stderr nginx_access=/dev/stdout fpm_log=/proc/self/fd/2 php_log=""
else
  log_file nginx-error.log root
  log_file nginx-access.log root
  log_file php-fpm.log root
  log_file php-error.log "$WEB_USER"
  log_file mariadb-error.log "$DB_OS_USER"
  nginx_error=$LOG_DIR/nginx-error.log nginx_access=$LOG_DIR/nginx-access.log
  fpm_log=$LOG_DIR/php-fpm.log php_log="php_admin_value[error_log] = $LOG_DIR/php-error.log"
fi

# nginx: serves the WordPress tree on $WEB_LISTEN (127.0.0.1:$WEB_PORT), PHP through php-fpm's socket.
# The client's address: from X-Forwarded-For (Varnish sends the client's, last in the list) only
# when the request comes from Varnish's own address (WEB_TRUSTED_PROXIES: 127.0.0.1 natively,
# the varnish services' fixed addresses in compose); anyone else keeps its own address whatever
# it sends. WordPress's comment flood checks and login lockouts then count per client.
# Refused: PHP under wp-content/uploads (an uploaded script must never run), /wp-cron.php
# (both stacks run cron themselves, stack/services/wp-cron.sh, DISABLE_WP_CRON) and /xmlrpc.php
# unless WEB_XMLRPC=1 (Jetpack, the mobile apps and pingbacks need it; stack/README.md).
render_nginx() {
nginx_user=""; ((STACK_ROOT)) && nginx_user="user $WEB_USER;"
local real_ip="" proxy xmlrpc
for proxy in $WEB_TRUSTED_PROXIES; do
  [[ $proxy =~ ^[0-9a-fA-F.:/]+$ ]] || die "WEB_TRUSTED_PROXIES: '$proxy' is not an address or CIDR range"
  real_ip+="set_real_ip_from $proxy;"$'\n    '
done
[[ -n $real_ip ]] && real_ip+="real_ip_header X-Forwarded-For;"$'\n    '"real_ip_recursive off;"
xmlrpc="location = /xmlrpc.php { return 403; }   # WEB_XMLRPC=1 serves it"
((WEB_XMLRPC)) && xmlrpc="# /xmlrpc.php served (WEB_XMLRPC=1)"
cat >"$CONF_DIR/nginx.conf" <<CONF
$nginx_user
worker_processes 2;
pid $RUN_DIR/nginx.pid;
error_log $nginx_error warn;
events { worker_connections 512; }
http {
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  access_log $nginx_access;
  client_body_temp_path $STACK_DIR/tmp/nginx-body;
  fastcgi_temp_path $STACK_DIR/tmp/nginx-fastcgi;
  proxy_temp_path $STACK_DIR/tmp/nginx-proxy;
  uwsgi_temp_path $STACK_DIR/tmp/nginx-uwsgi;
  scgi_temp_path $STACK_DIR/tmp/nginx-scgi;
  client_max_body_size 32m;
  # wp-admin's Posts screen sends a bulk action on 999 posts as one GET (~17 KB of post[]=...).
  large_client_header_buffers 4 32k;
  server_tokens off;
  sendfile on;
  server {
    listen $WEB_LISTEN;
    root $WP_DIR;
    index index.php;
    $real_ip
    location / { try_files \$uri \$uri/ /index.php?\$args; }
    location ~ /\\. { deny all; }
    location = /wp-config.php { deny all; }
    location = /wp-cron.php { return 403; }   # cron runs from stack/services/wp-cron.sh
    $xmlrpc
    # Nothing under uploads is code: any PHP-like name there is refused, never handed to PHP.
    location ~* ^/wp-content/uploads/.*\\.(php[0-9]?|phtml|phar|pht|phps)(/|\$) { return 403; }
    location ~ \\.php\$ {
      try_files \$uri =404;
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;
      fastcgi_param HTTP_PROXY "";
      # Debian's fastcgi_params sets HTTP_HOST to \$host, which drops the port WordPress's
      # home URL carries (localhost:8080) and makes every page redirect to itself.
      fastcgi_param HTTP_HOST \$http_host;
      fastcgi_read_timeout 120s;
      fastcgi_pass unix:$RUN_DIR/php-fpm.sock;
    }
  }
}
CONF
}

# php-fpm: one pool on a unix socket only the web server's group may use; the pool runs as the
# web user (the master keeps root only to hand requests to it).
render_php_fpm() {
pool_user=""
((STACK_ROOT)) && pool_user="user = $WEB_USER
group = $WEB_USER
listen.owner = $WEB_USER
listen.group = $WEB_USER"
cat >"$CONF_DIR/php-fpm.conf" <<CONF
[global]
pid = $RUN_DIR/php-fpm.pid
error_log = $fpm_log
daemonize = yes
[www]
$pool_user
listen = $RUN_DIR/php-fpm.sock
listen.mode = 0660
pm = dynamic
pm.max_children = 8
pm.start_servers = 4
pm.min_spare_servers = 2
pm.max_spare_servers = 6
catch_workers_output = yes
$php_log
php_admin_flag[log_errors] = on
php_admin_value[memory_limit] = 256M
CONF
}

# redis: loopback only, password, the memory cap. The rest (foreground, log to stdout, the
# append-only file, noeviction) is stack/launch/redis-server.sh's, which runs it with this file:
# as the redis user (stack/services/redis.sh; its log goes to redis.log) or in the Valkey image.
render_redis() {
cat >"$CONF_DIR/redis.conf" <<CONF
bind $REDIS_BIND
port $REDIS_PORT
dir $REDIS_DATA_DIR
requirepass $REDIS_PASSWORD
# Full means refuse writes (maxmemory-policy noeviction): the purger answers 503 and senders retry.
maxmemory $REDIS_MAXMEMORY
CONF
own "$REDIS_OS_USER" 600 "$CONF_DIR/redis.conf"
}

# Varnish: the stack's own entry VCL, rendered from vcl/entry.vcl.in (vcl/render-entry.sh): this
# stack's nginx as the origin, with its probe and unprobed twin, the purge ACL on loopback and the
# purger's token read from this stack's file (readable by varnishd's users only); it includes
# microcache/sick-origin.vcl and microcache.vcl through vcl_path=<repo>/vcl.
render_varnish() {
printf '%s\n' "$VARNISH_PURGE_TOKEN" >"$CONF_DIR/varnish_purge_token"
((STACK_ROOT)) && chgrp varnish "$CONF_DIR/varnish_purge_token"
chmod 640 "$CONF_DIR/varnish_purge_token"
"$STACK_REPO/vcl/render-entry.sh" --backend "127.0.0.1:$WEB_PORT" --token-file "$CONF_DIR/varnish_purge_token" \
  >"$CONF_DIR/stack.vcl" || die "cannot write $CONF_DIR/stack.vcl"
chmod 644 "$CONF_DIR/stack.vcl"
}

# WordPress configuration (the Debian package's own wp-config.php reads /etc; ours does not).
# WordPress reaches the purger and its own loopback; every other outbound request is refused.
render_wordpress() {
local purger_host=${PURGER_URL#*://}
purger_host=${purger_host%%[:/]*}
q() { printf "'%s'" "${1//\'/\\\'}"; }
{
  echo "<?php"
  echo "// generated by stack/render-config.sh; rewritten by every make up"
  echo "define('DB_NAME', 'wordpress');"
  echo "define('DB_USER', 'wordpress');"
  echo "define('DB_PASSWORD', $(q "$DB_PASSWORD"));"
  echo "define('DB_HOST', $(q "$WP_DB_HOST"));"
  echo "define('DB_CHARSET', 'utf8mb4');"
  echo "define('DB_COLLATE', '');"
  for k in "${WP_KEYS[@]}"; do
    v=WP_$k; echo "define('$k', $(q "${!v}"));"
  done
  echo "\$table_prefix = 'wp_';"
  echo "define('WP_HOME', $(q "$SITE_URL"));"
  echo "define('WP_SITEURL', $(q "$SITE_URL"));"
  echo "define('WP_ENVIRONMENT_TYPE', 'local');"
  echo "define('DISABLE_WP_CRON', true); // stack/services/wp-cron.sh runs the due events"
  echo "define('AUTOMATIC_UPDATER_DISABLED', true);"
  echo "define('WP_AUTO_UPDATE_CORE', false);"
  echo "define('FS_METHOD', 'direct');"
  echo "// No calls home (update checks would stall wp-admin offline); loopback stays reachable."
  echo "define('WP_HTTP_BLOCK_EXTERNAL', true);"
  echo "define('WP_ACCESSIBLE_HOSTS', $(q "127.0.0.1,localhost,$purger_host"));"
  echo "define('WP_DEBUG', false);"
  echo "define('VARNISH_EDGE_PURGER_URL', $(q "$PURGER_URL"));"
  echo "define('VARNISH_EDGE_SECRET', $(q "$WEBHOOK_SECRET"));"
  echo "define('VARNISH_EDGE_NAMESPACE', $(q "$VARNISH_EDGE_NAMESPACE"));"
  echo "define('VARNISH_EDGE_TTL', $VARNISH_EDGE_TTL);"
  # The tree's path, not __DIR__: in the images wp-config.php is a link to this file elsewhere.
  echo "if (!defined('ABSPATH')) { define('ABSPATH', $(q "$WP_DIR/")); }"
  echo "require_once ABSPATH . 'wp-settings.php';"
} >"$WP_CONFIG"
own "root:$WEB_USER" 640 "$WP_CONFIG"   # the web user reads it, cannot change it
}

for service; do
  case $service in
    nginx) render_nginx ;;
    php-fpm) render_php_fpm ;;
    redis) render_redis ;;
    varnish) render_varnish ;;
    wordpress) render_wordpress ;;
    *) die "render-config: unknown service '$service' (nginx, php-fpm, redis, varnish, wordpress)" ;;
  esac
done
