#!/usr/bin/env bash
# The stock WordPress container (testdata/stock-wordpress/Dockerfile): on first start, the site
# set up as Debian's README.Debian says for SITE_DOMAIN (default blog.example.test), nginx
# listening on LISTEN (default 80; the test runs it on the Docker host's network, on the bridge's
# address, as a site on the host):
#   - /etc/wordpress/config-<domain>.php as examples/setup-mysql writes it, its database and user;
#   - nginx from examples/nginx-wordpress.conf (server_name and the php-fpm socket adjusted),
#     plus any lines in /etc/nginx/origin-extra.conf (the README's lines for an origin behind the
#     edge: the test mounts them there, taken from README.md);
# then MariaDB, php-fpm and nginx in the foreground. WordPress's installer is left to the test
# (install.php, as a person would).
set -euo pipefail
domain=${SITE_DOMAIN:-blog.example.test}
listen=${LISTEN:-80}
config=/etc/wordpress/config-$domain.php
php_fpm=$(find /usr/sbin -name 'php-fpm*' | sort -V | tail -n 1)
php_version=${php_fpm#/usr/sbin/php-fpm}

mkdir -p /run/mysqld /run/php && chown mysql:mysql /run/mysqld
# The socket only: on the host's network a TCP port could meet the host's own MariaDB.
mariadbd --user=mysql --skip-networking &
for _ in $(seq 1 60); do mariadb -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 1; done

if [[ ! -f $config ]]; then
  password=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
  secret=$(head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
  mariadb <<SQL
CREATE DATABASE IF NOT EXISTS wordpress;
CREATE USER IF NOT EXISTS 'wordpress'@'localhost' IDENTIFIED BY '$password';
GRANT SELECT,INSERT,UPDATE,DELETE,CREATE,DROP,ALTER ON wordpress.* TO 'wordpress'@'localhost';
FLUSH PRIVILEGES;
SQL
  (umask 0027; cat >"$config" <<PHP
<?php
define('DB_NAME', 'wordpress');
define('DB_USER', 'wordpress');
define('DB_PASSWORD', '$password');
define('DB_HOST', 'localhost');
define('SECRET_KEY', '$secret');
define('WP_CONTENT_DIR', '/var/lib/wordpress/wp-content');
define('FS_METHOD', 'direct');
?>
PHP
  )
  chgrp www-data "$config"
  chown -R www-data:www-data /var/lib/wordpress/wp-content
  sed -e "s/server_name .*/server_name $domain;\n    listen $listen;\n    include \/etc\/nginx\/origin-extra[.]conf;/" \
      -e "s#fastcgi_pass .*#fastcgi_pass unix:/run/php/php$php_version-fpm.sock;#" \
      /usr/share/doc/wordpress/examples/nginx-wordpress.conf >/etc/nginx/sites-enabled/wordpress
fi

"$php_fpm" --nodaemonize &
nginx -g 'daemon off;' &
wait -n
echo "stock-wordpress: a server ended" >&2
exit 1
