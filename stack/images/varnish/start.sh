#!/usr/bin/env bash
# The compose Varnish container's entry point: renders the entry VCL from the settings when the
# container starts (vcl/render-entry.sh, no VCL to edit, no image to rebuild), then runs varnishd.
#
#   start.sh varnishd ARGS...  (the image's command) render, then exec stack/launch/varnishd.sh
#                              -F -n /tmp/varnishd -f <entry> -s malloc,$VARNISH_SIZE ARGS, with
#                              -j none when not root (compose's user varnish: no jail to drop into)
#                              and, with PURGE_PORT, -a purge=:$PURGE_PORT,HTTP
#   start.sh reload            render again and switch to it without a restart: after the origin's
#                              DNS name moved to another address (Varnish resolves it only when a
#                              VCL loads): docker compose exec varnish /opt/varnish-edge/start.sh reload
#   start.sh health            the healthcheck: the VCL is loaded and its probe finds the origin
#                              serving; otherwise one line naming ORIGIN_URL and what the probe saw
#   start.sh COMMAND...        any other command, run as given (docker compose run varnish varnishstat)
#
# Settings (docker-compose.yml, .env):
#   ORIGIN_URL     http://HOST[:PORT] of the WordPress origin: a compose service, a host name, an
#                  address, or host.docker.internal for the Docker host itself (default
#                  http://wordpress:8081, the demo site). Plain HTTP: Varnish does not speak TLS to
#                  origins; no path.
#   SITE_HOST      the host readers use (blog.example.com or localhost:8080): the probe asks the
#                  origin for ORIGIN_PROBE_PATH on it, as a stock WordPress answers 200 only there
#   SITE_SCHEME    https when readers come through the TLS front: plain HTTP readers are redirected
#                  to it (microcache/https-redirect.vcl) and the probe says X-Forwarded-Proto: https
#   ORIGIN_PROBE_PATH  what the probe asks (default /, the home page: every WordPress answers it with
#                  200 on its own host and scheme, whatever its permalinks or web server's robots.txt rule)
#   PURGER_HOST    the purger's name on the internal network: `acl purgers` admits the network of
#                  that address (found from this container's routes), nothing pinned
#   PURGER_NETWORKS  ADDR/BITS ... that acl purgers admits instead of the purger's network found
#                  from the routes: where a container has only a default route (Kubernetes pods on
#                  most network plugins) give the pod network (deploy/helm's varnish.purgerNetworks)
#   PURGE_TOKEN_FILE  the purger's X-Purge-Token (/run/secrets/varnish_purge_token)
#   PURGE_PORT     empty (default): the purger's PURGE/PURGEKEYS/BAN and refreshes come to the
#                  readers' port, told apart by acl purgers and the token. A port: varnishd also
#                  listens on it (-a purge=:PORT,HTTP, after ARGS), the entry takes them there only
#                  and refuses readers there (render-entry.sh --purge-listener,
#                  vcl/microcache/purge-listener.vcl), so a network policy can admit only the purger
#                  to it (deploy/helm's varnish.purgePort, 8088); point the purger's VARNISH_DNS at it
#   VARNISH_SIZE   the cache's size in memory (-s malloc,SIZE; default 256m)
set -euo pipefail
# varnishd's -n and where the rendered entry goes: tmpfs, the image is read-only.
state=/tmp/varnishd
entry=/tmp/edge/entry.vcl
ORIGIN_URL=${ORIGIN_URL:-http://wordpress:8081}
SITE_HOST=${SITE_HOST:-localhost:8080}
SITE_SCHEME=${SITE_SCHEME:-http}
ORIGIN_PROBE_PATH=${ORIGIN_PROBE_PATH:-/}
PURGER_HOST=${PURGER_HOST:-purger-internal}
PURGE_TOKEN_FILE=${PURGE_TOKEN_FILE:-/run/secrets/varnish_purge_token}
PURGE_PORT=${PURGE_PORT:-}

die() { printf 'varnish: %s\n' "$*" >&2; exit 1; }
log() { printf 'varnish: %s\n' "$*" >&2; }

# origin_parts: ORIGIN_URL checked, as "HOST PORT" (HOST bracket-free for IPv6).
origin_parts() {
  local url=$ORIGIN_URL rest host port
  case $url in
    https://*) die "ORIGIN_URL=$url: Varnish fetches from the origin over plain HTTP; give the origin's http:// address and port (the TLS front serves readers HTTPS)" ;;
    http://*) rest=${url#http://} ;;
    *) die "ORIGIN_URL=$url is not http://HOST[:PORT] (for example http://blog.internal:80 or http://host.docker.internal:8080)" ;;
  esac
  rest=${rest%/}
  [[ $rest != */* ]] || die "ORIGIN_URL=$url has a path: Varnish sends readers' paths as they are; give only http://HOST[:PORT]"
  if [[ $rest =~ ^\[([0-9A-Fa-f:.]+)\](:([0-9]+))?$ ]]; then
    host=${BASH_REMATCH[1]} port=${BASH_REMATCH[3]:-80}
  elif [[ $rest =~ ^([A-Za-z0-9.-]+)(:([0-9]+))?$ ]]; then
    host=${BASH_REMATCH[1]} port=${BASH_REMATCH[3]:-80}
  else
    die "ORIGIN_URL=$url: '$rest' is not HOST[:PORT] (letters, digits, dots and dashes, or [IPv6])"
  fi
  if [[ ! $port =~ ^[0-9]{1,5}$ ]] || ((10#$port < 1 || 10#$port > 65535)); then
    die "ORIGIN_URL=$url: port '$port' is outside 1-65535"
  fi
  echo "$host $((10#$port))"
}

# resolve NAME SECONDS: its first IPv4 address, waiting up to SECONDS for the name to appear (a
# compose service starting beside this one); empty when it never does.
resolve() {
  local name=$1 until=$((SECONDS + $2)) addr
  while :; do
    addr=$(getent ahostsv4 "$name" | awk 'NR == 1 { print $1 }') || addr=""
    [[ -n $addr ]] && { echo "$addr"; return 0; }
    ((SECONDS < until)) || return 0
    sleep 1
  done
}

# purge_network: the subnet (ADDR/BITS) of the network this container shares with the purger.
purge_network() {
  local addr net
  if [[ -n ${PURGER_NETWORKS:-} ]]; then
    for net in $PURGER_NETWORKS; do
      [[ $net =~ ^[0-9A-Fa-f:.]+/[0-9]{1,3}$ ]] || die "PURGER_NETWORKS: '$net' is not ADDR/BITS (for example 10.244.0.0/16)"
    done
    echo "$PURGER_NETWORKS"
    return
  fi
  addr=$(resolve "$PURGER_HOST" 60)
  [[ -n $addr ]] || die "PURGER_HOST=$PURGER_HOST does not resolve: acl purgers admits the network this container shares with the purger (start the purger service, or set PURGER_HOST)"
  /opt/varnish-edge/subnet-of.sh "$addr"
}

# purge_listener: with PURGE_PORT, the renderer's flag (its varnishd -a is added where it starts).
purge_listener() {
  [[ -n $PURGE_PORT ]] || return 0
  if [[ ! $PURGE_PORT =~ ^[0-9]{1,5}$ ]] || ((10#$PURGE_PORT < 1 || 10#$PURGE_PORT > 65535)); then
    die "PURGE_PORT=$PURGE_PORT is not a port (1-65535; empty: invalidations on the readers' port)"
  fi
  echo --purge-listener
}

render() {
  local parts host port net probe_https=() listener
  parts=$(origin_parts)
  read -r host port <<<"$parts"
  [[ $SITE_HOST =~ ^[A-Za-z0-9.-]+(:[0-9]{1,5})?$ ]] ||
    die "SITE_HOST=$SITE_HOST is not HOST or HOST:PORT (the domain readers use, e.g. blog.example.com)"
  case $SITE_SCHEME in
    http) ;;
    https) probe_https=(--probe-https) ;;
    *) die "SITE_SCHEME=$SITE_SCHEME must be http or https" ;;
  esac
  [[ $ORIGIN_PROBE_PATH =~ ^/[A-Za-z0-9._~/?=\&%+-]*$ ]] ||
    die "ORIGIN_PROBE_PATH=$ORIGIN_PROBE_PATH must be a path starting with / (default /, the home page)"
  if [[ ! $host =~ ^[0-9.]+$ && ! $host =~ : ]]; then
    # The VCL compiler resolves the name once, when the VCL loads: it must resolve now.
    [[ -n $(resolve "$host" 60) ]] ||
      die "ORIGIN_URL=$ORIGIN_URL: the host '$host' does not resolve from this container (a compose service name, a DNS name, or host.docker.internal for the Docker host)$([[ $ORIGIN_URL == http://wordpress:8081 ]] && echo "; that is the demo's WordPress: docker compose --profile demo up, or set ORIGIN_URL to yours")"
    [[ $host != *.* ]] || [[ $(getent ahosts "$host" | awk '{ print $1 }' | sort -u | wc -l) -le 2 ]] ||
      log "ORIGIN_URL=$ORIGIN_URL: '$host' has several addresses; Varnish uses one"
  fi
  net=$(purge_network)
  [[ -n $net ]] || die "no route of this container reaches the purger ($PURGER_HOST): acl purgers would admit no one"
  listener=$(purge_listener)
  local includes=() https_port
  mkdir -p "${entry%/*}"
  if [[ $SITE_SCHEME == https ]]; then
    # Plain HTTP readers go to https://SITE_HOST's host, on SITE_HOST's port when it names one.
    https_port=443
    [[ $SITE_HOST == *:* ]] && https_port=${SITE_HOST##*:}
    printf '# Rendered by start.sh: the port of https://%s\nsub vcl_recv {\n    var.set("mc_https_port", "%s");\n}\n' \
      "$SITE_HOST" "$((10#$https_port))" >"${entry%/*}/https-port.vcl"
    includes=(--include "${entry%/*}/https-port.vcl" --include microcache/https-redirect.vcl)
  fi
  /opt/varnish-edge/vcl/render-entry.sh --backend "$host:$port" --token-file "$PURGE_TOKEN_FILE" \
    --purgers "127.0.0.1 ::1 $net" --probe-host "$SITE_HOST" --probe-path "$ORIGIN_PROBE_PATH" \
    "${probe_https[@]}" ${listener:+"$listener"} "${includes[@]}" >"$entry.new"
  mv "$entry.new" "$entry"
  log "origin $host:$port (ORIGIN_URL), probe GET $ORIGIN_PROBE_PATH on $SITE_SCHEME://$SITE_HOST, acl purgers 127.0.0.1 ::1 $net${PURGE_PORT:+, invalidations on :$PURGE_PORT only (PURGE_PORT)}"
}

case ${1:-varnishd} in
varnishd)
  shift || true
  render
  jail=() purge=()
  ((EUID == 0)) || jail=(-j none)
  [[ -z $PURGE_PORT ]] || purge=(-a "purge=:$((10#$PURGE_PORT)),HTTP")
  exec /opt/varnish-edge/stack/launch/varnishd.sh -F "${jail[@]}" -n "$state" -f "$entry" \
    -s "malloc,${VARNISH_SIZE:-256m}" "$@" "${purge[@]}"
  ;;
reload)
  render
  name=edge_$(date +%s)
  varnishadm -n "$state" vcl.load "$name" "$entry" && varnishadm -n "$state" vcl.use "$name"
  ;;
health)
  list=$(varnishadm -n "$state" backend.list default 2>/dev/null) || { echo "varnishd is not answering (yet)"; exit 1; }
  # The probed backend's own row ("<vcl>.default ... healthy"), not its unprobed twin's.
  if awk '$1 ~ /\.default$/ && $4 == "healthy" { ok = 1 } END { exit !ok }' <<<"$list"; then exit 0; fi
  echo "the probe finds the origin ($ORIGIN_URL) not serving GET $ORIGIN_PROBE_PATH with 200 on Host: $SITE_HOST:"
  varnishadm -n "$state" backend.list -p default 2>/dev/null | grep -iE 'happy|good|bad|sick|[0-9]{3}' | tail -n 4
  exit 1
  ;;
*) exec "$@" ;;   # any other command as given (varnishstat, varnishadm, varnishtest...)
esac
