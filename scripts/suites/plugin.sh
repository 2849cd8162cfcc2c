#!/usr/bin/env bash
# WordPress plugin (wordpress-plugin/): PHPUnit against a real WordPress on a private MariaDB, with
# a real webhook listener; includes the conformance harness and the headless Chromium admin test.
# Each run starts its own servers on free loopback ports and removes them. The WordPress tree is
# $WP_SOURCE (default Debian 12's package, /usr/share/wordpress; another version:
# WP_SOURCE=$(scripts/fetch-wordpress.sh 7.1) scripts/suites/plugin.sh).
set -uo pipefail
cd "$(dirname "$0")/../../wordpress-plugin" || exit 1
export WP_SOURCE=${WP_SOURCE:-/usr/share/wordpress}
wp_version=$(php -r '$wp_version = ""; @include $argv[1] . "/wp-includes/version.php"; echo $wp_version;' "$WP_SOURCE")
[[ -n $wp_version ]] || { echo "plugin: no WordPress tree at WP_SOURCE=$WP_SOURCE"; exit 1; }

# shellcheck source=testkit/stack.sh
source ../testkit/stack.sh
browser_kit || { echo "plugin: npm ci failed"; exit 1; }

report=$(mktemp)
out=$(mktemp)
VARNISH_EDGE_REPORT=$report timeout 900 phpunit --configuration phpunit.xml.dist 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
summary=$(grep -E '^(OK \(|Tests: )' "$out" | tail -1)
# PHPUnit 10+ passes a run with deprecations ("OK, but there were issues!"): not clean here.
[[ $summary == *Deprecations* ]] && rc=1
conformance=$(php -r '$r = json_decode((string) @file_get_contents($argv[1]), true); echo $r["summary"] ?? "conformance: no report";' "$report")
rm -f "$report" "$out"
echo "plugin: WordPress $wp_version ($WP_SOURCE)"
echo "plugin: ${summary:-no PHPUnit summary (rc $rc)}"
echo "plugin: $conformance"
exit "$rc"
