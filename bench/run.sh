#!/usr/bin/env bash
# make bench: one run, one machine, one real WordPress origin, four ways to serve it:
#   origin  the bare origin (nginx + php-fpm WordPress of the native stack)
#   nginx   NGINX microcaching as in NGINX's article (bench/nginx-microcache.conf.in)
#   vcl     vcl/microcache.vcl in pure microcache mode, 1 s TTL (bench/varnish-microcache.sh)
#   purge   the stack's own Varnish: long TTL kept fresh by the plugin and the purger
# Runs k6/hot-url.js and k6/zipf.js against each, wrk on hot-url against NGINX and the VCL,
# ApacheBench (ab -c 10 -t 30 -k: HTTP/1.0 keep-alive, NGINX's article's method) on hot-url
# against the three caches, k6/herd.js against the three caches, k6/freshness.js (purge; vcl for
# comparison) and k6/origin-outage.js (vcl), counts origin requests in the origin's access log,
# then bench/report.py writes .results/bench/results.json, chart.svg and the generated text
# (benchmarks.md, readme.md). Every file of the run stays under .results/bench/ (gitignored);
# `make publish-results` copies the figures to bench/results.json and regenerates the docs from
# them. About 10 minutes.
#
# Settings: BENCH_DURATION (per hot-url / zipf run, default 20s), BENCH_VUS (20),
# BENCH_POSTS (demo posts = zipf URLs, 200), BENCH_EDIT_RATE (edits/s, 2), BENCH_WRK_ROUNDS
# (rounds of the wrk hot-url runs, 3), BENCH_WRK_SECONDS (per wrk run, 10) and
# BENCH_AB_SECONDS (per ab run, 30).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source k6/lib.sh

DURATION=${BENCH_DURATION:-20s}
DURATION_S=${DURATION%s}
[[ $DURATION_S =~ ^[0-9]+$ ]] || { echo "bench: BENCH_DURATION must be whole seconds, like 20s"; exit 2; }
VUS=${BENCH_VUS:-20}
EDIT_RATE=${BENCH_EDIT_RATE:-2}
WRK_ROUNDS=${BENCH_WRK_ROUNDS:-3}
WRK_SECONDS=${BENCH_WRK_SECONDS:-10}
AB_SECONDS=${BENCH_AB_SECONDS:-30}
[[ $WRK_ROUNDS =~ ^[1-9][0-9]*$ && $WRK_SECONDS =~ ^[1-9][0-9]*$ && $AB_SECONDS =~ ^[1-9][0-9]*$ ]] ||
  { echo "bench: BENCH_WRK_ROUNDS, BENCH_WRK_SECONDS and BENCH_AB_SECONDS must be whole numbers"; exit 2; }
command -v ab >/dev/null || { echo "bench: ab is missing (make deps installs apache2-utils)"; exit 1; }
export DEMO_POSTS=${BENCH_POSTS:-200}
RESULTS_DIR=$PWD/.results/bench   # results.json, chart.svg, the generated text (bench/report.py)
RUNS_DIR=$RESULTS_DIR/out         # every file of the run
K6=$(k6/install-k6.sh) || exit 1
export K6 RUNS_DIR RUN_TIMEOUT=240
rm -rf "$RUNS_DIR"; mkdir -p "$RUNS_DIR"

# The stack's logs (Varnish, purger, PHP, nginx) are kept with the run, then it is torn down.
keep_logs_and_stop() { [[ -d ${LOG_DIR:-} ]] && cp -r "$LOG_DIR" "$RUNS_DIR/stack-logs"; temp_stack_down; }
trap keep_logs_and_stop EXIT
trap 'exit 130' INT TERM

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u +%FT%TZ)
# One retry: a stack that fails to come up is not a benchmark result.
temp_stack_up bench || { temp_stack_down keep-logs; temp_stack_up bench; } || exit 1
start_microcaches || exit 1
APP_PASSWORD=$(stack/prepare-wordpress.sh app-password bench) || exit 1

declare -A URL=(
  [origin]=http://127.0.0.1:$WEB_PORT
  [nginx]=http://127.0.0.1:$MICROCACHE_NGINX_PORT
  [vcl]=http://127.0.0.1:$MICROCACHE_VARNISH_PORT
  [minimal]=http://127.0.0.1:$MICROCACHE_MINIMAL_PORT
  [purge]=http://127.0.0.1:$VARNISH_PORT
)
declare -A VARNISH_WORKDIR=([vcl]=$STACK_DIR/varnish-microcache [purge]=$STACK_DIR/varnish)
TARGETS=(origin nginx vcl purge)

# Every published post, newest first: paths in urls.txt, "id path" in posts.txt.
bench/post-urls.py "${URL[origin]}" "$SITE_HOST" "$RUNS_DIR" || exit 1
echo "bench: $(wc -l <"$RUNS_DIR/urls.txt") post URLs; $VUS VUs, $DURATION per run"

# The processes whose CPU time a run is charged with: the cache in front, and the origin.
pidfile() { tr -dc '0-9' 2>/dev/null <"$RUN_DIR/$1.pid"; echo; }
server_pids() {
  case $1 in
    nginx) pidfile nginx-microcache ;;
    vcl) pidfile varnish-microcache ;;
    minimal) pidfile varnish-minimal ;;
    purge) pidfile varnish ;;
  esac
}
origin_pids() { pidfile nginx; pidfile php-fpm; pidfile mariadb; }
# cpu_snapshot TARGET: CPU ticks so far of TARGET's cache, of the origin and of the load generators
# this shell has waited for; a run is charged with the difference of two snapshots.
cpu_snapshot() {
  local servers origin
  read -ra servers < <(server_pids "$1" | xargs)
  read -ra origin < <(origin_pids | xargs)
  echo "$(cpu_ticks "${servers[@]}") $(cpu_ticks "${origin[@]}") $(children_cpu_ticks)"
}

# settle: every run starts with both Varnish instances seeing the origin healthy. A run that
# saturates the origin (zipf through a microcache) can make their health probes (2 s timeout)
# fail; a Varnish that thinks its origin is sick answers uncached pages with a 503, which
# would be charged to the next run.
varnish_healthy() { curl -s -o /dev/null -D- -H "Host: $SITE_HOST" "http://127.0.0.1:$1/varnish-health" | grep -qi '^X-Backend-Health: healthy'; }
settle() {
  local p
  for p in "$VARNISH_PORT" "$MICROCACHE_VARNISH_PORT"; do   # the minimal Varnish has no probe
    wait_until 60 "Varnish on port $p to see the origin healthy" varnish_healthy "$p" || echo "bench: warning: origin still sick for Varnish on $p"
  done
}

# warm TARGET: requests every post URL once (one curl, one connection), so every cache starts
# the Zipf run from the same state.
warm() {
  sed "s|^|url = \"${URL[$1]}|; s|\$|\"\noutput = \"/dev/null\"|" "$RUNS_DIR/urls.txt" >"$RUNS_DIR/warm-$1.curl"
  local bad
  bad=$(curl -s -w '%{http_code}\n' -H "Host: $SITE_HOST" -H 'Accept-Encoding: gzip' -K "$RUNS_DIR/warm-$1.curl" | grep -vc '^200$')
  ((bad == 0)) || echo "bench: warning: $bad of the warm-up requests to $1 were not a 200"
}

# editor SECONDS EVERY N: edits the titles of the N most popular (newest) posts in turn through
# the REST API, one edit every EVERY seconds for SECONDS; prints each edited post's path.
editor() {
  local end=$((SECONDS + $1)) i=0 id path
  while ((SECONDS < end)); do
    read -r id path < <(sed -n "$((i % $3 + 1))p" "$RUNS_DIR/posts.txt")
    curl -sf -o /dev/null -u "$WP_ADMIN_USER:$APP_PASSWORD" -H "Host: $SITE_HOST" -H 'Content-Type: application/json' \
      -d "{\"title\": \"Post $id, edit $i during zipf\"}" "${URL[origin]}/wp-json/wp/v2/posts/$id" && echo "$path"
    i=$((i + 1))
    sleep "$2"
  done
}

# measure NAME SCRIPT TARGET [GREP] [VAR=VALUE...]: one k6 run, plus what the origin saw during
# it (all requests, and those whose log line contains GREP) and Varnish's backend_req delta.
measure() {
  local name=$1 script=$2 target=$3 grep=$4; shift 4
  settle
  local off b0="" b1="" rc t0 nlog=$LOG_DIR/nginx-microcache-access.log noff
  off=$(log_offset)
  noff=$(stat -c %s "$nlog" 2>/dev/null || echo 0)
  [[ -n ${VARNISH_WORKDIR[$target]:-} ]] && b0=$(backend_requests "${VARNISH_WORKDIR[$target]}")
  local s0 o0 k0 s1 o1 k1
  read -r s0 o0 k0 < <(cpu_snapshot "$target")
  t0=$(date +%s.%N)
  echo "════ $name ($script → $target)"
  k6_run "$name" "$script" TARGET="${URL[$target]}" SITE_HOST="$SITE_HOST" "$@"
  rc=$?
  local t1 health=""; t1=$(date +%s.%N)
  # Did the run leave either Varnish thinking the origin is sick (probe timeouts under load)?
  varnish_healthy "$MICROCACHE_VARNISH_PORT" || health+=" vcl"
  varnish_healthy "$VARNISH_PORT" || health+=" purge"
  [[ -z $health ]] || echo "$name: origin marked sick after the run by:$health"
  read -r s1 o1 k1 < <(cpu_snapshot "$target")
  sleep 1.2   # the NGINX microcache's access log is flushed every second
  # NGINX's own view per $upstream_cache_status (MISS / EXPIRED went to the origin): count, and
  # mean and max $request_time in ms.
  [[ $target == nginx ]] && tail -c +$((noff + 1)) "$nlog" |
    awk '{ s = $(NF-1); n[s]++; t[s] += $NF; if ($NF > m[s]) m[s] = $NF }
         END { for (k in n) printf "%s %d %.1f %.1f\n", k, n[k], 1000 * t[k] / n[k], 1000 * m[k] }' \
    >"$RUNS_DIR/$name.nginx-cache-status.txt"
  [[ -n $b0 ]] && b1=$(backend_requests "${VARNISH_WORKDIR[$target]}")
  local all match=null backend=null
  [[ -n $b0 && -n $b1 ]] && backend=$((b1 - b0))
  all=$(origin_requests "$off")
  tail -c +$((off + 1)) "$(origin_log)" >"$RUNS_DIR/$name.origin.log"
  [[ -n $grep ]] && match=$(origin_requests "$off" "$grep")
  echo "$name: origin saw $all requests${grep:+ ($match matching '$grep')}; k6 exit $rc"
  python3 - "$RUNS_DIR/$name.origin.json" "$target" "$script" "$rc" "$all" "$match" "$grep" "$backend" "$t0" "$t1" "${health# }" \
    $((s1 - s0)) $((o1 - o0)) $((k1 - k0)) "$(getconf CLK_TCK)" <<'PY'
import json, sys
out, target, script, rc, alln, match, grep, backend, t0, t1, sick, server, origin, k6, hz = sys.argv[1:]
num = lambda v: None if v in ("", "null") else int(v)
cpu = lambda ticks: round(int(ticks) / int(hz), 2)
try:
    nginx = {k: {"count": int(n), "mean_ms": float(a), "max_ms": float(m)}
             for k, n, a, m in (l.split() for l in open(out.replace(".origin.json", ".nginx-cache-status.txt")))}
except OSError:
    nginx = None
json.dump({"target": target, "script": script, "k6_exit": int(rc), "origin_requests": int(alln),
           "origin_requests_matching": num(match), "match": grep, "varnish_backend_req": num(backend),
           "wall_s": round(float(t1) - float(t0), 2),
           "cpu_s": {"cache": cpu(server) if target != "origin" else None, "origin": cpu(origin), "k6": cpu(k6)},
           "nginx_upstream_cache_status": nginx, "origin_sick_after_run_for": sick.split()},
          open(out, "w"))
PY
}

# tool_run TARGET OUT COMMAND...: once both Varnish see the origin healthy, COMMAND with its
# stdout in OUT; sets RUN_RC, RUN_OFF (the origin log's offset before it) and RUN_CPU (CPU ticks
# of TARGET's cache, the origin and the load generator during it). For ab_measure.
tool_run() {
  local target=$1 out=$2 s0 o0 k0 s1 o1 k1
  shift 2
  settle
  RUN_OFF=$(log_offset)
  read -r s0 o0 k0 < <(cpu_snapshot "$target")
  "$@" >"$out"
  RUN_RC=$?
  read -r s1 o1 k1 < <(cpu_snapshot "$target")
  RUN_CPU=($((s1 - s0)) $((o1 - o0)) $((k1 - k0)))
}

# ab_measure NAME TARGET PATH: one bench/ab-hot-url.sh run on PATH (ab -c 10 -t AB_SECONDS -k),
# plus the origin's requests during it (all of them, and those for PATH) and the CPU time of the
# cache, the origin and ab. ab's own output is kept as NAME.ab.txt.
ab_measure() {
  local name=$1 target=$2 path=$3
  tool_run "$target" "$RUNS_DIR/$name.ab.json" bench/ab-hot-url.sh "${URL[$target]}$path" "$SITE_HOST" "$AB_SECONDS" "$RUNS_DIR/$name.ab.txt"
  python3 - "$RUNS_DIR/$name.ab.json" "$target" "$RUN_RC" "$(origin_requests "$RUN_OFF")" "$(origin_requests "$RUN_OFF" "\"GET $path HTTP")" "$path" \
    "${RUN_CPU[@]}" "$(getconf CLK_TCK)" <<'PY'
import json, sys
out, target, rc, origin_all, origin_url, path, server, orig, ab, hz = sys.argv[1:]
try:
    run = json.load(open(out))
except ValueError:
    run = {"aborted": None}
cpu = lambda ticks: round(int(ticks) / int(hz), 2)
run.update({"target": target, "path": path, "ab_exit": int(rc), "origin_requests": int(origin_all),
            "origin_requests_for_url": int(origin_url), "cpu_s": {"cache": cpu(server), "origin": cpu(orig), "ab": cpu(ab)}})
json.dump(run, open(out, "w"))
failed = "aborted (Test aborted after 10 failures)" if run.get("aborted") else f"{run.get('failed')} failed"
print(f"{out.rsplit('/', 1)[1]}: {run.get('rps') or 0:,.0f} req/s, {run.get('mean_ms_per_request')} ms per request, {failed}, "
      f"{run.get('keepalive_requests')} keep-alive, origin {origin_url} request(s) for {path}")
PY
}

for t in "${TARGETS[@]}"; do
  hit=0.9 p99=5000; [[ $t == origin ]] && hit=0 p99=60000
  measure "hot-url.$t" hot-url "$t" '"GET / HTTP' DURATION="$DURATION" VUS="$VUS" MIN_HIT_RATE=$hit MAX_P99_MS=$p99
done
# ab -k, the method of NGINX's microcaching article (ab -c 10 -t 30 -k: HTTP/1.0 clients asking for
# keep-alive), on a post none of the caches has served (the first request is each cache's miss).
# The minimal Varnish is left out: it has no answer for HTTP/1.0 keep-alive clients
# (vcl/microcache/http10.vcl), and ab aborts against it.
for t in nginx vcl purge; do ab_measure "ab.$t" "$t" "$(sed -n 3p "$RUNS_DIR/urls.txt")"; done
# The hit path with wrk (bench/hit_path.py, docs/benchmarks.md "The hit path"): NGINX's microcache,
# the minimal Varnish, the VCL as users run it in pure microcache mode (quiet: without the cache
# state shown to everyone, which the k6 runs' vcl needs) and in purge mode (product, trusting no
# address: a visitor of make up's stack), on one hot post (the second newest) and on Zipf over
# every post, plain and gzip clients, wrk's defaults (2 threads, 10 connections), WRK_ROUNDS
# rounds of WRK_SECONDS s in rotated order. A failed run is named and left out; it fails make bench.
read -r quiet_port product_port < <(free_ports 2)
bench/varnish-microcache.sh start quiet varnish-quiet "$quiet_port" && bench/varnish-microcache.sh start product varnish-product "$product_port" || exit 1
settle
hit_rc=0
python3 bench/hit_path.py "$RUNS_DIR/hit-path.json" --host "$SITE_HOST" --rounds "$WRK_ROUNDS" --seconds "$WRK_SECONDS" \
  --target nginx "${URL[nginx]}" "$RUN_DIR/nginx-microcache.pid" --target minimal "${URL[minimal]}" "$RUN_DIR/varnish-minimal.pid" \
  --target vcl "http://127.0.0.1:$quiet_port" "$RUN_DIR/varnish-quiet.pid" \
  --target product "http://127.0.0.1:$product_port" "$RUN_DIR/varnish-product.pid" \
  --workload "hot=$(sed -n 2p "$RUNS_DIR/urls.txt")" --workload "zipf=@$RUNS_DIR/urls.txt" \
  --reference nginx --reference minimal --origin-log "$(origin_log)" | tee "$RUNS_DIR/hit-path.txt" || hit_rc=1
bench/varnish-microcache.sh stop quiet varnish-quiet; bench/varnish-microcache.sh stop product varnish-product
# In purge mode, posts are edited during the run: the origin should see only the edited ones.
for t in "${TARGETS[@]}"; do
  hit=0.5 p99=5000
  if [[ $t == origin ]]; then hit=0 p99=60000; else settle; warm "$t"; fi
  [[ $t == purge ]] && { editor "$DURATION_S" 2 10 >"$RUNS_DIR/zipf.purge.edited.txt" & }
  measure "zipf.$t" zipf "$t" '' DURATION="$DURATION" VUS="$VUS" MIN_HIT_RATE=$hit MAX_P99_MS=$p99 WARM=0 URLS_FILE="$RUNS_DIR/urls.txt"
  wait
done
for t in nginx vcl purge; do
  nonce=bench$t$RANDOM$RANDOM
  measure "herd.$t" herd "$t" "herd=$nonce" HERD_VUS=100 HERD_NONCE=$nonce HERD_PATH="$(sed -n 100p "$RUNS_DIR/urls.txt")"
done
measure freshness.purge freshness purge '' DURATION=30s EDIT_RATE="$EDIT_RATE" READER_VUS=4 \
  WP_USER="$WP_ADMIN_USER" WP_APP_PASSWORD="$APP_PASSWORD"
measure freshness.vcl freshness vcl '' DURATION=15s EDIT_RATE=1 READER_VUS=4 FRESH_P99_MS=2000 FRESH_ALL_P99_MS=2500 \
  WP_USER="$WP_ADMIN_USER" WP_APP_PASSWORD="$APP_PASSWORD"
settle
with_origin_outage 5 measure origin-outage.vcl origin-outage vcl '' DURATION=25s VUS=10 OUTAGE_AT=5

cat >"$RUNS_DIR/run.json" <<JSON
{"started": "$started", "finished": "$(date -u +%FT%TZ)", "load_start": "$load_start",
 "load_end": "$(cut -d' ' -f1-3 /proc/loadavg)", "duration": "$DURATION", "vus": $VUS, "posts": $(wc -l <"$RUNS_DIR/urls.txt"),
 "edit_rate": $EDIT_RATE, "wordpress": "$(php -r "include '$WP_DIR/wp-includes/version.php'; echo \$wp_version;")",
 "varnish": "$(varnishd -V 2>&1 | head -1)", "nginx": "$(nginx -v 2>&1 | sed 's/.*: //')", "k6": "$("$K6" version | head -1)",
 "wrk": "$(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)",
 "ab": "$(ab -V 2>&1 | head -1 | sed 's/^This is \([A-Za-z]*\), Version \([0-9.]*\).*/\1 \2/')", "ab_seconds": $AB_SECONDS}
JSON
python3 bench/report.py "$RUNS_DIR" "$RESULTS_DIR" || exit 1
echo "bench: figures in $RESULTS_DIR (results.json, chart.svg, benchmarks.md, readme.md); make publish-results copies them into the docs"
((hit_rc == 0)) || { echo "bench: some hit-path runs failed (named above, left out of the figures)"; exit 1; }
