#!/usr/bin/env bash
# make bench-freshness: time-to-fresh at the edge and what edits cost readers, on a fresh native
# stack, with the purger's refresh on (PURGER_REFRESH_CONCURRENCY, BENCH_REFRESH_CONCURRENCY,
# default 4) and then off (0). Each edit run (k6/freshness.js) edits the newest posts through the
# REST API (BENCH_EDIT_RATE edits/s, default 2, for BENCH_FRESH_DURATION, default 30s), then makes
# site-wide changes, a site title change and a navigation edit by turns (BENCH_SITEWIDE_RATE,
# default 0.5/s, for BENCH_SITEWIDE_DURATION, default 20s), while readers load the same pages
# and, 40 % of the time, any of the newest BENCH_READ_POSTS (default 40) posts; it times each
# edit until every page it checks is fresh through Varnish. A run of the same readers
# without edits, as long, before both, is the baseline for the readers' p99. A second run
# without edits measures this machine's bound: WordPress rendering the pages checked as fast as
# it can, straight from the origin (wrk), beside the same readers: its rate bounds how soon a
# site-wide change can show on all of them, its readers' p99 what rendering alone costs readers.
# Prints p50 / p99 / max per kind of edit, readers' p99 and the share of their requests that
# waited on the origin (X-Cache MISS or PASS, or a HIT after waiting for another request's fetch:
# Varnish's log), and the origin requests per edit (bench/freshness.py says how); writes them to
# .results/bench/freshness.json (gitignored; `make publish-results` copies it to
# bench/freshness.json). Fails when, with refresh on, the slowest edit took 500 ms or more to be
# fresh on every page checked, or the readers' p99 during edits was over twice the baseline's.
# Each edit run also breaks edit → fresh down by stage (the plugin sending, the purger accepting,
# the node applying, the page refetched: bench/fresh-stages.py).
#
# BENCH_CPU_HOGS=N (default 0): N busy processes at the same priority compete for the CPUs from
# the first run to the last, as other work does on a shared host; the figures go to
# freshness-loaded.json instead, the edit runs set no speed thresholds and wait up to 30 s per
# edit, and the bench fails only when the purger's and the nodes' share of an edit (accepted →
# applied on every node) has a p99 of 500 ms or more: the rest is the origin's (the stages say).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source k6/lib.sh

POST_DURATION=${BENCH_FRESH_DURATION:-30s}
SITEWIDE_DURATION=${BENCH_SITEWIDE_DURATION:-20s}
EDIT_RATE=${BENCH_EDIT_RATE:-2}
SITEWIDE_RATE=${BENCH_SITEWIDE_RATE:-0.5}
REFRESH=${BENCH_REFRESH_CONCURRENCY:-4}
READ_POSTS=${BENCH_READ_POSTS:-40}
HOGS=${BENCH_CPU_HOGS:-0}
[[ $HOGS =~ ^[0-9]+$ ]] || { echo "freshness: BENCH_CPU_HOGS is a count of busy processes, not $HOGS" >&2; exit 1; }
OUT_NAME=freshness; ((HOGS > 0)) && OUT_NAME=freshness-loaded
# seconds 30s|2m: a k6 duration in whole seconds.
seconds() {
  [[ $1 =~ ^([0-9]+)(s|m)$ ]] || { echo "freshness: not a duration in s or m: $1" >&2; return 1; }
  if [[ ${BASH_REMATCH[2]} == m ]]; then echo $((BASH_REMATCH[1] * 60)); else echo "${BASH_REMATCH[1]}"; fi
}
POST_SECONDS=$(seconds "$POST_DURATION") && seconds "$SITEWIDE_DURATION" >/dev/null || exit 1
export DEMO_POSTS=${BENCH_POSTS:-60}
export PURGER_REFRESH_CONCURRENCY=$REFRESH
RESULTS_DIR=$PWD/.results/bench
RUNS_DIR=$RESULTS_DIR/$OUT_NAME
K6=$(k6/install-k6.sh) || exit 1
export K6 RUNS_DIR RUN_TIMEOUT=180
rm -rf "$RUNS_DIR"; mkdir -p "$RUNS_DIR"
sampler='' watcher='' renderer='' hogs=()
# the stack's logs (WordPress's, the purger's) are kept beside the runs
keep_logs() { [[ -d ${LOG_DIR:-} ]] && cp -r "$LOG_DIR" "$RUNS_DIR/stack-logs"; }
trap 'for p in $sampler $watcher $renderer "${hogs[@]}"; do kill "$p" 2>/dev/null; done; keep_logs; temp_stack_down' EXIT
trap 'exit 130' INT TERM

started=$(date -u +%FT%TZ)
temp_stack_up freshness || exit 1
APP_PASSWORD=$(stack/prepare-wordpress.sh app-password bench-freshness) || exit 1
load_secrets

# Varnish's counters every 200 ms (ms since the epoch, backend requests, client requests,
# requests put on a waiting list): freshness.py cuts them at the phases' boundaries.
sample_counters() {
  while :; do
    varnishstat -n "$STACK_DIR/varnish" -1 -f MAIN.backend_req -f MAIN.client_req -f MAIN.busy_sleep 2>/dev/null |
      awk -v t="$(date +%s%3N)" '{v[$1] = $2} END {print t, v["MAIN.backend_req"] + 0, v["MAIN.client_req"] + 0, v["MAIN.busy_sleep"] + 0}'
    sleep 0.2
  done
}
sample_counters >"$RUNS_DIR/counters.txt" &
sampler=$!

# refreshes NAME: the purger's refresh counters so far (from 0 with each purger process).
refreshes() {
  curl -fsS -H "Authorization: Bearer $OPERATOR_TOKEN" "http://127.0.0.1:$PURGER_PORT/metrics" 2>/dev/null |
    grep '^varnish_edge_purger_refreshes_total' >"$RUNS_DIR/$1.refreshes.txt"
}

# watch_waits NAME: from now on, Varnish's log of the readers' requests that waited on another
# request's fetch (the waiting list) or went to the origin themselves (miss, pass: with the
# reason a pass has) goes to NAME.waits.txt, and the time each reader's request spent in Varnish
# (µs) to NAME.edge.txt, until stop_watch NAME.
watch_waits() {
  varnishncsa -n "$STACK_DIR/varnish" \
    -q 'ReqHeader:X-Bench-Client eq "reader" and (Timestamp:Waitinglist or VCL_call eq "MISS" or VCL_call eq "PASS")' \
    -F '%{Varnish:handling}x %{%s}t %U %{X-Cache-Reason}o' -w "$RUNS_DIR/$1.waits.txt" &
  watcher=$!
  varnishncsa -n "$STACK_DIR/varnish" -q 'ReqHeader:X-Bench-Client eq "reader"' -F '%D' -w "$RUNS_DIR/$1.edge.txt" &
  watcher="$watcher $!"
}
stop_watch() {
  sleep 2   # refreshes still under way land in this run's count
  local p
  for p in $watcher; do kill "$p"; wait "$p" 2>/dev/null; done
  watcher=''
  date +%s%3N >"$RUNS_DIR/$1.end"
}

common=(TARGET="http://127.0.0.1:$VARNISH_PORT" SITE_HOST="$SITE_HOST" READER_VUS=4 READ_POSTS="$READ_POSTS"
  WP_USER="$WP_ADMIN_USER" WP_APP_PASSWORD="$APP_PASSWORD" EDIT_TIMES=1)
# limits VAR=VALUE...: the speed thresholds of an edit run; under competing load none, and each
# edit is waited for up to 30 s instead of 10 (the smoke's bound), so that slow ones are measured.
FRESH_TIMEOUT_MS=10000; ((HOGS > 0)) && FRESH_TIMEOUT_MS=30000
limits() { if ((HOGS > 0)); then echo "FRESH_TIMEOUT_MS=$FRESH_TIMEOUT_MS"; else echo "$@"; fi; }
# stages NAME: that edit run's edit → fresh by stage (NAME.stages.json).
stages() { REDIS_PORT=$REDIS_PORT REDIS_PASSWORD=$REDIS_PASSWORD python3 bench/fresh-stages.py "$RUNS_DIR/$1.log" "$RUNS_DIR/$1.stages.json"; }
# edit_run NAME [VAR=VALUE...]: one run of k6/freshness.js (EDIT_RATE=0: readers only).
edit_run() {
  watch_waits "$1"
  k6_run "$1" freshness "${common[@]}" DURATION="$POST_DURATION" EDIT_RATE="$EDIT_RATE" \
    SITEWIDE_DURATION="$SITEWIDE_DURATION" SITEWIDE_RATE="$SITEWIDE_RATE" "${@:2}"
  local rc=$?
  stop_watch "$1"
  return $rc
}

for ((i = 0; i < HOGS; i++)); do yes >/dev/null & hogs+=("$!"); done
((HOGS > 0)) && echo "freshness: $HOGS busy processes compete for the $(nproc) CPUs from now on"
# First (it also warms PHP and the database for both edit runs): the readers alone, as long.
echo "freshness: readers without edits, the baseline"
edit_run baseline EDIT_RATE=0
rc=$?
refreshes baseline   # the navigation's creation: not the refresh-on run's
# The machine's own bound: the same readers, no edits, while WordPress renders the pages a site
# title change is checked on as fast as it can, straight from the origin (wrk, one connection per
# CPU). Its rate says how soon those pages can all be rendered again at best; the readers' p99
# says what rendering alone, without any edit or purge, costs readers on these shared CPUs.
read -r -a checked < <(grep -o 'freshness: pages checked [^"]*' "$RUNS_DIR/baseline.log" | head -n 1 | cut -d' ' -f4-)
((${#checked[@]} > 0)) || { echo "freshness: the baseline run did not say which pages it checks"; exit 1; }
echo "freshness: readers without edits while the origin renders the ${#checked[@]} pages checked flat out"
wrk -t1 -c"$(nproc)" -d"$(($(seconds "$POST_DURATION") + $(seconds "$SITEWIDE_DURATION") + 10))s" -H "Host: $SITE_HOST" \
  -s bench/origin-pages.lua "http://127.0.0.1:$WEB_PORT" -- "${checked[@]}" >"$RUNS_DIR/origin-busy.wrk.txt" 2>&1 &
renderer=$!
edit_run origin-busy EDIT_RATE=0 || rc=1
kill -INT "$renderer" 2>/dev/null; wait "$renderer"
echo "freshness: refresh on (PURGER_REFRESH_CONCURRENCY=$REFRESH)"
# shellcheck disable=SC2046  # limits: no words, or VAR=VALUE words
edit_run refresh-on $(limits FRESH_P99_MS=500 FRESH_ALL_P99_MS=500 FRESH_MAX_MS=500) || rc=1
refreshes refresh-on
stages refresh-on || rc=1
echo "freshness: refresh off (PURGER_REFRESH_CONCURRENCY=0)"
stack/services/purger.sh stop && PURGER_REFRESH_CONCURRENCY=0 stack/services/purger.sh start >/dev/null || exit 1
# Without refresh the slowest edits take longer than the target: loose thresholds, a record only.
# shellcheck disable=SC2046
edit_run refresh-off $(limits FRESH_P99_MS=10000 FRESH_ALL_P99_MS=10000)
off_rc=$?
((off_rc == 0 || off_rc == 99)) || rc=1
refreshes refresh-off
stages refresh-off || rc=1
kill "$sampler" "${hogs[@]}"; sampler='' hogs=()

python3 bench/freshness.py "$RUNS_DIR" "$RESULTS_DIR/$OUT_NAME.json" "$started" "$PURGER_REPURGE_DELAYS_MS" "$REFRESH" "$POST_SECONDS" "$HOGS" "$FRESH_TIMEOUT_MS" || rc=1
exit $rc
