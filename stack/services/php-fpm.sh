#!/usr/bin/env bash
# php-fpm.sh start|stop: the PHP FastCGI pool nginx hands WordPress requests to (the pool runs as
# the web user; stack/render-config.sh writes its configuration).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
case ${1:-} in
start)
  is_running php-fpm && exit 0
  bin=$(php_fpm_bin); [[ -n $bin ]] || die "php-fpm not found (install php-fpm)"
  "$bin" --fpm-config "$CONF_DIR/php-fpm.conf" || die "php-fpm failed; see $LOG_DIR/php-fpm.log"
  wait_until 30 "php-fpm socket" test -S "$RUN_DIR/php-fpm.sock" || die "php-fpm did not start; see $LOG_DIR/php-fpm.log"
  ;;
stop) stop_pid php-fpm ;;
*) die "usage: $0 start|stop" ;;
esac
