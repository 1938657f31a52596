-- submit.lua: wrk script that POSTs training submissions to allotd with a
-- bearer token. Environment: ALLOT_TOKEN (required), ALLOT_PROJECT (the
-- project id), ALLOT_BENCH_RUN (a name prefix unique to the run) and
-- ALLOT_BENCH_MAX (optional: each thread stops after that many requests).
-- Names are unique per thread and run: <run>-<thread>-<n>. wrk itself
-- reports any answer that is not 2xx ("Non-2xx or 3xx responses"); done()
-- adds the 99.9th percentile and the longest request to its summary.
local token = os.getenv("ALLOT_TOKEN")
local project = os.getenv("ALLOT_PROJECT")
local max = tonumber(os.getenv("ALLOT_BENCH_MAX") or "0")
local run = os.getenv("ALLOT_BENCH_RUN") or "b"
local next_id = 0

function setup(thread)
  thread:set("tid", next_id)
  next_id = next_id + 1
end

function init(args)
  n = 0
  wrk.method = "POST"
  wrk.headers["Authorization"] = "Bearer " .. token
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  n = n + 1
  if max > 0 and n > max then
    wrk.thread:stop()
  end
  local body = string.format(
    '{"name":"%s-%d-%d","projectId":"%s","spec":{"image":"bench",' ..
    '"compute":{"gpuDevicesRequest":1}}}', run, tid, n, project)
  return wrk.format(nil, "/api/v1/workloads/trainings", nil, body)
end

function done(summary, latency, requests)
  io.write(string.format("  99.9%%: %.2fms  max %.2fms\n",
    latency:percentile(99.9) / 1000, latency.max / 1000))
end
