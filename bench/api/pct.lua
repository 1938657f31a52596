-- pct.lua: wrk script that adds the latency's 99.9th percentile and the
-- longest request to wrk's summary (wrk --latency prints up to the 99th).
-- submit.lua does the same for its runs.
function done(summary, latency, requests)
  io.write(string.format("  99.9%%: %.2fms  max %.2fms\n",
    latency:percentile(99.9) / 1000, latency.max / 1000))
end
