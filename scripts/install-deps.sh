#!/usr/bin/env bash
# Installs what `make up`, `make test`, `make bench`, `make chaos` and `make soak` need on a plain
# Debian 12, and nothing that is already there. Every package is named here: apt runs with
# --no-install-recommends, so nothing may ride in on a Recommends (Debian's WordPress ships its
# default theme as a separate, merely recommended package). Prerequisites apt cannot give in a
# usable version (Node.js >= 20 with npm, Go for building k6) are checked, with one line saying
# how to get them.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  varnish varnish-modules                      # vcl/, every suite that runs varnishd
  shellcheck                                   # make lint (scripts/lint/shell.sh)
  redis-server redis-tools                     # purger/ tests and bench, the native stack
  redis-sentinel                               # purger/ Sentinel failover test (test/sentinel-failover.test.ts)
  mariadb-server mariadb-client                # WordPress's database (stack/, plugin tests)
  php-cli php-fpm php-mysql php-curl php-xml php-mbstring  # WordPress under nginx and PHP CLI
  wordpress wordpress-theme-twentytwentythree  # WordPress 6.1 and the theme the demo site and tests activate
  nginx                                        # the origin web server; bench's NGINX microcache
  phpunit                                      # wordpress-plugin/ tests
  php-codesniffer                              # phpcs for scripts/lint/php.sh (make lint)
  chromium                                     # the plugin's headless browser test
  curl openssl perl python3 python3-yaml python3-pytest  # stack/ scripts, compose check (pytest)
  python3-venv procps                          # reliability/ (schemathesis venv, process memory)
  wrk                                          # bench/ hot-url and the k6 suite's check of it
  passwd                                       # useradd: the native stack's unprivileged service user
)

# Node.js with npm (purger/, reliability/, e2e, browser test) and Go (builds k6) are not taken
# from apt: bookworm's nodejs is 18 and its golang 1.19, too old for Fastify 5 and k6 1.8.
NODE_MIN=20
GO_MIN=1.25   # the go directive of go.k6.io/k6 v1.8.1's go.mod

need() { echo "install-deps: $*" >&2; exit 1; }
version_ge() { [[ $(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1) == "$2" ]]; }

check_node() {
  command -v node >/dev/null || need "Node.js >= $NODE_MIN with npm is required: install the current LTS from https://nodejs.org (or NodeSource's deb repository), then run make again"
  local v; v=$(node -p 'process.versions.node')
  version_ge "$v" "$NODE_MIN" || need "Node.js $v is too old: >= $NODE_MIN is required (the current LTS is recommended), from https://nodejs.org or NodeSource's deb repository"
  command -v npm >/dev/null || need "npm is missing next to Node.js $v: install the Node.js distribution that ships npm (https://nodejs.org)"
}

check_go() {
  # k6/install-k6.sh looks in the same places.
  local go; go=$(command -v go || echo /usr/local/go/bin/go)
  [[ -x $go ]] || need "Go >= $GO_MIN is required to build k6: install it from https://go.dev/dl (unpack to /usr/local/go), then run make again"
  local v; v=$("$go" env GOVERSION); v=${v#go}
  version_ge "$v" "$GO_MIN" || need "Go $v is too old to build k6: >= $GO_MIN is required, from https://go.dev/dl"
}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

command -v apt-get >/dev/null || need "this script installs with apt-get (Debian 12 / Ubuntu); install the packages listed in scripts/install-deps.sh by hand"
missing=()
for pkg in "${APT_PACKAGES[@]}"; do installed "$pkg" || missing+=("$pkg"); done
if ((${#missing[@]})); then
  sudo=""; [[ $(id -u) -eq 0 ]] || sudo="sudo"
  echo "install-deps: apt-get install ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
check_node
check_go
# The test kit's one dependency (the Standard Webhooks library the tests sign with).
if [[ ! -d testkit/node_modules ]]; then
  echo "install-deps: npm ci in testkit/"
  npm --prefix testkit ci --no-audit --no-fund --loglevel=error
fi
echo "install-deps: system packages present; Node.js and Go are recent enough"
