#!/usr/bin/env bash
# The compose "secrets" service: one place that holds the stack's secrets and hands each service
# only the ones it uses, as files (Docker's /run/secrets convention), so no secret is in an
# image, an environment variable or `docker inspect`.
#
#   secrets.sh init        (the service's command, before anything else starts) generates each
#                          secret missing from the vault volume (/vault, mode 700: stack/settings.table's
#                          generators, as make up's secrets.env), then copies to each service's
#                          own volume (/to/<service>) the files it needs, read-only
#   secrets.sh show NAME   prints one: docker compose run --rm secrets show admin_password
#   secrets.sh plugin      prints what the WordPress plugin's settings page (Settings → Varnish
#                          Edge) asks for: the purger URL (PURGER_PUBLIC_URL) and the webhook secret
#   (show and plugin generate missing secrets first: any order of the README's steps works)
#   secrets.sh set NAME    reads one from stdin (your own, e.g. a database that exists):
#                          docker compose run --rm -T secrets set db_password < file
#                          then `docker compose up -d --force-recreate` hands it out
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
vault=/vault
# Which service reads which secret (the volume each one mounts at /run/secrets): the READERS
# column of stack/settings.table. readers prints "SERVICE secret..." lines.
readers() {
  settings_rows secret | awk '{ n = split($6, r, ","); for (i = 1; i <= n; i++) if (r[i] != "-") got[r[i]] = got[r[i]] " " tolower($1) }
    END { for (s in got) print s got[s] }' | sort
}
names() { stack_secrets | tr '[:upper:]' '[:lower:]'; }
known() { names | grep -qx -- "$1" || die "no secret '$1' (one of: $(names | tr '\n' ' '))"; }

# generate: each secret missing from the vault.
generate() {
  umask 077
  chmod 700 "$vault"
  for name in $(names); do
    [[ -s $vault/$name ]] && continue
    secret_value "${name^^}" >"$vault/$name"
    log "generated $name"
  done
}

# init: generate, then hand each service its own (only here: running services read these files).
init() {
  generate
  while read -r reader files; do
    dir=/to/$reader
    [[ -d $dir ]] || die "$dir is not mounted (docker-compose.yml: the secrets-$reader volume)"
    chmod 755 "$dir"
    find "$dir" -mindepth 1 -delete
    for name in $files; do install -m 444 "$vault/$name" "$dir/$name"; done
    chmod 555 "$dir"
  done < <(readers)
  log "secrets ready for $(readers | awk '{ printf "%s%s", sep, $1; sep = " " }')"
}

case ${1:-init} in
init) init ;;
show) known "${2:-}"; generate; cat "$vault/$2"; echo ;;
plugin)
  generate
  url=${PURGER_PUBLIC_URL:-http://127.0.0.1:8090}
  cat <<EOT
In WordPress: Settings → Varnish Edge (or in wp-config.php: VARNISH_EDGE_PURGER_URL, VARNISH_EDGE_SECRET).
  Purger URL:      $url
  Webhook secret:  $(cat "$vault/webhook_secret")
The purger URL is where your WordPress reaches the purger's published port (PURGER_BIND:PURGER_PORT,
127.0.0.1:8090 by default: a WordPress on this machine); set PURGER_PUBLIC_URL to print another.
EOT
  ;;
set)
  known "${2:-}"
  value=$(cat)
  value=${value%$'\n'}
  problem=$(value_problem "${2^^}" "$value")
  [[ -z $problem ]] || die "$problem"
  (umask 077; printf '%s\n' "$value" >"$vault/$2")
  log "stored $2; docker compose up -d --force-recreate hands it out"
  ;;
*) die "usage: secrets.sh init | show NAME | plugin | set NAME" ;;
esac
