#!/usr/bin/env bash
# PHP lint gate (make lint): `php -l` on every PHP file the repository holds (tracked or new, not
# ignored: wordpress-plugin/, stack/wp/, stack/mu-plugins/, tests), then phpcs (Debian's
# php-codesniffer) with the committed ruleset wordpress-plugin/phpcs.xml.dist over the plugin and
# its tests. Exits non-zero on any syntax error, phpcs error or phpcs warning.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

command -v php >/dev/null || { echo "lint php: php not found (scripts/install-deps.sh installs php-cli)"; exit 1; }
phpcs=1
if ! command -v phpcs >/dev/null; then
  # Debian 13 has no php-codesniffer package; Debian 12 (CI) does, and install-deps installs it.
  [[ $(apt-cache policy php-codesniffer 2>/dev/null) == *"Candidate: "[0-9]* ]] &&
    { echo "lint php: phpcs not found (scripts/install-deps.sh installs php-codesniffer)"; exit 1; }
  echo "lint php: this Debian has no php-codesniffer package: php -l only (Debian 12 runs phpcs)"
  phpcs=0
fi

mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.php' | sort -u)
problems=0

# Syntax: one `php -l` per file (each is a separate parse; a fatal in one does not hide the next).
for f in "${files[@]}"; do
  [[ -f $f ]] || continue # deleted in the working tree, not yet in the index
  if ! out=$(php -d display_errors=1 -d log_errors=0 -d error_reporting=-1 -l "$f" 2>&1); then
    echo "$out" | grep -v '^Errors parsing' >&2
    problems=$((problems + 1))
  fi
done

# Style and docs: phpcs reports every finding; warnings count as problems (-w, exit code 1 or 2).
report=$(mktemp)
trap 'rm -f "$report"' EXIT
if ((phpcs)); then
  (cd wordpress-plugin && phpcs -q -s -w --standard=phpcs.xml.dist --report-full --report-summary="$report" --basepath=. --no-colors)
  rc=$?
  if ((rc != 0)); then
    # Summary line: "A TOTAL OF n ERRORS AND m WARNINGS WERE FOUND IN k FILES".
    read -r errs warns < <(sed -n 's/^A TOTAL OF \([0-9]*\) ERRORS\? AND \([0-9]*\) WARNINGS\? .*/\1 \2/p' "$report")
    found=$(( ${errs:-0} + ${warns:-0} ))
    problems=$((problems + (found > 0 ? found : 1)))
  fi
fi

echo "lint php: ${#files[@]} files, $problems problems"
((problems == 0))
