#!/usr/bin/env bash
# hit-path.sh compare|explain|ablate|profile [DIR]: where a cache hit spends its time, on a
# fresh native stack (DEMO_POSTS posts, 200) with its caches on free ports; every figure is
# written by bench/hit_path.py into DIR (default .results/bench/hit-path/) as MODE*.json.
#   compare  NGINX's microcache (the article's block, NGINX's defaults), the minimal Varnish, the
#            VCL in pure microcache mode (quiet: as users run it) and in purge mode (product):
#            one hot post and Zipf over every post, plain and gzip clients, ratios to NGINX and
#            to the minimal Varnish (the same cells make bench runs)
#   explain  what differed between make bench before 2026-11-28 (1.21x NGINX) and an outside
#            side-by-side (0.85x), one hot post, one difference per run: the NGINX config
#            (make bench's old buffered log and cleared Accept-Encoding, Debian's sendfile,
#            tcp_nopush and gzip), the VCL's cache state shown to everyone (make bench's old vcl),
#            wrk pinned to one CPU and the caches to the other, Connection: close, NGINX with
#            proxy_cache_background_update on the Zipf run, and no Host header (a stock
#            WordPress redirects other hosts)
#   ablate   the quiet VCL against copies with one feature's calls removed at a time
#            (HIT_ABLATE, default below): what each costs a hit; never a configuration to run
#   profile  perf record (-g, 999 Hz) of each cache's processes during a hot plain wrk run:
#            the share of samples by binary (kernel, varnishd, the compiled VCL, libc, vmods),
#            the top symbols and, for the VCL (the profiled flavour: compiled without inlining),
#            each mc_ subroutine's share, in DIR/profile-TARGET.txt (needs perf: linux-perf)
# Settings: HIT_ROUNDS (5), HIT_SECONDS (10), HIT_ABLATE, DEMO_POSTS.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source k6/lib.sh
mode=${1:-compare} OUT=${2:-$PWD/.results/bench/hit-path}
ROUNDS=${HIT_ROUNDS:-5} SECS=${HIT_SECONDS:-10}
ABLATE=${HIT_ABLATE:-"debug http10 device refresh grace guard normalize trust forwarded plain_copy ttl invalidate static bypass origin_headers"}
case $mode in compare | explain | ablate | profile) ;; *) echo "usage: $0 compare|explain|ablate|profile [DIR]" >&2; exit 2 ;; esac
[[ $mode != profile ]] || command -v perf >/dev/null || { echo "hit-path: perf is missing (apt-get install linux-perf)" >&2; exit 1; }
mkdir -p "$OUT"
export DEMO_POSTS=${DEMO_POSTS:-200}
trap temp_stack_down EXIT
trap 'exit 130' INT TERM
temp_stack_up "hit-path" || exit 1
bench/post-urls.py "http://127.0.0.1:$WEB_PORT" "$SITE_HOST" "$OUT" || exit 1
hot=$(sed -n 2p "$OUT/urls.txt")

# cache KIND NAME [ARG...]: starts one cache on a free port as process hit-NAME (the stack's own
# nginx and varnish keep their names); prints "NAME URL PIDFILE" for hit_path.py.
cache() {
  local kind=$1 name=$2 port; shift 2
  read -r port < <(free_ports 1)
  case $kind in
    nginx) bench/nginx-microcache.sh start "hit-$name" "$port" "$@" ;;
    varnish) bench/varnish-microcache.sh start "$1" "hit-$name" "$port" ;;
  esac >&2 || return 1
  echo "$name http://127.0.0.1:$port $RUN_DIR/hit-$name.pid"
}
# run OUT_NAME TARGET_LINE... -- HIT_PATH_ARGS...: hit_path.py against those targets.
run() {
  local out=$1 args=(); shift
  while [[ $1 != -- ]]; do read -ra t <<<"$1"; args+=(--target "${t[@]}"); shift; done
  shift
  echo "════ $mode: $out"
  python3 bench/hit_path.py "$OUT/$out.json" --host "$SITE_HOST" --rounds "$ROUNDS" --seconds "$SECS" \
    --origin-log "$LOG_DIR/nginx-access.log" "${args[@]}" "$@"
}

rc=0
case $mode in
compare)
  nginx=$(cache nginx nginx) && minimal=$(cache varnish minimal minimal) && quiet=$(cache varnish vcl quiet) &&
    product=$(cache varnish product product) || exit 1
  run compare "$nginx" "$minimal" "$quiet" "$product" -- --workload "hot=$hot" --workload "zipf=@$OUT/urls.txt" \
    --reference nginx --reference minimal || rc=1
  ;;
explain)
  nginx=$(cache nginx nginx) && old=$(cache nginx nginx-bench-old log=buffered accept-encoding=cleared) &&
    debian=$(cache nginx nginx-debian sendfile tcp_nopush gzip) && minimal=$(cache varnish minimal minimal) &&
    quiet=$(cache varnish vcl quiet) && full=$(cache varnish vcl-debug-for-all full) || exit 1
  run explain-config "$nginx" "$old" "$debian" "$minimal" "$quiet" "$full" -- --workload "hot=$hot" \
    --reference nginx --reference minimal || rc=1
  # pinned: the caches on CPU 0, wrk on CPU 1 (an outside run's taskset), one cache at a time
  for p in "$nginx" "$minimal" "$quiet"; do
    read -r _ _ pidfile <<<"$p"
    for pid in $(tr -dc '0-9' <"$pidfile") $(pgrep -P "$(tr -dc '0-9' <"$pidfile")"); do taskset -a -p -c 0 "$pid" >/dev/null; done
  done
  run explain-pinned "$nginx" "$minimal" "$quiet" -- --workload "hot=$hot" --encodings plain --wrk-cpus 1 \
    --reference nginx --reference minimal || rc=1
  for p in "$nginx" "$minimal" "$quiet"; do
    read -r _ _ pidfile <<<"$p"
    for pid in $(tr -dc '0-9' <"$pidfile") $(pgrep -P "$(tr -dc '0-9' <"$pidfile")"); do taskset -a -p -c "0-$(($(nproc) - 1))" "$pid" >/dev/null; done
  done
  run explain-close "$nginx" "$minimal" "$quiet" -- --workload "hot=$hot" --encodings plain --header "Connection: close" \
    --reference nginx --reference minimal || rc=1
  # Zipf: the article's NGINX lets the request that finds an entry expired wait for the origin;
  # with proxy_cache_background_update it gets the stale copy as Varnish's grace gives it.
  background=$(cache nginx nginx-background-update background-update) || exit 1
  run explain-zipf "$nginx" "$background" "$minimal" "$quiet" -- --workload "zipf=@$OUT/urls.txt" --encodings plain \
    --reference nginx-background-update --reference minimal || rc=1
  # Without a Host header every run must be reported failed: WordPress redirects to its own host.
  run explain-no-host "$nginx" "$quiet" -- --workload "hot=$hot" --encodings plain --no-host --rounds 1 &&
    { echo "hit-path: the runs without a Host header were not reported failed"; rc=1; }
  ;;
ablate)
  quiet=$(cache varnish vcl quiet) || exit 1
  targets=("$quiet")
  for f in $ABLATE; do targets+=("$(cache varnish "no-$f" "without:$f")") || exit 1; done
  run ablate "${targets[@]}" -- --workload "hot=$hot" --encodings plain --reference vcl || rc=1
  ;;
profile)
  nginx=$(cache nginx nginx) && minimal=$(cache varnish minimal minimal) && quiet=$(cache varnish vcl profiled) || exit 1
  for p in "$nginx" "$minimal" "$quiet"; do
    read -r name url pidfile <<<"$p"
    root=$(tr -dc '0-9' <"$pidfile")
    pids=$(printf '%s,' "$root" $(pgrep -P "$root")); pids=${pids%,}
    python3 bench/hit_path.py "$OUT/profile-$name.json" --host "$SITE_HOST" --target "$name" "$url" "$pidfile" \
      --workload "hot=$hot" --encodings plain --rounds 1 --seconds "$SECS" >"$OUT/profile-$name.wrk.txt" &
    sleep 2
    perf record -q -F 999 -g -p "$pids" -o "$OUT/profile-$name.perf.data" -- sleep $((SECS - 3)) 2>/dev/null
    wait $! || rc=1
    {
      echo "$name, hot plain: $(grep -m1 'round 1' "$OUT/profile-$name.wrk.txt")"
      echo "share of the samples by binary (kernel = sockets, scheduling, copies):"
      perf report -i "$OUT/profile-$name.perf.data" --no-children --sort dso --stdio -g none 2>/dev/null | grep '%' | head -8
      echo "top symbols:"
      perf report -i "$OUT/profile-$name.perf.data" --no-children --sort dso,symbol --stdio -g none 2>/dev/null | grep '%' | head -25
      [[ $name == vcl ]] && { echo "the compiled VCL's subroutines (vgc.so, no inlining; VGC_function_mc_* is vcl/microcache/*.vcl's mc_*):"
        perf report -i "$OUT/profile-$name.perf.data" --no-children --sort dso,symbol --stdio -g none 2>/dev/null | grep '%' | grep vgc | head -30; }
    } | tee "$OUT/profile-$name.txt"
    perf report -i "$OUT/profile-$name.perf.data" --no-children --sort dso --stdio -g none 2>/dev/null >"$OUT/profile-$name.dso.txt"
    perf report -i "$OUT/profile-$name.perf.data" --no-children --sort dso,symbol --stdio -g none 2>/dev/null >"$OUT/profile-$name.symbols.txt"
  done
  # profile.json: per cache its run, the share of samples by binary, the top 25 symbols and the
  # compiled VCL's subroutines (make publish-results publishes it; docs/benchmarks.md's block).
  python3 - "$OUT" nginx minimal vcl <<'PY' || rc=1
import json, re, sys
out, *names = sys.argv[1:]
cols = lambda f: [re.split(r"\s{2,}", l.strip()) for l in open(f) if re.match(r"\s*[0-9.]+%", l)]
res = {"perf": "perf record -F 999 -g, the cache's processes, during the hot plain run", "caches": {}}
for n in names:
    run = json.load(open(f"{out}/profile-{n}.json"))
    r = run["runs"][0]
    dso = [[float(c[0].rstrip("%")), c[1]] for c in cols(f"{out}/profile-{n}.dso.txt")]
    sym = [[float(c[0].rstrip("%")), c[1], c[2][4:]] for c in cols(f"{out}/profile-{n}.symbols.txt") if len(c) > 2]
    res["caches"][n] = {"rps": r.get("rps"), "cpu_us_per_request": r.get("cpu_us_per_request"), "failed": r.get("failed"),
                        "dso": dso[:10], "symbols": sym[:25],
                        "vcl_subs": [[p, re.sub("_5f_", "_", s.replace("VGC_function_", ""))] for p, d, s in sym if d == "vgc.so" and s.startswith("VGC_function_")]}
    res.setdefault("started", run["started"]); res.setdefault("machine", run["machine"])
json.dump(res, open(f"{out}/profile.json", "w"), indent=1)
print(f"hit-path: {out}/profile.json")
PY
  ;;
esac
exit $rc
