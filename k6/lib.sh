# shellcheck shell=bash
# Shell helpers shared by the k6 smoke suite (scripts/suites/k6.sh) and the benchmark runner
# (bench/run.sh). Sourced, never run. Needs the repository root as the working directory.

K6_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

source testkit/stack.sh   # temp_stack_up, temp_stack_down, free_ports

# start_microcaches: the benchmark's pure microcaches in front of the stack's origin, NGINX as in
# the article (bench/nginx-microcache.sh), vcl/microcache.vcl with a 1 s TTL and a minimal
# Varnish (bench/varnish-microcache.sh full|minimal), on free ports exported as
# MICROCACHE_NGINX_PORT, MICROCACHE_VARNISH_PORT and MICROCACHE_MINIMAL_PORT; their pids live
# under STACK_DIR, so temp_stack_down stops them.
start_microcaches() {
  read -r MICROCACHE_VARNISH_PORT MICROCACHE_NGINX_PORT MICROCACHE_MINIMAL_PORT < <(free_ports 3)
  export MICROCACHE_VARNISH_PORT MICROCACHE_NGINX_PORT MICROCACHE_MINIMAL_PORT
  bench/nginx-microcache.sh start && bench/varnish-microcache.sh start full && bench/varnish-microcache.sh start minimal
}

# k6_run NAME SCRIPT [VAR=VALUE...]: runs k6/SCRIPT.js with those variables; the summary goes
# to $RUNS_DIR/NAME.json (handleSummary) and k6's HTML report to $RUNS_DIR/NAME.html. Needs K6
# (the binary) and RUNS_DIR. Returns k6's exit code (99: thresholds failed, 108: setup aborted).
k6_run() {
  local name=$1 script=$2; shift 2
  : "${RUNS_DIR:?k6_run needs RUNS_DIR}"
  mkdir -p "$RUNS_DIR"
  env OUT_DIR="$RUNS_DIR" RUN_NAME="$name" K6_NO_USAGE_REPORT=true \
    K6_WEB_DASHBOARD=true K6_WEB_DASHBOARD_PORT=-1 K6_WEB_DASHBOARD_PERIOD=1s \
    K6_WEB_DASHBOARD_EXPORT="$RUNS_DIR/$name.html" "$@" \
    timeout "${RUN_TIMEOUT:-300}" "$K6" run --quiet --no-color "$K6_DIR/$script.js" \
    >"$RUNS_DIR/$name.log" 2>&1
  local rc=$?
  grep -v '^time=' "$RUNS_DIR/$name.log" | tail -n 25
  ((rc == 0)) || grep '^time=.*level=\(error\|warning\)' "$RUNS_DIR/$name.log" | tail -n 5
  return $rc
}

# Origin requests, from the origin nginx's access log: log_offset marks a point, and
# origin_requests OFFSET [FIXED-STRING] counts the requests logged since (Varnish's health
# probes and the wp-cron ticker left out), optionally only lines containing FIXED-STRING.
origin_log() { echo "$LOG_DIR/nginx-access.log"; }
log_offset() { stat -c %s "$(origin_log)" 2>/dev/null || echo 0; }
origin_requests() {
  tail -c +$(($1 + 1)) "$(origin_log)" | grep -v -e '"GET /robots.txt ' -e '/wp-cron.php' |
    { if [[ -n ${2:-} ]]; then grep -cF -- "$2"; else wc -l; fi; } || true
}

# backend_requests VARNISH_WORKDIR: Varnish's count of requests it sent to its backend.
backend_requests() { varnishstat -n "$1" -1 -f MAIN.backend_req 2>/dev/null | awk '{print $2}'; }

# cpu_ticks PID...: CPU time (user + system, clock ticks) of each process and of its children,
# live or already exited (a php-fpm master's cutime holds its retired workers' time).
cpu_ticks() {
  local t=0 p c
  for p in "$@"; do
    [[ -r /proc/$p/stat ]] || continue
    for c in "$p" $(pgrep -P "$p"); do
      [[ -r /proc/$c/stat ]] && t=$((t + $(sed 's/.*) //' "/proc/$c/stat" | awk '{print $12 + $13 + $14 + $15}')))
    done
  done
  echo $t
}
# children_cpu_ticks: CPU time of every child the main shell ($$) has waited for (k6 among them).
children_cpu_ticks() { sed 's/.*) //' "/proc/$$/stat" | awk '{print $14 + $15}'; }

# with_origin_outage AT CMD...: runs CMD while the origin (the stack's nginx) is stopped AT
# seconds after CMD starts and started again when CMD ends. Returns CMD's exit code.
with_origin_outage() {
  local at=$1; shift
  (sleep "$at"; stack/services/nginx.sh stop) &
  local stopper=$!
  "$@"
  local rc=$?
  wait "$stopper"
  stack/services/nginx.sh start || rc=1
  return $rc
}
