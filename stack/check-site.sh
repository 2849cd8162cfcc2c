#!/usr/bin/env bash
# Refuses to call the stack ready unless the site really renders: the home page, straight from
# the origin and through Varnish, must be a non-empty HTML page with the active theme's markup
# and a link to the newest post. An empty 200 (no theme), a PHP error or an unreachable database
# ends with exit 1 and one line naming the cause. Run by stack/up.sh, so every suite that starts
# a stack checks it before its first request.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
load_secrets

fail() { die "the site does not render: $*"; }

status_out=$(STACK_WP_DIR=$WP_DIR STACK_SITE_HOST=$SITE_HOST as_user "$WEB_USER" php "$STACK_REPO/stack/wp/site-status.php" 2>&1) || true
status=$(sed -n 's/^SITE-STATUS //p' <<<"$status_out")
if [[ -z $status ]]; then
  if grep -qi 'database connection' <<<"$status_out"; then
    fail "database: WordPress cannot connect to MariaDB (socket $DB_SOCKET); see $LOG_DIR/mariadb-error.log"
  fi
  # shellcheck disable=SC2001  # a regex, not a fixed string
  fail "PHP error while loading WordPress: $(sed -e 's/<[^>]*>//g' <<<"$status_out" | grep -m1 -v '^\s*$' || echo 'no output')"
fi
field() { php -r '$s = json_decode($argv[1], true); $v = $s[$argv[2]]; echo is_bool($v) ? ($v ? "1" : "0") : $v;' "$status" "$1"; }

theme=$(field theme)
if [[ $(field theme_ok) != 1 ]]; then
  # Debian packages each bundled theme as wordpress-theme-<name> (twentytwentythree for 6.1's
  # default, twentytwentyfive for 6.7+'s); the stack activates the version's own default.
  if [[ $theme == twenty* ]]; then
    how="on Debian: apt-get install wordpress-theme-$theme (scripts/install-deps.sh)"
  else
    how="install it"
  fi
  [[ $WP_SOURCE == /usr/share/wordpress ]] || how+=" or add it to $WP_SOURCE/wp-content/themes"
  fail "no theme: the active theme '$theme' is not installed in $(field themes_dir) ($(field theme_error)); $how, then make up again"
fi
(($(field posts) > 0)) || fail "no published posts: the demo content was not created (stack/wp/demo-content.php)"
latest=$(field latest_url)
if [[ $(field block_theme) == 1 ]]; then marker='class="wp-site-blocks"'; else marker="/themes/$theme/"; fi

# check_page NAME URL: 200, HTML, the theme's markup, the newest post linked.
check_page() {
  local name=$1 url=$2 body code
  body=$(mktemp)
  code=$(curl -s -o "$body" -w '%{http_code}' --max-time 20 -H "Host: $SITE_HOST" "$url") || code=000
  local size; size=$(stat -c %s "$body")
  local why=""
  if [[ $code == 5* ]]; then
    why="status $code"
    grep -qi 'database connection' "$body" && fail "database: $name answers $code 'Error establishing a database connection'; see $LOG_DIR/mariadb-error.log"
    local fatal; fatal=$(grep -h 'PHP Fatal' "$LOG_DIR/php-error.log" "$LOG_DIR/php-fpm.log" 2>/dev/null | tail -1 || true)
    [[ -n $fatal ]] && fail "PHP error: $name answers $code: ${fatal#*] }"
  elif [[ $code != 200 ]]; then why="status $code"
  elif ((size == 0)); then why="an empty 200 (Content-Length 0)"
  elif ! grep -qi '<html' "$body"; then why="a 200 that is not HTML"
  elif ! grep -qF "$marker" "$body"; then why="no markup of the theme '$theme' ($marker)"
  elif ! grep -qF "$latest" "$body"; then why="no link to the newest post ($latest)"
  fi
  rm -f "$body"
  [[ -z $why ]] || fail "the home page $name is $why; see $LOG_DIR/"
}

check_page "from the origin (nginx :$WEB_PORT)" "http://127.0.0.1:$WEB_PORT/"
check_page "through Varnish (:$VARNISH_PORT)" "http://127.0.0.1:$VARNISH_PORT/"
log "site renders: theme $theme, $(field posts) posts, home page from the origin and through Varnish"
