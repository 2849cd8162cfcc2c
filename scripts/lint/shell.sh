#!/usr/bin/env bash
# Runs ShellCheck over every shell script the repository tracks (settings in .shellcheckrc).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
mapfile -t files < <(git ls-files '*.sh')
shellcheck -x "${files[@]}"
rc=$?
echo "lint shell: ${#files[@]} scripts, $( ((rc == 0)) && echo 0 || echo some) problems"
exit "$rc"
