# shellcheck shell=bash
# The native stack for a test or a benchmark: one way, for every suite that needs one (e2e,
# reliability, k6, bench). Sourced from the repository root, never run.
#
#   free_ports N             N distinct free loopback TCP ports, space-separated (bin/free-port.mjs,
#                            the picker every suite uses)
#   temp_stack_env NAME      a new /tmp/NAME-stack.XXXXXX and free loopback ports for a stack,
#                            nothing started: exports STACK_DIR, the ports and the stack's
#                            settings, sources stack/lib.sh for its helpers
#   temp_stack_up NAME       temp_stack_env, then stack/up.sh; DEMO_POSTS and the other stack
#                            settings pass through
#   with_temp_stack NAME CMD...  CMD in temp_stack_env's environment, then temp_stack_down: for
#                            tests that run the stack's steps themselves (tests/e2e/site-check,
#                            core-refresh, through testkit/stack.mjs); returns CMD's status
#   run_e2e NAME             tests/e2e/e2e.mjs against the stack STACK_CTL drives (below)
#   browser_test NAME SCRIPT [VAR=VALUE...]  wordpress-plugin/tests/browser/SCRIPT in Chromium as
#                            the stack's admin (WP_USER, WP_PASS) with VARs; fails on what it
#                            saw and on any PHP warning or error logged meanwhile
#   wp_admin_walk NAME URL   browser_test of the wp-admin walk (wp-admin-walk.mjs) at URL
#   editor_live NAME         browser_test of the block editor's live notice (editor-live.mjs) on
#                            the native stack: stops and starts its Varnish; screenshots in
#                            .results/e2e/
#   browser_kit              npm ci in wordpress-plugin/tests/browser when playwright-core is missing
#   temp_stack_down [keep-logs]  stops every process recorded under STACK_DIR (the stack's and any
#                            a caller added there, such as bench's microcaches) and removes it;
#                            with keep-logs, prints the tail of each log first.

free_ports() { node "$(dirname "${BASH_SOURCE[0]}")/bin/free-port.mjs" "$@"; }

temp_stack_env() {
  read -r VARNISH_PORT WEB_PORT PURGER_PORT REDIS_PORT < <(free_ports 4)
  STACK_DIR=$(mktemp -d "/tmp/$1-stack.XXXXXX")
  chmod 755 "$STACK_DIR"   # services running as other users reach their directories
  export STACK_DIR VARNISH_PORT WEB_PORT PURGER_PORT REDIS_PORT STACK_REPO
  export SITE_HOST=localhost:$VARNISH_PORT STACK_SKIP_DEPS=1
  source stack/lib.sh   # after the settings above: its paths and defaults follow them
  echo "$1: stack in $STACK_DIR (varnish $VARNISH_PORT, nginx $WEB_PORT, purger $PURGER_PORT, redis $REDIS_PORT)"
}

temp_stack_up() {
  temp_stack_env "$1"
  local start=$SECONDS
  stack/up.sh >"$STACK_DIR/up.log" 2>&1 || { tail -n 30 "$STACK_DIR/up.log"; echo "$1: the stack did not start"; return 1; }
  echo "$1: stack up in $((SECONDS - start)) s"
}

temp_stack_down() {
  [[ -n ${STACK_DIR:-} && -d $STACK_DIR ]] || return 0
  stack/down.sh >/dev/null 2>&1
  local f
  for f in "$RUN_DIR"/*.pid; do
    [[ -e $f ]] && stop_pid "$(basename "$f" .pid)"
  done
  if [[ ${1:-} == keep-logs ]]; then
    for f in "$STACK_DIR"/log/*.log "$STACK_DIR/up.log"; do
      [[ -s $f && $f != *mariadb-install.log && $f != *nginx-access.log ]] || continue
      echo "──── tail $f"; tail -n 20 "$f"
    done
  fi
  rm -rf "$STACK_DIR"
}

with_temp_stack() {
  local name=$1 rc
  shift
  temp_stack_env "$name" || return 1
  "$@"
  rc=$?
  if ((rc != 0)); then temp_stack_down keep-logs; else temp_stack_down; fi
  return $rc
}

# run_e2e NAME: tests/e2e/e2e.mjs against the stack STACK_CTL drives (stack/ctl.sh, or
# stack/compose/ctl.sh), reached on the exported VARNISH_PORT, WEB_PORT, PURGER_PORT and
# SITE_HOST; the admin's password, the operator token and a new application password come
# through STACK_CTL.
run_e2e() {
  local app admin op
  app=$("$STACK_CTL" wp app-password e2e | tail -n 1) || app=""
  [[ -n $app ]] || { echo "$1: cannot create an application password"; return 1; }
  if ! admin=$("$STACK_CTL" secret admin_password) || ! op=$("$STACK_CTL" secret operator_token); then
    echo "$1: cannot read the stack's secrets"; return 1
  fi
  E2E_USER=${WP_ADMIN_USER:-admin} E2E_ADMIN_PASSWORD=$admin E2E_APP_PASSWORD=$app OPERATOR_TOKEN=$op \
    STACK_CTL=$STACK_CTL timeout 600 node --test-reporter=spec tests/e2e/e2e.mjs
}

browser_kit() {
  local dir
  dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../wordpress-plugin/tests/browser" && pwd)
  [[ -d $dir/node_modules/playwright-core ]] && return 0
  echo "npm ci (wordpress-plugin/tests/browser)"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
}

browser_test() {
  local name=$1 script=$2 admin before out rc php
  shift 2
  browser_kit || { echo "$name: cannot install the browser kit"; return 1; }
  admin=$("$STACK_CTL" secret admin_password) || { echo "$name: cannot read the admin password"; return 1; }
  before=$("$STACK_CTL" php-log | wc -l)
  out=$(env WP_USER="${WP_ADMIN_USER:-admin}" WP_PASS="$admin" "$@" \
    timeout 300 node "$(dirname "${BASH_SOURCE[0]}")/../wordpress-plugin/tests/browser/$script" 2>&1)
  rc=$?
  php=$("$STACK_CTL" php-log | tail -n +$((before + 1)) | grep -E 'PHP (Warning|Fatal error|Parse error)|WordPress database error')
  echo "$name: $script: ${out##*$'\n'}"
  if [[ -n $php ]]; then
    echo "$name: PHP logged during $script:"; echo "$php" | head -n 20; rc=1
  fi
  ((rc == 0)) || { echo "$out" | tail -n 30; return 1; }
}

wp_admin_walk() { browser_test "$1" wp-admin-walk.mjs "WP_URL=$2"; }

editor_live() {
  browser_test "$1" editor-live.mjs "WP_URL=http://$SITE_HOST" "WP_ORIGIN=http://127.0.0.1:$WEB_PORT" \
    "EDGE_NODE=127.0.0.1:$VARNISH_PORT" "STACK_CTL=$STACK_CTL" "SHOTS=$PWD/.results/e2e"
}
