#!/usr/bin/env bash
# End-to-end suite: starts the native stack (stack/up.sh) on free loopback ports in a temporary
# state directory, runs stack/e2e/e2e.mjs against it through Varnish, and tears it down even on
# failure (its logs are printed when something failed); then stack/e2e/site-check.test.mjs,
# which starts broken stacks of its own.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source stack/lib.sh

read -r VARNISH_PORT WEB_PORT PURGER_PORT REDIS_PORT < <(free_ports 4)
STACK_DIR=$(mktemp -d /tmp/e2e-stack.XXXXXX)
export STACK_DIR VARNISH_PORT WEB_PORT PURGER_PORT REDIS_PORT
export SITE_HOST=localhost:$VARNISH_PORT STACK_SKIP_DEPS=1
export DEMO_POSTS=${E2E_DEMO_POSTS:-150} WP_CRON_INTERVAL=${E2E_CRON_INTERVAL:-2} PURGER_REPURGE_DELAY_MS=${E2E_REPURGE_DELAY_MS:-1000}
source stack/lib.sh   # again: paths and defaults follow the settings above

rc=1
teardown() {
  stack/down.sh >/dev/null 2>&1
  if ((rc != 0)); then
    for f in "$STACK_DIR"/log/*.log; do
      [[ -s $f && $f != *mariadb-install.log && $f != *nginx-access.log ]] || continue
      echo "──── tail $f"; tail -n 25 "$f"
    done
  fi
  rm -rf "$STACK_DIR"
}
trap teardown EXIT
trap 'exit 130' INT TERM

echo "e2e: stack in $STACK_DIR (varnish $VARNISH_PORT, nginx $WEB_PORT, purger $PURGER_PORT, redis $REDIS_PORT)"
start=$SECONDS
if ! stack/up.sh; then
  echo "e2e: the stack did not start"
  echo "e2e: 0 passed, 1 failed"
  exit 1
fi
echo "e2e: stack up in $((SECONDS - start)) s"

# shellcheck source=/dev/null
source "$SECRETS_FILE"
E2E_APP_PASSWORD=$(stack/prepare-wordpress.sh app-password e2e) || { echo "e2e: cannot create an application password"; exit 1; }
E2E_USER=$WP_ADMIN_USER E2E_ADMIN_PASSWORD=$ADMIN_PASSWORD E2E_APP_PASSWORD=$E2E_APP_PASSWORD OPERATOR_TOKEN=$OPERATOR_TOKEN \
  STACK_REPO=$STACK_REPO timeout 480 node --test-reporter=spec stack/e2e/e2e.mjs
rc=$?
stack/down.sh >/dev/null 2>&1
# make up on broken sites (no theme, PHP fatal, database down): its own stack, its own ports.
echo "e2e: make up refuses a site that does not render (stack/e2e/site-check.test.mjs)"
timeout 300 node --test --test-reporter=spec stack/e2e/site-check.test.mjs || rc=1
exit $rc
