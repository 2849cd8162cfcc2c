#!/bin/bash
# Entrypoint of the compose "wordpress" service: the official image's entrypoint prepares
# /var/www/html and wp-config.php and starts Apache; on first start this script then installs
# the site, demo content and the varnish-edge plugin with the same PHP scripts `make up` uses.
set -euo pipefail
docker-entrypoint.sh apache2-foreground &
apache=$!
trap 'kill -TERM "$apache" 2>/dev/null; wait "$apache"' TERM INT

for _ in $(seq 1 120); do
  [[ -f /var/www/html/wp-config.php && -f /var/www/html/wp-settings.php ]] && break
  sleep 1
done
export STACK_WP_DIR=/var/www/html STACK_SITE_HOST=${SITE_HOST:-localhost:8080}
if [[ ! -f /var/www/html/.stack-installed ]]; then
  for _ in $(seq 1 60); do php /stack/wp/install.php && break; sleep 2; done
  php /stack/wp/demo-content.php
  php /stack/wp/activate-plugin.php
  touch /var/www/html/.stack-installed
fi
wait "$apache"
