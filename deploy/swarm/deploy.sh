#!/usr/bin/env bash
# The Swarm stack's deploy (deploy/swarm/README.md), run where `docker` talks to a swarm manager:
#
#   deploy.sh secrets        creates each Swarm secret the stack uses that does not exist yet
#                            (varnish-edge_<name>, from stack/settings.table's generators); an
#                            existing one is kept (a Swarm secret cannot change while in use)
#   deploy.sh up             checks, then `docker stack deploy`: refuses, naming what is wrong,
#                            when this engine is no swarm manager, a labelled node is missing or
#                            not ready, a secret is missing, or the registry does not answer
#   deploy.sh down           removes the stack (volumes and secrets stay)
#
# Settings (environment): STACK_NAME (varnish-edge), REGISTRY (host:port of your registry: the
# images are tagged and pushed there and the nodes pull them; empty: every node already has them,
# docker load, and nothing is pulled), and the stack file's own: VARNISH_REPLICAS, VARNISH_PORT,
# ORIGIN_URL, SITE_HOST, SITE_SCHEME, VARNISH_SIZE, ... (deploy/swarm/stack.yml).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=stack/lib.sh
source "$here/../../stack/lib.sh"
STACK_NAME=${STACK_NAME:-varnish-edge}
REGISTRY=${REGISTRY:-}
stack_file=$here/stack.yml
die() { printf 'deploy: %s\n' "$*" >&2; exit 1; }
say() { printf 'deploy: %s\n' "$*"; }

# The secrets the stack file names (varnish-edge_<name>), one per line.
stack_secret_names() { grep -oE 'name: varnish-edge_[a-z_]+' "$stack_file" | sed 's/^name: //'; }
# The images it runs, as the stack file names them without IMAGE_PREFIX.
stack_images() {
  grep -oE 'image: \$\{IMAGE_PREFIX:-\}[^ ]+' "$stack_file" | sed 's/^image: ${IMAGE_PREFIX:-}//' |
    sed -e "s/\${VARNISH_VERSION:-7.7}/${VARNISH_VERSION:-7.7}/" -e "s/\${PURGER_NODE:-24}/${PURGER_NODE:-24}/" | sort -u
}

need_manager() {
  local state
  state=$(docker info --format '{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}' 2>/dev/null) ||
    die "docker does not answer: run this where docker talks to a swarm manager"
  [[ $state == "active true" ]] || die "this engine is not a swarm manager (docker info says: $state): docker swarm init, or run this on a manager"
}

create_secrets() {
  local full name
  for full in $(stack_secret_names); do
    docker secret inspect "$full" >/dev/null 2>&1 && continue
    name=${full#varnish-edge_}
    secret_value "${name^^}" | docker secret create "$full" - >/dev/null
    say "created secret $full"
  done
}

check_secrets() {
  local full missing=()
  for full in $(stack_secret_names); do docker secret inspect "$full" >/dev/null 2>&1 || missing+=("$full"); done
  ((${#missing[@]} == 0)) || die "missing secret(s): ${missing[*]}: run deploy/swarm/deploy.sh secrets (or docker secret create NAME FILE with your own)"
}

# Every label the stack places by must be on a ready, active node: varnish-edge.varnish=true on at
# least one, varnish-edge.store=1, 2 and 3 and varnish-edge.demo=true on exactly one each.
check_nodes() {
  local rows label want n
  rows=$(docker node ls -q | xargs docker node inspect --format '{{.Description.Hostname}} {{.Status.State}} {{.Spec.Availability}} {{range $k, $v := .Spec.Labels}}{{$k}}={{$v}},{{end}}')
  while read -r host state avail labels; do
    [[ -n ${labels:-} ]] || continue
    [[ $state == ready ]] || die "node $host (labels ${labels%,}) is $state: bring it back, or move its labels to a ready node"
    [[ $avail == active ]] || say "node $host is $avail: its tasks run elsewhere"
  done <<<"$rows"
  for label in varnish-edge.store=1 varnish-edge.store=2 varnish-edge.store=3 varnish-edge.demo=true; do
    n=$(grep -c -- "$label," <<<"$rows" || true)
    [[ $n == 1 ]] || die "label $label is on $n nodes, it must be on exactly one: docker node update --label-add $label NODE"
  done
  n=$(grep -c -- "varnish-edge.varnish=true," <<<"$rows" || true)
  want=${VARNISH_REPLICAS:-3}
  ((n >= want)) || die "VARNISH_REPLICAS=$want but only $n node(s) carry varnish-edge.varnish=true (one Varnish per node): docker node update --label-add varnish-edge.varnish=true NODE"
}

# With REGISTRY: it must answer, then every image is pushed there. Without: the manager must have
# every image (the other nodes load the same, docker save | docker load).
check_images() {
  local image
  if [[ -n $REGISTRY ]]; then
    curl -fsS -m 5 -o /dev/null "http://$REGISTRY/v2/" 2>/dev/null ||
      die "registry $REGISTRY does not answer (http://$REGISTRY/v2/): start it, or leave REGISTRY empty and docker load the images on every node"
    for image in $(stack_images); do
      docker image inspect "$image" >/dev/null 2>&1 || die "image $image is not on this engine: build it (docker compose build) before pushing"
      { docker tag "$image" "$REGISTRY/$image" && docker push -q "$REGISTRY/$image" >/dev/null; } ||
        die "pushing $image to registry $REGISTRY failed"
    done
    return
  fi
  for image in $(stack_images); do
    docker image inspect "$image" >/dev/null 2>&1 ||
      die "image $image is not on this manager (and REGISTRY is empty): docker load it on every node, or set REGISTRY"
  done
}

case ${1:-} in
secrets) need_manager; create_secrets ;;
up)
  need_manager
  check_nodes
  check_secrets
  check_images
  prefix=""; resolve=(--resolve-image never)
  [[ -n $REGISTRY ]] && { prefix="$REGISTRY/"; resolve=(--resolve-image always); }
  IMAGE_PREFIX=$prefix DOCKER_SERVICE_PREFER_OFFLINE_IMAGE=1 \
    docker stack deploy --detach=true "${resolve[@]}" -c "$stack_file" "$STACK_NAME" >/dev/null
  say "stack $STACK_NAME deployed: docker stack ps $STACK_NAME"
  ;;
down) need_manager; docker stack rm "$STACK_NAME" >/dev/null; say "stack $STACK_NAME removed (volumes and secrets stay)" ;;
*) die "usage: deploy.sh secrets | up | down" ;;
esac
