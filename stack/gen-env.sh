#!/usr/bin/env bash
# gen-env.sh [FILE]: writes FILE (default .env at the repository root) for docker compose from
# .env.example, replacing every CHANGE_ME with a generated secret. Refuses to overwrite.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
out=${1:-$STACK_REPO/.env}
[[ -e $out ]] && die "$out exists; remove it first to generate new secrets (the database keeps the old password)"
umask 077
tmp=$(mktemp "$(dirname "$out")/.env.XXXXXX")
while IFS= read -r line; do
  if [[ $line =~ ^([A-Z_][A-Z0-9_]*)=CHANGE_ME$ ]]; then
    echo "${BASH_REMATCH[1]}=$(secret_value "${BASH_REMATCH[1]}")"
  else
    echo "$line"
  fi
done <"$STACK_REPO/.env.example" >"$tmp"
mv "$tmp" "$out"
log "wrote $out (mode 600) with generated secrets; now: docker compose up -d"
