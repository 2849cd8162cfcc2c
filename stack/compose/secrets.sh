#!/usr/bin/env bash
# The compose "secrets" service: one place that holds the stack's secrets and hands each service
# only the ones it uses, as files (Docker's /run/secrets convention), so no secret is in an
# image, an environment variable or `docker inspect`.
#
#   secrets.sh init        (the service's command, before anything else starts) generates each
#                          secret missing from the vault volume (/vault, mode 700: stack/lib.sh's
#                          generators, as make up's secrets.env), then copies to each service's
#                          own volume (/to/<service>) the files it needs, read-only
#   secrets.sh show NAME   prints one: docker compose run --rm secrets show admin_password
#   secrets.sh set NAME    reads one from stdin (your own, e.g. a database that exists):
#                          docker compose run --rm -T secrets set db_password < file
#                          then `docker compose up -d --force-recreate` hands it out
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
vault=/vault
# Which service reads which secret (the volume each one mounts at /run/secrets).
declare -A READERS=(
  [db]="db_password"
  [web]="db_password webhook_secret wp_keys"
  [install]="db_password webhook_secret admin_password wp_keys"
  [store]="redis_password"
  [purger]="redis_password webhook_secret operator_token varnish_purge_token"
  [edge]="varnish_purge_token"
)
names() { local k; for k in "${STACK_SECRETS[@]}"; do echo "${k,,}"; done; echo wp_keys; }
known() { names | grep -qx -- "$1" || die "no secret '$1' (one of: $(names | tr '\n' ' '))"; }

generate() {
  local name=$1 k
  if [[ $name == wp_keys ]]; then
    for k in "${WP_KEYS[@]}"; do echo "WP_$k='$(rand_b64 48)'"; done
  else
    secret_value "${name^^}"
  fi
}

case ${1:-init} in
init)
  umask 077
  chmod 700 "$vault"
  for name in $(names); do
    [[ -s $vault/$name ]] && continue
    generate "$name" >"$vault/$name"
    log "generated $name"
  done
  for reader in "${!READERS[@]}"; do
    dir=/to/$reader
    [[ -d $dir ]] || die "$dir is not mounted (docker-compose.yml: the secrets-$reader volume)"
    chmod 755 "$dir"
    find "$dir" -mindepth 1 -delete
    for name in ${READERS[$reader]}; do install -m 444 "$vault/$name" "$dir/$name"; done
    chmod 555 "$dir"
  done
  log "secrets ready for ${!READERS[*]}"
  ;;
show) known "${2:-}"; cat "$vault/$2"; echo ;;
set)
  known "${2:-}"
  value=$(cat)
  value=${value%$'\n'}
  if [[ $2 != wp_keys ]]; then
    [[ ${#value} -ge 16 && $value =~ ^[!-~]+$ ]] || die "$2 must be at least 16 visible characters without spaces"
    [[ $2 != webhook_secret || $value == whsec_* ]] || die "webhook_secret must be whsec_<base64 of 32 random bytes>"
  fi
  (umask 077; printf '%s\n' "$value" >"$vault/$2")
  log "stored $2; docker compose up -d --force-recreate hands it out"
  ;;
*) die "usage: secrets.sh init | show NAME | set NAME" ;;
esac
