#!/usr/bin/env bash
# WordPress plugin (wordpress-plugin/): PHPUnit against a real WordPress 6.1 (Debian package) on a
# private MariaDB, with a real webhook listener; includes the conformance harness and the headless
# Chromium admin test. Each run starts its own servers on free loopback ports and removes them.
set -uo pipefail
cd "$(dirname "$0")/../../wordpress-plugin" || exit 1

if [[ ! -d tests/browser/node_modules/playwright-core ]]; then
  echo "plugin: npm ci (tests/browser)"
  (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error) || { echo "plugin: npm ci failed"; exit 1; }
fi

report=$(mktemp)
out=$(mktemp)
VARNISH_EDGE_REPORT=$report timeout 900 phpunit --configuration phpunit.xml.dist 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
summary=$(grep -E '^(OK \(|Tests: )' "$out" | tail -1)
conformance=$(php -r '$r = json_decode((string) @file_get_contents($argv[1]), true); echo $r["summary"] ?? "conformance: no report";' "$report")
rm -f "$report" "$out"
echo "plugin: ${summary:-no PHPUnit summary (rc $rc)}"
echo "plugin: $conformance"
exit "$rc"
