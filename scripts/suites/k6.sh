#!/usr/bin/env bash
# k6 smoke suite: every k6/ scenario for a few seconds with loose thresholds, so the scripts
# keep working (the real runs are `make bench`). Starts the native stack on free ports in a
# temporary STACK_DIR plus a pure-microcache varnishd for the outage check, and tears it all
# down even on failure. Also checks that a script's setup fails fast when the target is down.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source k6/lib.sh
source testkit/report.sh
finish() { report_end; exit; }

K6=$(k6/install-k6.sh) || { report "k6 v1.8.1 available" 1; finish; }
RUNS_DIR=$(mktemp -d /tmp/k6-smoke-out.XXXXXX)
export K6 RUNS_DIR RUN_TIMEOUT=120

rc=1
cleanup() {
  if ((rc != 0)); then temp_stack_down keep-logs; else temp_stack_down; fi
  rm -rf "$RUNS_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 1. Fails fast: nothing listens on the target, so setup must abort (k6 exit code 108) at once.
read -r dead_port < <(free_ports 1)
start=$SECONDS
k6_run down-target hot-url TARGET="http://127.0.0.1:$dead_port" DURATION=30s >/dev/null
code=$?
echo "target down: k6 exit code $code after $((SECONDS - start)) s (want 108 within 15 s)"
report "setup aborts at once when the target is down" $(( code == 108 && SECONDS - start < 15 ? 0 : 1 ))

export DEMO_POSTS=${K6_SMOKE_POSTS:-60}
if ! temp_stack_up k6; then report "stack starts" 1; finish; fi
start_microcaches || { report "the benchmark's microcaches start" 1; finish; }
APP_PASSWORD=$(stack/prepare-wordpress.sh app-password k6) || { report "application password" 1; finish; }
EDGE=http://127.0.0.1:$VARNISH_PORT
common=("TARGET=$EDGE" "SITE_HOST=$SITE_HOST")

# 2–5: each scenario briefly, through the stack's Varnish.
k6_run hot-url hot-url "${common[@]}" DURATION=3s VUS=10 MAX_P99_MS=2000 MIN_HIT_RATE=0.9
report "hot-url" $?
# The benchmark's wrk run on hot-url (bench/wrk-hot-url.sh), briefly: its JSON line must show
# requests served and no errors.
bench/wrk-hot-url.sh "$EDGE/" "$SITE_HOST" 2 plain >"$RUNS_DIR/wrk.json"
python3 - "$RUNS_DIR/wrk.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
print(f"wrk hot-url: {w['requests']} requests, p99 {w['p99_us'] / 1000:.1f} ms, "
      f"{w['socket_errors']} socket errors, {w['non_2xx_3xx']} non-2xx/3xx")
sys.exit(0 if w["requests"] > 0 and w["socket_errors"] == 0 and w["non_2xx_3xx"] == 0 else 1)
PY
report "wrk hot-url run (make bench's reference method)" $?
# The benchmark's ab -k run (bench/ab-hot-url.sh: HTTP/1.0 keep-alive, as NGINX's article ran it),
# briefly, against the pure 1 s microcache, so across refreshes: no failed request (before
# vcl/microcache/http10.vcl, ab gave up after 10 within seconds).
bench/ab-hot-url.sh "http://127.0.0.1:$MICROCACHE_VARNISH_PORT/" "$SITE_HOST" 4 >"$RUNS_DIR/ab.json"
python3 - "$RUNS_DIR/ab.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
print(f"ab -k hot-url: {a['requests']} requests, {a['failed']} failed {a['failed_kinds']}, "
      f"{a['keepalive_requests']} kept alive, {a['non_2xx']} non-2xx{', ABORTED' if a['aborted'] else ''}")
sys.exit(0 if not a["aborted"] and a["requests"] and a["failed"] == 0 and a["non_2xx"] == 0 else 1)
PY
report "ab -k hot-url run (HTTP/1.0 keep-alive, NGINX's article's method)" $?
# make bench's minimal Varnish (bench/minimal-varnish.vcl) caches the home page: the second
# request is a hit (X-Varnish carries two ids) with the page's markup.
minimal=http://127.0.0.1:$MICROCACHE_MINIMAL_PORT/
curl -s -o /dev/null -H "Host: $SITE_HOST" "$minimal"
hit=$(curl -s -D "$RUNS_DIR/minimal.headers" -H "Host: $SITE_HOST" "$minimal" | grep -c '<body')
ids=$(tr -d '\r' <"$RUNS_DIR/minimal.headers" | sed -n 's/^X-Varnish: //Ip' | wc -w)
echo "minimal Varnish: second request X-Varnish ids $ids (want 2), body markup $hit"
report "minimal Varnish serves the page from cache" $(( ids == 2 && hit >= 1 ? 0 : 1 ))
k6_run zipf zipf "${common[@]}" DURATION=3s VUS=10 MAX_P99_MS=5000 MIN_HIT_RATE=0.3
report "zipf" $?

offset=$(log_offset)
nonce=smoke$RANDOM$RANDOM
k6_run herd herd "${common[@]}" HERD_VUS=50 HERD_NONCE=$nonce MAX_P99_MS=10000
herd_rc=$?
seen=$(origin_requests "$offset" "herd=$nonce")
echo "herd: the origin's access log has $seen request(s) for ?herd=$nonce (want 1)"
report "herd" $(( herd_rc == 0 && seen == 1 ? 0 : 1 ))

# Correctness only: every edit fresh on all four pages within 30 s (no timing threshold: the
# figures it prints are make bench-freshness's business).
k6_run freshness freshness "${common[@]}" DURATION=5s EDIT_RATE=2 EDIT_POSTS=8 READER_VUS=2 \
  FRESH_TIMEOUT_MS=30000 WP_USER="$WP_ADMIN_USER" WP_APP_PASSWORD="$APP_PASSWORD"
report "freshness" $?

# 6. The origin goes away 3 s in; the microcache Varnish (1 s TTL) must keep serving.
with_origin_outage 3 k6_run origin-outage origin-outage TARGET="http://127.0.0.1:$MICROCACHE_VARNISH_PORT" \
  SITE_HOST="$SITE_HOST" DURATION=14s VUS=5 OUTAGE_PAGES=10 OUTAGE_AT=3
report "origin-outage" $?

# Every run left a machine-readable summary and k6's HTML report.
missing=0
for name in hot-url zipf herd freshness origin-outage; do
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$RUNS_DIR/$name.json" 2>/dev/null || { echo "no summary JSON for $name"; missing=1; }
  grep -qi '<html' "$RUNS_DIR/$name.html" 2>/dev/null || { echo "no HTML report for $name"; missing=1; }
done
report "summary JSON and HTML report for every run" $missing

((REPORT_FAILED == 0)) && rc=0
finish
