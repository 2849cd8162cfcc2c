#!/usr/bin/env bash
# ab-hot-url.sh URL HOST SECONDS [RAW_OUT]: one ApacheBench run against one URL the way NGINX's
# microcaching article measured: `ab -c 10 -t SECONDS -k`, HTTP/1.0 with keep-alive. Prints one
# JSON line with ab's figures (requests, requests/s, mean time per request, failed requests and
# their kinds, keep-alive requests, non-2xx, whether ab aborted); ab's own output goes to RAW_OUT
# when given. ab's -t alone also stops after 50,000 requests (about 2 s at these rates), so
# -n AB_MAX_REQUESTS (3,000,000) lets the time limit end the run. AB_CONCURRENCY overrides the 10.
set -uo pipefail
(($# == 3 || $# == 4)) || { echo "usage: $0 URL HOST SECONDS [RAW_OUT]" >&2; exit 2; }
url=$1 host=$2 seconds=$3 raw=${4:-}
command -v ab >/dev/null || { echo "ab-hot-url: ab is not installed (make deps installs apache2-utils)" >&2; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
ab -q -c "${AB_CONCURRENCY:-10}" -t "$seconds" -n "${AB_MAX_REQUESTS:-3000000}" -k -H "Host: $host" "$url" >"$out" 2>&1
rc=$?
[[ -n $raw ]] && cp "$out" "$raw"
python3 - "$out" "$rc" "${AB_CONCURRENCY:-10}" "$seconds" <<'PY'
import json, re, sys
path, rc, concurrency, seconds = sys.argv[1:]
text = open(path, errors="replace").read()
def num(label, cast=float):
    m = re.search(r"^" + re.escape(label) + r":\s+([0-9.]+)", text, re.M)
    return cast(m.group(1)) if m else None
kinds = re.search(r"\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)", text)
mean = re.search(r"^Time per request:\s+([0-9.]+) \[ms\] \(mean\)$", text, re.M)
p = {int(k): int(v) for k, v in re.findall(r"^\s+(\d+)%\s+(\d+)", text, re.M)}
print(json.dumps({
    "tool": "ab", "ab_exit": int(rc), "concurrency": int(concurrency), "seconds_asked": int(seconds),
    "aborted": "Test aborted" in text,
    "requests": num("Complete requests", int), "duration_s": num("Time taken for tests"),
    "rps": num("Requests per second"), "mean_ms_per_request": float(mean.group(1)) if mean else None,
    "failed": num("Failed requests", int),
    # ab prints the kinds only when some failed
    "failed_kinds": dict(zip(("connect", "receive", "length", "exceptions"), map(int, kinds.groups()) if kinds else (0, 0, 0, 0)))
                    if kinds or num("Failed requests", int) == 0 else None,
    "keepalive_requests": num("Keep-Alive requests", int), "non_2xx": num("Non-2xx responses", int) or 0,
    "document_length": num("Document Length", int),
    "p50_ms": p.get(50), "p99_ms": p.get(99), "max_ms": p.get(100),
}))
PY
exit "$rc"
