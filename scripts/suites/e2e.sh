#!/usr/bin/env bash
# End-to-end suite: starts the native stack (stack/up.sh) on free loopback ports in a temporary
# state directory, runs tests/e2e/e2e.mjs against it through Varnish, then in Chromium the wp-admin
# walk (testkit wp_admin_walk: Media Library, uploads, block editor) and the block editor's live
# notice after an edit, with Varnish up, stopped and started again (testkit editor_live; its
# screenshots in .results/e2e/, make publish-results copies editor-live.png to docs/img/), then the
# walk again without underscore.min.js, then every bulk action in one request each
# (tests/e2e/bulk-actions.test.mjs); tears the stack down even on failure (its logs are printed
# when something failed). Then tests/e2e/site-check.test.mjs, which starts broken stacks of its
# own, and tests/e2e/core-refresh.test.mjs (a newer packaged core copied in, wp-content kept, the
# database upgraded). WP_SOURCE picks the WordPress tree both use (default Debian's 6.1;
# WP_SOURCE=$(scripts/fetch-wordpress.sh sid) for Debian sid's, 7.1 or later), with its own default theme.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source testkit/stack.sh
source testkit/report.sh

export DEMO_POSTS=${E2E_DEMO_POSTS:-150} WP_CRON_INTERVAL=${E2E_CRON_INTERVAL:-2}
rc=1
teardown() { if ((rc != 0)); then temp_stack_down keep-logs; else temp_stack_down; fi; }
trap teardown EXIT
trap 'exit 130' INT TERM

temp_stack_up e2e || { report "the stack starts" 1; report_end; exit; }
# Which WordPress (WP_SOURCE: Debian's 6.1 by default, scripts/fetch-wordpress.sh for others)
# and which theme this run tests.
wp_version=$(php -r 'include $argv[1]; echo $wp_version;' "$WP_DIR/wp-includes/version.php" 2>/dev/null)
wp_theme=$(mariadb --no-defaults --socket="$DB_SOCKET" -N wordpress -e "SELECT option_value FROM wp_options WHERE option_name = 'stylesheet'" 2>/dev/null)
echo "e2e: WordPress ${wp_version:-unknown}, theme ${wp_theme:-unknown}"

export STACK_CTL=$STACK_REPO/stack/ctl.sh
# The run's figures (make publish-results copies them to tests/e2e/results.json).
export E2E_RESULTS=$PWD/.results/e2e.json E2E_WORDPRESS=$wp_version
run_e2e e2e
report "tests/e2e/e2e.mjs" $?
wp_admin_walk e2e "http://$SITE_HOST"
report "the wp-admin walk" $?
# The block editor says when an edit is live on the edge, and names the node when it is down.
editor_live e2e
report "the editor's live notice, with Varnish up and down" $?
# The walk can fail: with underscore gone (Debian's tree links it from libjs-underscore, the link
# make up used to copy broken), Media → Library is blank and the walk must say so.
echo "e2e: the wp-admin walk fails without wp-includes/js/underscore.min.js"
mv "$WP_DIR/wp-includes/js/underscore.min.js" "$STACK_DIR/underscore.min.js"
varnishadm -n "$STACK_DIR/varnish" ban 'req.url ~ "^/wp-includes/js/underscore"' >/dev/null
broken=1
out=$(wp_admin_walk e2e-broken "http://$SITE_HOST") || [[ $out != *underscore.min.js* ]] || broken=0
((broken)) && echo "$out" | tail -n 5
report "the walk fails on underscore.min.js when it is missing" $broken
mv "$STACK_DIR/underscore.min.js" "$WP_DIR/wp-includes/js/underscore.min.js"
# Every bulk action WordPress offers (Trash, Restore, Delete Permanently, Bulk Edit on 20, 100 and
# 500 posts, Empty Trash, deleting a user with 500 posts, 50 tags, an import), each in one request,
# leaves nothing stale and the pipeline moving; the 20-post trash in Chromium. Figures in
# .results/e2e/bulk-actions.json, screenshots beside them.
echo "e2e: bulk actions (tests/e2e/bulk-actions.test.mjs)"
browser_kit && timeout 1200 node --test-reporter=spec tests/e2e/bulk-actions.test.mjs
report "tests/e2e/bulk-actions.test.mjs" $?
rc=$REPORT_FAILED
teardown
trap - EXIT
# make up on broken sites (no theme, PHP fatal, database down): its own stack, its own ports.
echo "e2e: make up refuses a site that does not render (tests/e2e/site-check.test.mjs)"
with_temp_stack site-check timeout 300 node --test --test-reporter=spec tests/e2e/site-check.test.mjs
report "tests/e2e/site-check.test.mjs" $?
# A newer packaged WordPress reaches the site's copy on the next make up; the database follows.
echo "e2e: make up refreshes core from a newer package (tests/e2e/core-refresh.test.mjs)"
with_temp_stack core-refresh timeout 400 node --test --test-reporter=spec tests/e2e/core-refresh.test.mjs
report "tests/e2e/core-refresh.test.mjs" $?
report_end
