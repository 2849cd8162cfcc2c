#!/usr/bin/env bash
# Installs what the suites and the native stack need, and nothing that is already there.
# Debian/Ubuntu: one `apt-get update`, then every missing package in one `apt-get install`.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  varnish varnish-modules          # vcl/ and every suite that runs varnishd
  redis-server                     # purger/ integration tests and bench
  mariadb-server php-cli php-mysql php-curl php-xml php-mbstring wordpress phpunit chromium nodejs  # wordpress-plugin/ (scripts/suites/plugin.sh)
  mariadb-server mariadb-client redis-tools nginx php-fpm php-cli php-mysql php-xml php-mbstring php-curl wordpress curl openssl perl python3-yaml  # stack/ (make up, e2e, compose check)
  python3-venv procps            # reliability/ (schemathesis venv, process memory)
  wrk                            # bench/ (hot-url as the reference measured it) and the k6 suite's check of it
)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

missing=()
for pkg in "${APT_PACKAGES[@]}"; do installed "$pkg" || missing+=("$pkg"); done
if ((${#missing[@]})); then
  sudo=""; [[ $(id -u) -eq 0 ]] || sudo="sudo"
  echo "install-deps: apt-get install ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "install-deps: system packages present"
