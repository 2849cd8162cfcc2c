#!/usr/bin/env bash
# Lays out the WordPress tree under $STACK_DIR/wordpress (a copy of $WP_SOURCE, Debian's
# /usr/share/wordpress by default, whose own wp-config.php reads /etc), links the plugin in, and
# (with "install") installs the site, demo content and the plugin. Idempotent.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
src=$WP_SOURCE
plugin=$STACK_REPO/wordpress-plugin/varnish-edge

# wp_version DIR: the WordPress version of the tree at DIR (wp-includes/version.php's $wp_version).
wp_version() { sed -n "s/^\\\$wp_version *= *'\\([^']*\\)'.*/\\1/p" "$1/wp-includes/version.php" 2>/dev/null; }

# refresh_core: security releases arrive as a new Debian package (apt upgrades /usr/share/wordpress)
# or a new image; when the source's core is another version than the copy's, the core (everything
# but wp-content/ and wp-config.php) is copied again, and `install` upgrades the database.
refresh_core() {
  local have want stage
  have=$(wp_version "$WP_DIR") want=$(wp_version "$src")
  [[ -n $want && $have != "$want" ]] || return 0
  if [[ ! -w $WP_DIR/wp-includes ]]; then
    log "wordpress: the tree holds $have, $src $want, and the tree is read-only (an image: rebuild it)"
    return 0
  fi
  log "wordpress: refreshing core $have -> $want from $src (wp-content and wp-config.php kept)"
  stage=$STACK_DIR/wordpress-core.new
  rm -rf "$stage" "$STACK_DIR/wordpress-core.old"
  "$STACK_REPO/stack/copy-wordpress.sh" --core "$src" "$stage"
  # wp-admin and wp-includes are swapped whole (files a release removed go too), then the
  # top-level files are copied over.
  mkdir -p "$STACK_DIR/wordpress-core.old"
  local d
  for d in wp-admin wp-includes; do
    mv "$WP_DIR/$d" "$STACK_DIR/wordpress-core.old/$d"
    mv "$stage/$d" "$WP_DIR/$d"
  done
  (cd "$stage" && tar -cf - .) | (cd "$WP_DIR" && tar -xf -)
  rm -rf "$stage" "$STACK_DIR/wordpress-core.old"
  log "wordpress: core is $(wp_version "$WP_DIR") now"
}

layout() {
  # A tree copied before copy-wordpress.sh resolved Debian's links is copied again over itself.
  if [[ ! -f $WP_DIR/wp-settings.php || -n $(find "$WP_DIR" -xtype l -print -quit) ]]; then
    log "wordpress: copying $src to $WP_DIR"
    # PHP resolves symlinks in __DIR__, so the entry points must be real files in our tree.
    "$STACK_REPO/stack/copy-wordpress.sh" "$src" "$WP_DIR"
  fi
  refresh_core
  mkdir -p "$WP_DIR/wp-content/uploads" "$WP_DIR/wp-content/plugins" "$WP_DIR/wp-content/mu-plugins" "$WP_DIR/wp-content/themes"
  chmod 755 "$WP_DIR"
  # WordPress (the web user) writes media and nothing else; the code stays root's.
  ((STACK_ROOT)) && chown -R "$WEB_USER:$WEB_USER" "$WP_DIR/wp-content/uploads"
  # Themes installed after the first copy (Debian ships each as its own package) join the tree.
  local theme
  for theme in "$src"/wp-content/themes/*/; do
    [[ -d $theme && ! -e $WP_DIR/wp-content/themes/$(basename "$theme") ]] || continue
    log "wordpress: adding theme $(basename "$theme")"
    cp -a "${theme%/}" "$WP_DIR/wp-content/themes/"
  done
  # edge-probe: Varnish's probe (any Host) sees /robots.txt instead of a canonical 301;
  # demo-price: a custom field printed on posts, as shops print prices. Same files as compose.
  cp "$STACK_REPO"/stack/mu-plugins/*.php "$WP_DIR/wp-content/mu-plugins/"
  if [[ -d $plugin ]]; then
    ln -sfn "$plugin" "$WP_DIR/wp-content/plugins/varnish-edge"
  fi
}

# wp_php SCRIPT [ARG...]: stack/wp/SCRIPT.php as the web user. Only the install step gets the
# admin password (ADMIN_PASSWORD, it sets it); no other PHP run (cron, every 30 s) has it in its
# environment, where any plugin's getenv() would read it.
wp_php() {
  local admin=()
  if [[ $1 == install ]]; then
    load_secrets
    [[ -n ${ADMIN_PASSWORD:-} ]] || die "no admin_password: the install step needs it"
    admin=("STACK_ADMIN_PASSWORD=$ADMIN_PASSWORD")
  fi
  as_user "$WEB_USER" env STACK_WP_DIR="$WP_DIR" STACK_SITE_HOST="$SITE_HOST" STACK_ADMIN_USER="$WP_ADMIN_USER" \
    STACK_DEMO_POSTS="$DEMO_POSTS" "${admin[@]}" php -d memory_limit=512M "$STACK_REPO/stack/wp/$1.php" "${@:2}"
}

case ${1:-} in
layout) layout ;;
upgrade) wp_php upgrade ;;
install)
  wp_php upgrade   # the database of an installed site follows its core (refresh_core above)
  wp_php install
  wp_php demo-content
  [[ -d $plugin ]] || die "wordpress-plugin/varnish-edge is not there yet"
  wp_php activate-plugin
  wp_php run-cron   # the first run has a backlog (update checks...); drain it now
  ;;
cron) wp_php run-cron ;;
flush-outbox) wp_php flush-outbox ;;
app-password) wp_php app-password "${2:-stack}" ;;
change) wp_php change "${@:2}" ;;
*) die "usage: $0 layout|upgrade|install|cron|flush-outbox|app-password [NAME]|change KIND ARG... (stack/wp/change.php)" ;;
esac
