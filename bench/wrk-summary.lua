-- wrk -s bench/wrk-summary.lua: after the run, one JSON line with what bench/report.py needs
-- (wrk's own text output has no p99.9 and rounds its figures).
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "socket_errors": %d, "non_2xx_3xx": %d, "p50_us": %d, "p90_us": %d, "p99_us": %d, "p99_9_us": %d, "max_us": %d}\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9), latency.max))
end
