-- wrk script for bench/selling-rate.sh: POST /sale with one item, and a last line the script
-- parses: "WRK <requests> <non-2xx or socket errors> <p50 ms> <p99 ms> <max ms>".
wrk.method = "POST"
wrk.path = "/sale"
wrk.body = '{"buyer":"wrk","qty":1}'
wrk.headers["Content-Type"] = "application/json"

done = function(summary, latency, requests)
  local e = summary.errors
  local failed = e.status + e.connect + e.read + e.write + e.timeout
  io.write(string.format("WRK %d %d %.3f %.3f %.3f\n", summary.requests, failed,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
