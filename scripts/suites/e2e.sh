#!/usr/bin/env bash
# End-to-end suite: starts the native stack (stack/up.sh) on free loopback ports in a temporary
# state directory, runs stack/e2e/e2e.mjs against it through Varnish, and tears it down even on
# failure (its logs are printed when something failed); then stack/e2e/site-check.test.mjs,
# which starts broken stacks of its own.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source testkit/stack.sh

export DEMO_POSTS=${E2E_DEMO_POSTS:-150} WP_CRON_INTERVAL=${E2E_CRON_INTERVAL:-2} PURGER_REPURGE_DELAYS_MS=${E2E_REPURGE_DELAYS_MS:-300,1000}
rc=1
teardown() { if ((rc != 0)); then temp_stack_down keep-logs; else temp_stack_down; fi; }
trap teardown EXIT
trap 'exit 130' INT TERM

temp_stack_up e2e || { echo "e2e: 0 passed, 1 failed"; exit 1; }

# shellcheck source=/dev/null
source "$SECRETS_FILE"
E2E_APP_PASSWORD=$(stack/prepare-wordpress.sh app-password e2e) || { echo "e2e: cannot create an application password"; exit 1; }
E2E_USER=$WP_ADMIN_USER E2E_ADMIN_PASSWORD=$ADMIN_PASSWORD E2E_APP_PASSWORD=$E2E_APP_PASSWORD OPERATOR_TOKEN=$OPERATOR_TOKEN \
  STACK_REPO=$STACK_REPO timeout 480 node --test-reporter=spec stack/e2e/e2e.mjs
rc=$?
teardown
# make up on broken sites (no theme, PHP fatal, database down): its own stack, its own ports.
echo "e2e: make up refuses a site that does not render (stack/e2e/site-check.test.mjs)"
timeout 300 node --test --test-reporter=spec stack/e2e/site-check.test.mjs || rc=1
exit $rc
