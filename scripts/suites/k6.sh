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
# make bench's hit-path driver (bench/hit_path.py), briefly: the stack's Varnish and the
# minimal one, a hot post and Zipf over a few posts, plain and gzip, one round: all 8 runs
# succeed, each serves requests, and the ratios come out.
bench/post-urls.py "http://127.0.0.1:$WEB_PORT" "$SITE_HOST" "$RUNS_DIR" && head -n 10 "$RUNS_DIR/urls.txt" >"$RUNS_DIR/zipf-urls.txt"
python3 bench/hit_path.py "$RUNS_DIR/hit-path.json" --host "$SITE_HOST" --rounds 1 --seconds 2 \
  --target edge "$EDGE" "$RUN_DIR/varnish.pid" --target minimal "http://127.0.0.1:$MICROCACHE_MINIMAL_PORT" "$RUN_DIR/varnish-minimal.pid" \
  --workload "hot=$(sed -n 2p "$RUNS_DIR/urls.txt")" --workload "zipf=@$RUNS_DIR/zipf-urls.txt" --reference minimal >"$RUNS_DIR/hit-path.txt"
hit_rc=$?
python3 - "$RUNS_DIR/hit-path.json" "$hit_rc" <<'PY'
import json, sys
h, rc = json.load(open(sys.argv[1])), int(sys.argv[2])
ok = [r for r in h["runs"] if not r.get("failed") and r.get("requests", 0) > 0 and (r.get("cpu_us_per_request") or 0) > 0]
ratios = [c["ratios"].get("edge/minimal") for c in h["cells"].values()]
print(f"hit_path.py: exit {rc}, {len(ok)} of {len(h['runs'])} runs served requests without a failure, "
      f"edge/minimal medians {[r and r['median'] for r in ratios]}, failures {h['failures']}")
sys.exit(0 if rc == 0 and len(ok) == len(h["runs"]) == 8 and all(ratios) else 1)
PY
report "make bench's hit-path runs (bench/hit_path.py)" $?
# A cache that answers nothing must be reported as failed, not averaged in: exit 1, the run named.
read -r dead_port < <(free_ports 1)
python3 bench/hit_path.py "$RUNS_DIR/hit-path-dead.json" --host "$SITE_HOST" --rounds 1 --seconds 1 --encodings plain \
  --target edge "$EDGE" "$RUN_DIR/varnish.pid" --target dead "http://127.0.0.1:$dead_port" "$RUN_DIR/varnish.pid" \
  --workload "hot=$(sed -n 2p "$RUNS_DIR/urls.txt")" --reference edge >"$RUNS_DIR/hit-path-dead.txt"
dead_rc=$?
grep -q "^  dead hot plain: probe of " "$RUNS_DIR/hit-path-dead.txt"
named=$?
echo "hit_path.py with a dead target: exit $dead_rc (want 1), failure named: $((named == 0))"
report "a hit-path run against a dead cache is reported failed" $(( dead_rc == 1 && named == 0 ? 0 : 1 ))
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
