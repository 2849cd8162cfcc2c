#!/usr/bin/env bash
# The compose stack for real (make test-compose, after the static checks): starts an engine if
# none answers, builds every image from debian:trixie-slim (imported from debootstrap when no
# registry answers), runs `docker compose up --wait` as its own project on free loopback ports,
# then checks it: the home page renders the theme, PURGE from outside the purger is refused, the
# e2e suite (tests/e2e/e2e.mjs through stack/compose/ctl.sh: edits fresh at the edge, offline
# edits delivered from the outbox, the stale-page audit), the wp-admin walk in Chromium, the k6 smoke run through compose's k6
# service, the two-node profile (one edit invalidates both nodes) and the ha profile (Sentinel
# behind its own password, a failover the purger follows). Tears the stack and its
# volumes down, even on failure (printing its logs then). A second run reuses the built images.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source testkit/docker.sh
source testkit/stack.sh
source stack/lib.sh
source testkit/report.sh
finish() { report_end; exit; }

docker_ready || { report "a Docker engine answers" 1; finish; }
docker_base || { report "debian:trixie-slim (debootstrap)" 1; finish; }

export COMPOSE_PROJECT_NAME=vetest-$$ COMPOSE_FILE=docker-compose.yml
# The demo: the edge with the WordPress compose builds (profile "demo").
export COMPOSE_PROFILES=demo
read -r VARNISH_PORT VARNISH_2_PORT PURGER_PORT < <(free_ports 3)
export VARNISH_PORT VARNISH_2_PORT PURGER_PORT SITE_HOST=localhost:$VARNISH_PORT
export DEMO_POSTS=150 WP_CRON_INTERVAL=2
LOCAL_CA=$(cat /usr/local/share/ca-certificates/*.crt 2>/dev/null); export LOCAL_CA
dc() { docker compose "$@"; }
ok=0
teardown() {
  if ((!ok)); then echo "──── logs"; dc --profile demo --profile fanout --profile ha logs --no-color --tail 30 2>&1 | grep -v '"GET \|level":30' | tail -n 80; fi
  dc --profile demo --profile fanout --profile load --profile ha --profile tls down -v --remove-orphans >/dev/null 2>&1
}
trap teardown EXIT
trap 'exit 130' INT TERM

# build LABEL [ENV=VALUE...]: every image compose builds, with those settings; timed, its log
# shown on failure.
build() {
  local label=$1 start=$SECONDS log rc
  shift
  log=$(mktemp)   # not a predictable name in /tmp: root would follow a link planted there
  env "$@" docker compose --profile demo --profile load --profile tls build >"$log" 2>&1
  rc=$?
  ((rc)) && tail -n 30 "$log"
  rm -f "$log"
  report "$label build from debian:trixie-slim ($((SECONDS - start)) s)" $rc
  return $rc
}
build "every default image (Varnish 7.7, Node.js 24)" || finish
build "Vinyl Cache 9.0 and the purger on Node.js 26" VARNISH_VERSION=9.0 PURGER_NODE=26 || finish
start=$SECONDS
up_log=$(dc up -d --wait 2>&1)
rc=$?
((rc)) && tail -n 5 <<<"$up_log"
report "docker compose up --wait: every service healthy ($((SECONDS - start)) s)" $rc
((rc)) && finish

# no_secret_inspected NAME...: no secret in any container's configuration (environment, command,
# labels): they are files.
no_secret_inspected() {
  local leaked="" inspect name value containers
  mapfile -t containers < <(dc ps -aq)
  inspect=$(docker inspect "${containers[@]}" 2>/dev/null)
  for name in "$@"; do
    value=$(stack/compose/ctl.sh secret "$name") || value=""
    if ((${#value} < 16)); then leaked+=" $name(unreadable)"; continue; fi
    [[ $inspect == *"$value"* ]] && leaked+=" $name"
  done
  [[ -z $leaked ]] || echo "  in docker inspect:$leaked"
  [[ -z $leaked && -n $inspect ]]
}
no_secret_inspected db_password redis_password redis_sentinel_password webhook_secret operator_token admin_password varnish_purge_token
report "no secret in docker inspect of any container" $?

edge=http://127.0.0.1:$VARNISH_PORT
home=$(curl -s --max-time 10 "$edge/")
grep -q 'wp-content/themes/twentytwentyfive' <<<"$home" && grep -q '<title>Varnish Edge demo' <<<"$home"
report "the home page through Varnish renders the theme (Twenty Twenty-Five)" $?

# The purger's own token, sent from the host (not in acl purgers), must not purge.
token=$(stack/compose/ctl.sh secret varnish_purge_token)
code=$(curl -s -o /dev/null -w '%{http_code}' -X PURGE -H "Host: $SITE_HOST" -H "X-Purge-Token: $token" "$edge/")
echo "  PURGE from the host with the right token: $code"
[[ $code == 403 ]]
report "PURGE from outside the backend network is refused, even with the token" $?
# From inside the network (the ACL admits it) without the token.
code=$(dc exec -T wordpress curl -s -o /dev/null -w '%{http_code}' -X PURGE -H "Host: $SITE_HOST" http://varnish:8080/)
echo "  PURGE from the WordPress container without the token: $code"
[[ $code == 403 ]]
report "PURGE from inside the network without the purger's token is refused" $?

# The e2e suite talks to the services on the backend network, as the purger does (this machine
# reaches a bridge network's addresses from its gateway, inside acl purgers: it sees
# X-Cache as the native stack's loopback does); the published port is what users get.
ip_of() { docker inspect -f "{{(index .NetworkSettings.Networks \"${COMPOSE_PROJECT_NAME}_backend\").IPAddress}}" "$(dc ps -q "$1")"; }
E2E_EDGE=http://$(ip_of varnish):8080 E2E_ORIGIN=http://$(ip_of wordpress):8081 E2E_PURGER=http://$(ip_of purger):8090
export E2E_EDGE E2E_ORIGIN E2E_PURGER
echo "  edge $E2E_EDGE, origin $E2E_ORIGIN, purger $E2E_PURGER"
export STACK_CTL=$PWD/stack/compose/ctl.sh
run_e2e compose
report "e2e suite against compose (tests/e2e/e2e.mjs)" $?

# The origin's hardening (tests/compose/hardening-check.sh).
tests/compose/hardening-check.sh secrets
report "no admin password in the wordpress and wp-cron containers, no secret in any process environment" $?
tests/compose/hardening-check.sh client-address
report "WordPress sees the client's address through Varnish, ignores a forged X-Forwarded-For; anonymous comments held" $?
tests/compose/hardening-check.sh uploads-php
report "PHP in the uploads volume is refused, never executed" $?
tests/compose/hardening-check.sh cron-xmlrpc
report "/wp-cron.php and /xmlrpc.php refused at the edge and the origin" $?

# The image's WordPress is whole (Debian's relative links resolved), and wp-admin works in a browser.
dangling=$(dc exec -T wordpress find /srv/wordpress -xtype l)
[[ -z $dangling ]] || echo "$dangling" | head -n 5
[[ -z $dangling ]]
report "no dangling link in the image's WordPress tree" $?
wp_admin_walk compose "http://$SITE_HOST"
report "wp-admin walk in Chromium (Media Library, JPEG and WAV uploads, image via the block editor's media modal)" $?

dc --profile load run --rm -e DURATION=5s -e VUS=4 -e MAX_P99_MS=2000 -e MIN_HIT_RATE=0.9 k6 run /scripts/hot-url.js 2>&1 | tail -n 12
report "k6 smoke (hot-url.js, 5 s) through compose's k6 service" "${PIPESTATUS[0]}"

# both_nodes_fresh NAME: tests/compose/fanout-check.mjs on the two Varnish nodes and the purger as
# they are now (containers recreated by a step get new addresses), with an application password NAME.
both_nodes_fresh() {
  E2E_PURGER=http://$(ip_of purger):8090 E2E_USER=${WP_ADMIN_USER:-admin} OPERATOR_TOKEN=$(stack/compose/ctl.sh secret operator_token) \
  E2E_APP_PASSWORD=$(stack/compose/ctl.sh wp app-password "$1" | tail -n 1) \
    node tests/compose/fanout-check.mjs "http://$(ip_of varnish):8080" "http://$(ip_of varnish-2):8080"
}

# Two nodes: the purger finds the second by DNS; one edit reaches both.
COMPOSE_PROFILES=demo,fanout dc up -d --wait varnish-2 >/dev/null 2>&1
rc=$?
if ((rc == 0)); then
  both_nodes_fresh fanout
  rc=$?
fi
report "two Varnish nodes: one edit is fresh on both" $rc

# The other versions compose offers (.env.example): both nodes on Vinyl Cache 9.0, the purger on
# Node.js 26 (each image built by compose on first use), one edit fresh on both nodes again.
export VARNISH_VERSION=9.0 PURGER_NODE=26
COMPOSE_PROFILES=demo,fanout dc up -d --wait purger varnish varnish-2 >/dev/null 2>&1
rc=$?
if ((rc == 0)); then
  dc exec -T varnish varnishd -V 2>&1 | head -n 1
  dc exec -T purger node -p '"  purger on Node.js " + process.versions.node'
  both_nodes_fresh versions
  rc=$?
fi
report "Vinyl Cache 9.0 nodes and the purger on Node.js 26: one edit is fresh on both" $rc

# Profile "ha": Valkey replicas and three sentinels; the purger follows the primary through
# Sentinel (and waits for a replica before its 202), and one edit is fresh on both nodes again.
sentinels=valkey-sentinel-1:26379,valkey-sentinel-2:26379,valkey-sentinel-3:26379
# sentinel N ARG...: valkey-cli to valkey-sentinel-N with the sentinels' password (start.sh cli).
sentinel() { dc exec -T "valkey-sentinel-$1" /opt/varnish-edge/stack/images/valkey/start.sh cli 26379 "${@:2}"; }
# field NAME: the values that follow NAME lines in valkey-cli's raw replies.
field() { awk -v k="$1" 'prev == k { print } { prev = $0 }'; }
COMPOSE_PROFILES=demo,ha,fanout dc up -d --wait >/dev/null 2>&1
rc=$?
if ((rc == 0)); then
  # Sentinel learns of replicas from the primary's INFO, every 10 s.
  for _ in $(seq 1 30); do
    replicas=$(sentinel 1 sentinel replicas purger | grep -c '^ip$')
    ((replicas == 2)) && break
    sleep 1
  done
  echo "  sentinel-1 sees the primary and $replicas replicas"
  ((replicas == 2)) || rc=1
  REDIS_SENTINELS=$sentinels REDIS_SENTINEL_MASTER=purger \
    COMPOSE_PROFILES=demo,ha,fanout dc up -d --wait purger >/dev/null 2>&1 || rc=1
fi
if ((rc == 0)); then
  both_nodes_fresh ha
  rc=$?
fi
report "profile ha: Valkey replicas and Sentinel, the purger through Sentinel; one edit fresh on both nodes" $rc
ha=$rc

if ((ha == 0)); then
  # Sentinel runs without protected mode on a network every container shares: unauthenticated (or
  # with the Redis password, which the store containers hold) it must refuse to drop the primary
  # or monitor another, which the purger would follow and send its Redis password to.
  attack=$(dc exec -T valkey sh -c 'for pw in "" "$(cat /run/secrets/redis_password)"; do
      for s in valkey-sentinel-1 valkey-sentinel-2; do
        env ${pw:+REDISCLI_AUTH="$pw"} valkey-cli -h "$s" -p 26379 sentinel remove purger
        env ${pw:+REDISCLI_AUTH="$pw"} valkey-cli -h "$s" -p 26379 sentinel monitor rogue 192.0.2.1 6379 1
      done
    done' 2>/dev/null)
  echo "  from the valkey container: $(grep -c NOAUTH <<<"$attack") of 8 answered NOAUTH"
  rc=0
  [[ $(grep -c '^NOAUTH' <<<"$attack") == 8 ]] || rc=1
  for i in 1 2 3; do
    masters=$(sentinel "$i" sentinel masters | field name | tr '\n' ' ')
    [[ $masters == "purger " ]] || { echo "  sentinel-$i monitors: $masters"; rc=1; }
  done
  report "profile ha: SENTINEL REMOVE and MONITOR from another container refused (NOAUTH, with or without the Redis password); every sentinel still monitors purger alone" $rc

  # Both refuse to run without the sentinels' password: a sentinel given only the store's
  # secrets, the purger given REDIS_SENTINELS without it.
  out=$(timeout 60 docker compose run --rm --no-deps -T valkey sentinel valkey 2>&1)
  rc=$?
  echo "  sentinel without it: exit $rc, $(grep 'error' <<<"$out")"
  ((rc != 0)) && grep -q 'no redis_sentinel_password' <<<"$out"
  rc=$?
  out=$(timeout 60 docker compose run --rm --no-deps -T -e REDIS_SENTINELS=$sentinels -e REDIS_SENTINEL_MASTER=purger \
    -e REDIS_SENTINEL_PASSWORD_FILE= purger 2>&1)
  prc=$?
  echo "  purger without it: exit $prc, $(grep -o 'REDIS_SENTINEL_PASSWORD: required[^(]*' <<<"$out")"
  ((rc == 0 && prc == 2)) && grep -q 'REDIS_SENTINEL_PASSWORD: required with REDIS_SENTINELS' <<<"$out"
  report "profile ha: a sentinel without redis_sentinel_password, and the purger with REDIS_SENTINELS but no REDIS_SENTINEL_PASSWORD, refuse to start naming it" $?
  COMPOSE_PROFILES=demo,ha,fanout no_secret_inspected redis_password redis_sentinel_password
  report "profile ha: no secret in docker inspect of the replicas, the sentinels or the purger" $?

  # Failover through the passworded sentinels: the primary hangs (paused: a stopped container's
  # name stops resolving and each lookup blocks a sentinel for 20 s, which keeps it in TILT), they
  # promote a replica and repoint the other, the purger follows; one edit is fresh on both nodes
  # (within 30 s: a delivery lane may still sleep off the backoff the outage built up).
  old=$(sentinel 1 sentinel get-master-addr-by-name purger | head -n 1)
  start=$SECONDS
  rc=1
  if dc pause valkey >/dev/null 2>&1; then
    for _ in $(seq 1 90); do
      now=$(sentinel 1 sentinel get-master-addr-by-name purger | head -n 1)
      # a replica of the new primary (flags exactly "slave": not the stopped one) in sync
      synced=$(sentinel 1 sentinel replicas purger | awk 'prev == "flags" { up = $0 == "slave" } prev == "master-link-status" && $0 == "ok" && up { n++ } { prev = $0 } END { print n + 0 }')
      if [[ -n $now && $now != "$old" ]] && ((synced >= 1)); then rc=0; break; fi
      sleep 1
    done
    echo "  primary $old paused; sentinels name $now with $synced replica in sync after $((SECONDS - start)) s"
  fi
  if ((rc == 0)); then
    FANOUT_FRESH_MS=30000 both_nodes_fresh ha-failover
    rc=$?
  fi
  dc unpause valkey >/dev/null 2>&1
  report "profile ha: the primary hangs, the sentinels promote a replica, the purger follows: one edit fresh on both nodes" $rc
fi
((REPORT_FAILED == 0)) && ok=1
finish
