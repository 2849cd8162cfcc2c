# shellcheck shell=bash
# Docker for the tests (make test-platforms): one way to get an engine, the base image and the
# project's images. Sourced from the repository root, never run.
#
#   docker_ready           a Docker engine answers: starts dockerd (scripts/install-deps.sh
#                          installs Debian's docker.io) when none does; logs in /var/log/dockerd.log
#                          (root's own directory: a fixed name in /tmp could be a planted link)
#   docker_base            debian:trixie-slim exists: on a user's machine it is pulled as usual;
#                          here no registry answers, so it is made by debootstrap (minbase) and
#                          imported once
#   docker_image TAG DOCKERFILE [--build-arg K=V...]
#                          builds TAG from the repository root with host networking (apt-get in
#                          the Dockerfile reaches Debian's archive as the host does); Docker's
#                          layer cache makes a second build of unchanged inputs take a second;
#                          the CAs this machine adds (/usr/local/share/ca-certificates) go in as
#                          LOCAL_CA, for Dockerfiles that fetch over HTTPS

source stack/lib.sh   # wait_until

docker_ready() {
  docker info >/dev/null 2>&1 && return 0
  command -v dockerd >/dev/null || { echo "docker: no engine and no dockerd (scripts/install-deps.sh installs docker.io)" >&2; return 1; }
  local log=/var/log/dockerd.log
  echo "docker: starting dockerd (log $log)"
  (setsid dockerd >>"$log" 2>&1 &)
  wait_until 60 "dockerd to answer" docker info && return 0
  tail -n 20 "$log" >&2
  return 1
}

docker_base() {
  docker image inspect debian:trixie-slim >/dev/null 2>&1 && return 0
  docker pull -q debian:trixie-slim >/dev/null 2>&1 && return 0
  local root start=$SECONDS
  root=$(mktemp -d /tmp/trixie-root.XXXXXX)
  echo "docker: no registry: debian:trixie-slim from debootstrap --variant=minbase trixie"
  if ! debootstrap --variant=minbase trixie "$root" http://deb.debian.org/debian >"$root.log" 2>&1; then
    tail -n 20 "$root.log" >&2
    rm -rf "$root" "$root.log"
    return 1
  fi
  tar -C "$root" -c . | docker import - debian:trixie-slim >/dev/null
  rm -rf "$root" "$root.log"
  echo "docker: debian:trixie-slim imported in $((SECONDS - start)) s"
}

docker_image() {
  local tag=$1 file=$2 start=$SECONDS out ca=""
  shift 2
  out=$(mktemp)
  if grep -q '^ARG LOCAL_CA' "$file"; then
    ca=$(cat /usr/local/share/ca-certificates/*.crt 2>/dev/null)
    set -- "$@" --build-arg "LOCAL_CA=$ca"
  fi
  # The classic builder: Debian 12's engine has no buildx plugin for BuildKit.
  if ! DOCKER_BUILDKIT=0 docker build --network host -t "$tag" -f "$file" "$@" . >"$out" 2>&1; then
    tail -n 30 "$out" >&2
    echo "docker: building $tag from $file failed" >&2
    rm -f "$out"
    return 1
  fi
  rm -f "$out"
  echo "docker: $tag ready in $((SECONDS - start)) s"
}
