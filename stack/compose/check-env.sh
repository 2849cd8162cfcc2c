#!/usr/bin/env bash
# check-env.sh [--write]: holds the stacks' settings to stack/settings.table. Fails when
#   - .env.example is not the table's rendering (--write renders it again),
#   - a default in stack/lib.sh (make up) or docker-compose.yml differs from the table's, or a
#     setting one of them reads is missing from the table (or the other way round),
#   - ./.env exists and one of its values breaks its rule.
# Run by make lint (scripts/lint/settings.sh), which then holds the table's purger rows to the
# purger's own schema (purger/scripts/settings-table.ts).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source stack/lib.sh
bad=0
problem() { echo "check-env: $*"; bad=$((bad + 1)); }

# .env.example: every setting docker compose reads, with its default and description.
env_example() {
  cat <<'HEAD'
# docker compose settings, all optional: copy to .env and change what you need (docker compose
# reads .env from this directory). No secret goes here: the "secrets" service generates them into
# a volume on first start (docker compose run --rm secrets show admin_password). The native stack
# (make up) reads the same names from the environment.
# Generated from stack/settings.table by stack/compose/check-env.sh --write.
HEAD
  local name compose text
  while read -r name _ _ compose _; do
    [[ $compose == - ]] && continue
    text=$(settings_field "$name" 7)
    printf '\n# %s\n' "${text^}"
    if [[ $compose == '""' ]]; then echo "#$name="; else echo "$name=$compose"; fi
  done < <(settings_rows setting)
}

if [[ ${1:-} == --write ]]; then
  env_example >.env.example
  exit 0
fi
if ! env_example | diff -u .env.example - >/tmp/check-env.$$; then
  problem ".env.example is not stack/settings.table's rendering (stack/compose/check-env.sh --write):"
  head -n 30 /tmp/check-env.$$
fi
rm -f /tmp/check-env.$$

# Defaults: "NAME DEFAULT" lines as stack/lib.sh and docker-compose.yml write them ("" = empty).
lib_defaults() {
  sed -nE 's/^[A-Z_]+=\$\{([A-Z_0-9]+):?-([^}]*)\}.*/\1 \2/p' stack/lib.sh | awk 'NF == 1 { $2 = "\"\"" } 1'
}
compose_defaults() {
  grep -oE '\$\{[A-Z_0-9]+:-[^}]*\}' docker-compose.yml | sed -E 's/^\$\{([A-Z_0-9]+):-(.*)\}$/\1 \2/' | sort -u | awk 'NF == 1 { $2 = "\"\"" } 1'
}
compare() { # compare WHAT COLUMN: the defaults on stdin against the table's column
  local what=$1 col=$2 name value want
  declare -A seen=()
  while read -r name value; do
    seen[$name]=1
    want=$(settings_field "$name" "$col")
    if [[ -z $want ]]; then
      problem "$what reads $name, which stack/settings.table does not list"
    elif [[ $want != "$value" ]]; then
      problem "$what's default for $name is '$value', stack/settings.table's is '$want'"
    fi
  done
  while read -r name _ native compose _; do
    want=$native; ((col == 4)) && want=$compose
    [[ $want == - || -n ${seen[$name]:-} ]] || problem "stack/settings.table gives $name a default for $what, which does not read it"
  done < <(settings_rows setting)
}
compare "stack/lib.sh" 3 < <(lib_defaults)
compare "docker-compose.yml" 4 < <(compose_defaults)

# A .env next to docker-compose.yml: its values follow their rules.
if [[ -r .env ]]; then
  while IFS='=' read -r name value; do
    [[ $name =~ ^[A-Z_][A-Z0-9_]*$ ]] || continue
    value=${value#[\"\']} value=${value%[\"\']}
    why=$(value_problem "$name" "$value")
    [[ -z $why ]] || problem ".env: $why"
  done <.env
fi

echo "check-env: $(settings_rows setting | wc -l) settings, $(settings_rows secret | wc -l) secrets, $bad problems"
((bad == 0))
