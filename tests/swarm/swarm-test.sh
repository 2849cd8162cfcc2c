#!/usr/bin/env bash
# The stack on a real Docker Swarm of four engines on this machine (make test's swarm suite;
# deploy/swarm/README.md). Each engine runs in a container of deploy/swarm/node (Debian 13's
# docker.io), on a bridge of its own; node1-3 are managers, node4 a worker. The project's images
# reach the nodes by docker save | docker load (no registry). Then, with figures printed:
#   - deploy.sh refuses a missing label, a missing secret and a registry that does not answer
#   - two Varnish tasks: an edit is fresh on both
#   - scaled to four: edits every 2 s while the new tasks start; no task serves an edit older
#     than FRESH_MS, and the next edit is fresh on all four
#   - back to three, a Varnish node drained: its task moves to the free node, an edit is fresh on
#     the three
#   - the Valkey primary's node drained under a 300-event burst: Sentinel promotes a replica,
#     every event applied on every task
#   - a node's engine killed in the middle of a 1,000-event burst: every event applied on every
#     surviving task, the dead node's replacement starts empty and is fresh after the next edit
# Leaves nothing behind (SWARM_KEEP=1 keeps the nodes for a look).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source testkit/docker.sh
source testkit/report.sh
export FRESH_MS=${FRESH_MS:-20000}
NET=ve-swarm-test
NODES=(node1 node2 node3 node4)
STACK=varnish-edge
results=.results/swarm
mkdir -p "$results"
SITE=localhost:8080

finish() {
  # the driver's figures (time to fresh per task count, worst lag while scaling, the bursts,
  # the failover) next to the logs
  docker cp ve-node1:/state/. "$results/" >/dev/null 2>&1
  if [[ ${SWARM_KEEP:-0} != 1 ]]; then
    for n in "${NODES[@]}"; do docker rm -f -v "ve-$n" >/dev/null 2>&1; docker volume rm "ve-$n-docker" >/dev/null 2>&1; done
    docker network rm "$NET" >/dev/null 2>&1
  fi
  report_end
  exit
}
trap finish INT TERM
must() { report "$1" "$2"; [[ $2 == 0 ]] || finish; }   # a check the rest depends on

on() { local n=$1; shift; docker exec "ve-$n" "$@"; }            # a command on node N
dk() { local n=$1; shift; docker exec "ve-$n" docker "$@"; }     # its engine
dki() { local n=$1; shift; docker exec -i "ve-$n" docker "$@"; }   # its engine, given stdin
node_ip() { docker inspect -f "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}" "ve-$1"; }
# where_runs SERVICE: the hostname(s) of the node(s) running its tasks
where_runs() { dk node1 service ps "${STACK}_$1" --filter desired-state=running --format '{{.Node}}' | sort -u; }
# task_container NODE SERVICE: the id of SERVICE's running container on NODE
task_container() { dk "$1" ps -q --filter "label=com.docker.swarm.service.name=${STACK}_$2" | head -1; }
# primary_now: the Valkey primary's name, as the first sentinel that answers says
primary_now() {
  local i n c
  for i in 1 2 3; do
    n=$(where_runs "valkey-sentinel-$i" | head -1); [[ -n $n ]] || continue
    c=$(task_container "$n" "valkey-sentinel-$i"); [[ -n $c ]] || continue
    dk "$n" exec "$c" /opt/varnish-edge/stack/images/valkey/start.sh cli 26379 sentinel get-master-addr-by-name purger 2>/dev/null | head -1 | grep . && return 0
  done
}
all_store_running() {
  local s
  for s in valkey-1 valkey-2 valkey-3 valkey-sentinel-1 valkey-sentinel-2 valkey-sentinel-3; do
    [[ $(dk node1 service ps "${STACK}_$s" --filter desired-state=running --format '{{.CurrentState}}') == Running* ]] || return 1
  done
}
driver() { # driver.mjs STEP [ARG] in a one-off container on the stack's network, on node1
  dk node1 run --rm --network "${STACK}_backend" -v /repo:/repo:ro -v /state:/state \
    -e SITE_HOST="$SITE" -e PURGER=http://purger:8090 -e STATE=/state -e FRESH_MS -e EXPECT_TASKS="${EXPECT_TASKS:-0}" \
    -e NODE_ADDRS="$(for n in "${NODES[@]}"; do node_ip "$n"; done | paste -sd ' ')" \
    -e OPERATOR_TOKEN="$operator_token" -e WEBHOOK_SECRET="$webhook_secret" -e WP_USER=admin -e WP_APP_PASSWORD="$app_password" \
    --entrypoint node "varnish-edge/purger:node24" /repo/tests/swarm/driver.mjs "$@"
}
deploy() { on node1 env STACK_NAME=$STACK VARNISH_REPLICAS="$1" SITE_HOST=$SITE DEMO_POSTS=40 PURGER_NEW_NODE_CATCHUP_MS=300000 "${@:2}" /repo/deploy/swarm/deploy.sh up; }

docker_ready || { report "a Docker engine answers" 1; finish; }
docker_base || { report "debian:trixie-slim (debootstrap)" 1; finish; }
# The CAs this machine adds (a TLS-inspecting proxy's), for the images that fetch over HTTPS.
LOCAL_CA=$(cat /usr/local/share/ca-certificates/*.crt 2>/dev/null); export LOCAL_CA
start=$SECONDS
docker_image varnish-edge/swarm-node:trixie deploy/swarm/node/Dockerfile >/dev/null &&
  DOCKER_BUILDKIT=0 docker compose --profile demo build varnish purger valkey mariadb wordpress-install >"$results/build.log" 2>&1
must "the node image and the stack's images build ($((SECONDS - start)) s)" $?
images=(varnish-edge/varnish:7.7 varnish-edge/purger:node24 varnish-edge/valkey:8.1)
demo_images=(varnish-edge/wordpress:6.8 varnish-edge/mariadb:11.8)

# Four engines, each with every capability but CAP_SYS_RESOURCE (deploy/swarm/node/start.sh says why).
start=$SECONDS
docker network create "$NET" >/dev/null 2>&1
for n in "${NODES[@]}"; do
  docker rm -f -v "ve-$n" >/dev/null 2>&1; docker volume rm "ve-$n-docker" >/dev/null 2>&1
  docker run -d --name "ve-$n" --hostname "$n" --cap-add ALL --cap-drop SYS_RESOURCE \
    --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined \
    --cgroupns private --network "$NET" -v "ve-$n-docker:/var/lib/docker" -v "$PWD:/repo:ro" \
    varnish-edge/swarm-node:trixie >/dev/null || { report "node $n starts" 1; finish; }
done
for n in "${NODES[@]}"; do wait_until 60 "$n's engine" docker exec "ve-$n" docker info >/dev/null || { report "node $n's engine answers" 1; finish; }; done
dk node1 swarm init --advertise-addr "$(node_ip node1)" >/dev/null
manager=$(dk node1 swarm join-token -q manager) worker=$(dk node1 swarm join-token -q worker)
dk node2 swarm join --token "$manager" "$(node_ip node1):2377" >/dev/null &&
  dk node3 swarm join --token "$manager" "$(node_ip node1):2377" >/dev/null &&
  dk node4 swarm join --token "$worker" "$(node_ip node1):2377" >/dev/null
must "a swarm of four engines (three managers) forms ($((SECONDS - start)) s)" $?
start=$SECONDS
tars=$(mktemp -d)
docker save -o "$tars/edge.tar" "${images[@]}" && docker save -o "$tars/demo.tar" "${demo_images[@]}"
pids=()
for n in "${NODES[@]}"; do
  (docker exec -i "ve-$n" docker load -q <"$tars/edge.tar" >/dev/null &&
    if [[ $n == node1 ]]; then docker exec -i "ve-$n" docker load -q <"$tars/demo.tar" >/dev/null; fi) & pids+=($!)
done
rc=0; for p in "${pids[@]}"; do wait "$p" || rc=1; done
rm -rf "$tars"
must "the images reach every node by docker save | docker load ($((SECONDS - start)) s)" $rc
on node1 mkdir -p /state && on node1 chmod 777 /state

# Bad input: each refusal names what is wrong, and nothing is deployed.
out=$(deploy 2 2>&1); rc=$?
[[ $rc != 0 && $out == *"label varnish-edge.store=1 is on 0 nodes"* ]]; rc=$?
report "deploy refuses nodes without the labels it places by, naming the label" $rc; ((rc == 0)) || echo "$out"
dk node1 node update --label-add varnish-edge.demo=true node1 >/dev/null
for i in 1 2 3; do dk node1 node update --label-add "varnish-edge.store=$i" "node$((i + 1))" >/dev/null; done
for n in "${NODES[@]}"; do dk node1 node update --label-add varnish-edge.varnish=true "$n" >/dev/null; done
out=$(deploy 2 2>&1); rc=$?
[[ $rc != 0 && $out == *"missing secret(s): varnish-edge_db_password"* && $out == *varnish-edge_varnish_purge_token* ]]
rc=$?; report "deploy refuses while a secret is missing, naming each one" $rc; ((rc == 0)) || echo "$out"
# The test's own values for the two it signs and reads with; deploy.sh secrets makes the rest.
webhook_secret="whsec_$(openssl rand -base64 32)" operator_token=$(openssl rand -hex 24) app_password=""
printf '%s' "$webhook_secret" | dki node1 secret create varnish-edge_webhook_secret - >/dev/null
printf '%s' "$operator_token" | dki node1 secret create varnish-edge_operator_token - >/dev/null
on node1 env STACK_NAME=$STACK /repo/deploy/swarm/deploy.sh secrets >/dev/null
out=$(deploy 2 REGISTRY=127.0.0.1:9 2>&1); rc=$?
[[ $rc != 0 && $out == *"registry 127.0.0.1:9 does not answer"* ]]; rc=$?
report "deploy refuses a registry that does not answer, naming it" $rc; ((rc == 0)) || echo "$out"
[[ -z $(dk node1 service ls -q) ]]; report "nothing was deployed by a refused deploy" $?

# Two Varnish tasks.
start=$SECONDS
deploy 2 >/dev/null; must "deploy.sh up: the stack deploys" $?
wait_until 600 "the install job done and WordPress serving" bash -c "$(declare -f dk); [[ \$(dk node1 service ps ${STACK}_wordpress-install --format '{{.CurrentState}}' | head -1) == Complete* ]] && dk node1 exec \$(dk node1 ps -q --filter label=com.docker.swarm.service.name=${STACK}_wordpress | head -1) test -f /tmp/stack/run/ready" >/dev/null
rc=$?; ((rc == 0)) || dk node1 service ls
must "WordPress installed and serving ($((SECONDS - start)) s)" $rc
app_password=$(dk node1 exec "$(task_container node1 wordpress)" /opt/varnish-edge/stack/prepare-wordpress.sh app-password swarm | tail -n 1)
[[ -n $app_password ]]; must "an application password for the test" $?
driver ready 2; must "two Varnish tasks serve and the purger finds both by tasks.varnish" $?
driver edit-fresh; report "an edit is fresh on both tasks" $?

# Scale to four while editing.
dk node1 service scale -d "${STACK}_varnish=4" >/dev/null
driver watch-new 60; report "scaled 2 → 4 while editing: no task served an edit older than ${FRESH_MS} ms" $?
driver ready 4; report "four tasks serve, one per node, all known to the purger" $?
driver edit-fresh; report "an edit is fresh on all four tasks" $?

# Back to three, then drain a Varnish node: its task moves to the free node.
dk node1 service scale -d "${STACK}_varnish=3" >/dev/null
driver ready 3 >/dev/null
free=$(comm -23 <(printf '%s\n' "${NODES[@]}") <(where_runs varnish))
victim=$(where_runs varnish | grep -v node1 | grep -v "$(where_runs valkey-1)" | head -1)
start=$SECONDS
dk node1 node update --availability drain "$victim" >/dev/null
wait_until 120 "the drained node's Varnish task to move" bash -c "$(declare -f dk where_runs); STACK=$STACK; where_runs varnish | grep -qx $free && ! where_runs varnish | grep -qx $victim" >/dev/null
report "draining $victim moves its Varnish task to $free ($((SECONDS - start)) s)" $?
driver ready 3; report "three tasks serve after the drain, all known to the purger" $?
driver edit-fresh; report "after the drain, an edit is fresh on the three tasks" $?
dk node1 node update --availability active "$victim" >/dev/null

# The Valkey primary's node drained under a burst.
wait_until 180 "every Valkey server and sentinel running again" all_store_running >/dev/null
primary=$(primary_now); pnode=$(where_runs "$primary")
must "the sentinels name the Valkey primary: $primary on $pnode" "$([[ -n $primary && -n $pnode ]]; echo $?)"
driver prime >/dev/null
# 300 events, 10 every 500 ms: the burst spans the drain and the sentinels' failover (down after
# 5 s), during which the purger refuses (503) and the driver retries, as the plugin's outbox does.
EXPECT_TASKS=3 driver burst 300 10 500 >"$results/failover-burst.log" 2>&1 &
burst=$!
wait_until 60 "a third of the burst accepted" on node1 sh -c '[ "$(cat /state/burst-accepted.txt 2>/dev/null || echo 0)" -ge 100 ]' >/dev/null
accepted_before=$(on node1 cat /state/burst-accepted.txt)
start=$SECONDS
dk node1 node update --availability drain "$pnode" >/dev/null
wait_until 120 "a new primary" bash -c "[[ \$($(declare -f dk where_runs task_container primary_now); STACK=$STACK; primary_now) =~ ^valkey-[0-9]\$ && \$(STACK=$STACK; $(declare -f dk where_runs task_container primary_now); primary_now) != $primary ]]" >/dev/null
rc=$?; new_primary=$(primary_now)
report "Sentinel promoted $new_primary in place of $primary ($((SECONDS - start)) s after the drain)" $rc
echo "$((SECONDS - start))" | on node1 sh -c 'cat >/state/failover-s.txt'
wait "$burst"; rc=$?
cat "$results/failover-burst.log"
report "the Valkey primary's node ($pnode) drained after $accepted_before of a 300-event burst: every event applied on every task" $rc
dk node1 node update --availability active "$pnode" >/dev/null
wait_until 180 "$primary back as a replica of $new_primary" bash -c "$(declare -f dk where_runs task_container); STACK=$STACK; n=\$(where_runs $primary); c=\$(task_container \$n $primary); dk \$n exec \$c /opt/varnish-edge/stack/images/valkey/start.sh cli 6379 info replication | grep -q 'master_host:$new_primary'" >/dev/null
report "$pnode back: $primary rejoins as a replica of $new_primary (start.sh server-auto)" $?
driver ready 3 >/dev/null

# Kill an engine in the middle of a 1,000-event burst: a Varnish node other than node1.
driver prime >/dev/null
on node1 rm -f /state/burst-accepted.txt
dead=$(where_runs varnish | grep -v node1 | head -1)
free=$(comm -23 <(printf '%s\n' "${NODES[@]}") <(where_runs varnish))
# 1,000 events, 20 every 200 ms (10 s): the engine dies with 300 in; the test waits for the
# replacement too (EXPECT_TASKS=3), which catches up on the burst from the log.
EXPECT_TASKS=3 driver burst 1000 20 200 >"$results/kill-burst.log" 2>&1 &
burst=$!
wait_until 120 "300 events of the burst accepted" on node1 sh -c '[ "$(cat /state/burst-accepted.txt 2>/dev/null || echo 0)" -ge 300 ]' >/dev/null
accepted_before=$(on node1 cat /state/burst-accepted.txt)
start=$SECONDS
docker kill "ve-$dead" >/dev/null
driver empty; report "$dead's engine killed mid-burst: its Varnish task replaced on $free, which started empty ($((SECONDS - start)) s)" $?
wait "$burst"; rc=$?
cat "$results/kill-burst.log"
report "1,000 events, $dead's engine killed after $accepted_before: none lost, every one applied on every surviving task and the replacement" $rc
out=$(deploy 3 2>&1); rc=$?
[[ $rc != 0 && $out == *"node $dead (labels"*"is down"* ]]; rc=$?
report "deploy refuses while a labelled node is down, naming it ($dead)" $rc; ((rc == 0)) || echo "$out"
driver ready 3; report "three tasks serve again, the replacement known to the purger" $?
driver edit-fresh; report "after the kill, an edit is fresh on every task, the replacement too" $?
finish
