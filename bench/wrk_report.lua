-- Prints wrk's figures as one JSON line (latencies in microseconds).
done = function(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "p50_us": %d, "p95_us": %d, "errors": %d, "non2xx": %d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(95),
    errors.connect + errors.read + errors.write + errors.timeout, errors.status))
end
