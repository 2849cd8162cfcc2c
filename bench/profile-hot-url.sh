#!/usr/bin/env bash
# make bench-profile: where (b) NGINX microcache and (c) the VCL microcache spend their CPU on
# one hot URL. Starts a fresh native stack plus both caches (as bench/run.sh does), runs
# bench/wrk-hot-url.sh against each while `perf record` samples the cache's processes, and prints
# requests/s, the kernel / user split and the top symbols. Needs perf (Debian: linux-perf).
# Settings: PROFILE_SECONDS (per cache, 10), PROFILE_ENCODING (plain|gzip, plain).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source k6/lib.sh
SECONDS_PER_RUN=${PROFILE_SECONDS:-10} ENC=${PROFILE_ENCODING:-plain}
command -v perf >/dev/null || { echo "profile: perf is missing (apt-get install linux-perf)"; exit 1; }
OUT=$PWD/.results/bench/profile
rm -rf "$OUT"; mkdir -p "$OUT"
trap temp_stack_down EXIT
trap 'exit 130' INT TERM
export DEMO_POSTS=20
temp_stack_up profile || exit 1
start_microcaches || exit 1

for target in nginx vcl; do
  case $target in
    nginx) port=$MICROCACHE_NGINX_PORT pids=$(pgrep -d, -P "$(tr -dc 0-9 <"$RUN_DIR/nginx-microcache.pid")") ;;
    vcl) port=$MICROCACHE_VARNISH_PORT pids=$(pgrep -d, -P "$(tr -dc 0-9 <"$RUN_DIR/varnish-microcache.pid")") ;;
  esac
  curl -s -o /dev/null -H "Host: $SITE_HOST" "http://127.0.0.1:$port/"
  bench/wrk-hot-url.sh "http://127.0.0.1:$port/" "$SITE_HOST" "$SECONDS_PER_RUN" "$ENC" >"$OUT/$target.wrk.json" &
  sleep 1
  perf record -q -F 999 -g -p "$pids" -o "$OUT/$target.perf.data" -- sleep $((SECONDS_PER_RUN - 2)) 2>/dev/null
  wait
  summary=$(python3 -c "import json, sys; w = json.load(open(sys.argv[1])); print('{:,.0f} req/s, p99 {:.1f} ms'.format(w['requests'] / (w['duration_us'] / 1e6), w['p99_us'] / 1000))" "$OUT/$target.wrk.json")
  echo "════ $target ($ENC): $summary"
  echo "share of the cache's samples by code (kernel = sockets, scheduling, copies):"
  perf report -i "$OUT/$target.perf.data" --no-children --sort dso --stdio -g none 2>/dev/null | grep '%' | head -6
  echo "top symbols:"
  perf report -i "$OUT/$target.perf.data" --no-children --sort dso,symbol --stdio -g none 2>/dev/null | grep '%' | head -15
done
