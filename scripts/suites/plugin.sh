#!/usr/bin/env bash
# WordPress plugin (wordpress-plugin/): PHPUnit against a real WordPress on a private MariaDB, with
# a real webhook listener; includes the conformance harness and the headless Chromium admin test.
# Each run starts its own servers on free loopback ports and removes them. PHPUnit reports the
# tests and exits non-zero when one failed; the conformance harness prints what it covered. The WordPress tree is
# $WP_SOURCE (default Debian 12's package, /usr/share/wordpress; another version:
# WP_SOURCE=$(scripts/fetch-wordpress.sh sid) scripts/suites/plugin.sh for Debian sid's, 7.1 or later).
set -uo pipefail
cd "$(dirname "$0")/../../wordpress-plugin" || exit 1
export WP_SOURCE=${WP_SOURCE:-/usr/share/wordpress}
wp_version=$(php -r '$wp_version = ""; @include $argv[1] . "/wp-includes/version.php"; echo $wp_version;' "$WP_SOURCE")
[[ -n $wp_version ]] || { echo "plugin: no WordPress tree at WP_SOURCE=$WP_SOURCE"; exit 1; }

# shellcheck source=testkit/stack.sh
source ../testkit/stack.sh
browser_kit || { echo "plugin: npm ci failed"; exit 1; }

# The conformance harness's figures, one file per WordPress version (make publish-results
# copies them to wordpress-plugin/tests/results/ and README's figures table follows).
mkdir -p ../.results/plugin
report=../.results/plugin/conformance-$wp_version.json
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "plugin: WordPress $wp_version ($WP_SOURCE)"
rm -f "$report"
VARNISH_EDGE_REPORT=$PWD/$report timeout 900 phpunit --configuration phpunit.xml.dist 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
# PHPUnit 10+ passes a run with deprecations ("OK, but there were issues!"): not clean here.
grep -qE '^(OK, but|Tests: ).*Deprecations' "$out" && { echo "plugin: deprecations reported: failing the run"; rc=1; }
php -r '$r = json_decode((string) @file_get_contents($argv[1]), true); echo "plugin: ", $r["summary"] ?? "conformance: no report", "\n";' "$report"
exit "$rc"
