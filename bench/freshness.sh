#!/usr/bin/env bash
# make bench-freshness: time-to-fresh at the edge under read load, on a fresh native stack.
# k6/freshness.js edits the newest posts through the REST API (BENCH_EDIT_RATE edits/s, default
# 2, for BENCH_FRESH_DURATION, default 40s: 80 edits) while readers load the same pages, and
# times each edit until the post, and then the post, home page, category and feed, are fresh
# through Varnish. Prints p50 / p99 / max and writes them to .results/bench/freshness.json
# (gitignored; `make publish-results` copies it to bench/freshness.json); fails when the slowest
# edit took 500 ms or more (the worst case the project promises on loopback). Also records the
# origin share: Varnish's backend requests over its client requests during the run (edits' POSTs
# included), what fetches refused because an invalidation overlapped them cost.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source k6/lib.sh

DURATION=${BENCH_FRESH_DURATION:-40s}
EDIT_RATE=${BENCH_EDIT_RATE:-2}
export DEMO_POSTS=${BENCH_POSTS:-60}
RESULTS_DIR=$PWD/.results/bench
RUNS_DIR=$RESULTS_DIR/freshness
K6=$(k6/install-k6.sh) || exit 1
export K6 RUNS_DIR RUN_TIMEOUT=180
rm -rf "$RUNS_DIR"; mkdir -p "$RUNS_DIR"
trap 'temp_stack_down' EXIT
trap 'exit 130' INT TERM

started=$(date -u +%FT%TZ)
temp_stack_up freshness || exit 1
APP_PASSWORD=$(stack/prepare-wordpress.sh app-password bench-freshness) || exit 1
varnish_counter() { varnishstat -n "$STACK_DIR/varnish" -1 -f "$1" 2>/dev/null | awk '{print $2}'; }
client_before=$(varnish_counter MAIN.client_req) backend_before=$(backend_requests "$STACK_DIR/varnish")
k6_run freshness freshness TARGET="http://127.0.0.1:$VARNISH_PORT" SITE_HOST="$SITE_HOST" \
  DURATION="$DURATION" EDIT_RATE="$EDIT_RATE" READER_VUS=4 WP_USER="$WP_ADMIN_USER" WP_APP_PASSWORD="$APP_PASSWORD" \
  FRESH_P99_MS=500 FRESH_ALL_P99_MS=500 FRESH_MAX_MS=500
rc=$?
clients=$(($(varnish_counter MAIN.client_req) - client_before)) origin=$(($(backend_requests "$STACK_DIR/varnish") - backend_before))
python3 - "$RUNS_DIR/freshness.json" "$RESULTS_DIR/freshness.json" "$started" "$PURGER_REPURGE_DELAYS_MS" "$clients" "$origin" <<'PY' || exit 1
import json, os, platform, sys
run, out, started, repurge, clients, origin = sys.argv[1:]
clients, origin = int(clients), int(origin)
r = json.load(open(run))
m = r["metrics"]
def stats(name):
    v = m[name]
    return {"p50_ms": v["p(50)"], "p99_ms": v["p(99)"], "max_ms": v["max"]}
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "unknown")
res = {
    "started": started, "edits": m["edge_edits"]["count"], "timeouts": m.get("edge_fresh_timeouts", {}).get("count", 0),
    "edit_rate": r.get("edit_rate"), "reader_rps": r["rps"], "reader_errors": r["errors"],
    "post": stats("edge_time_to_fresh"), "post_home_category_feed": stats("edge_time_to_fresh_all"),
    "purger_repurge_delays_ms": repurge,
    "origin": {"client_requests": clients, "backend_requests": origin, "share_pct": round(100 * origin / max(clients, 1), 2)},
    "machine": {"cpus": os.cpu_count(), "cpu": cpu, "os": platform.platform()},
}
json.dump(res, open(out, "w"), indent=2); open(out, "a").write("\n")
p, a = res["post"], res["post_home_category_feed"]
print(f"freshness: {res['edits']} edits under {res['reader_rps']} reads/s, {res['timeouts']} not fresh within 10 s")
print(f"  post page:                  p50 {p['p50_ms']:.0f} ms, p99 {p['p99_ms']:.0f} ms, max {p['max_ms']:.0f} ms")
print(f"  post + home + category + feed: p50 {a['p50_ms']:.0f} ms, p99 {a['p99_ms']:.0f} ms, max {a['max_ms']:.0f} ms")
o = res["origin"]
print(f"  origin: {o['backend_requests']} backend requests for {o['client_requests']} client requests ({o['share_pct']} %)")
if p["max_ms"] >= 500 or a["max_ms"] >= 500:
    print(f"FAIL slowest edit took {max(p['max_ms'], a['max_ms']):.0f} ms to be fresh, want under 500 ms")
print(f"written to {out}")
PY
exit $rc
