#!/usr/bin/env bash
# wrk-hot-url.sh URL HOST SECONDS plain|gzip: one wrk run against one URL with 10 connections on
# 2 threads, the way the issue's reference figures were measured; prints the JSON line of
# bench/wrk-summary.lua. plain sends wrk's default headers (no Accept-Encoding); gzip adds
# Accept-Encoding: gzip as browsers do. WRK_CONNECTIONS overrides the 10 connections.
set -euo pipefail
(($# == 4)) || { echo "usage: $0 URL HOST SECONDS plain|gzip" >&2; exit 2; }
url=$1 host=$2 seconds=$3 enc=$4
headers=(-H "Host: $host")
case $enc in
  plain) ;;
  gzip) headers+=(-H "Accept-Encoding: gzip") ;;
  *) echo "wrk-hot-url: encoding must be plain or gzip, not '$enc'" >&2; exit 2 ;;
esac
command -v wrk >/dev/null || { echo "wrk-hot-url: wrk is not installed (make deps installs it)" >&2; exit 1; }
wrk -t2 -c"${WRK_CONNECTIONS:-10}" -d"${seconds}s" --timeout 10s "${headers[@]}" \
  -s "$(dirname "$0")/wrk-summary.lua" "$url" | tail -n 1
