-- wrk script: POST an OpenAI chat completion and print exact latency percentiles.
-- Environment:
--   BENCH_BODY_FILE  file holding the request body (default: a small chat request)
--   BENCH_PATH       request path (default /v1/chat/completions)
--   BENCH_HEADERS    extra headers, "Name: value" separated by "\n" (literal backslash-n ok)
local body_file = os.getenv("BENCH_BODY_FILE")
local body = '{"model":"bench-model","messages":[{"role":"user","content":"Say hello."}],"max_tokens":16}'
if body_file and body_file ~= "" then
  local f = assert(io.open(body_file, "rb"))
  body = f:read("*a")
  f:close()
end

wrk.method = "POST"
wrk.path = os.getenv("BENCH_PATH") or "/v1/chat/completions"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"

local extra = os.getenv("BENCH_HEADERS") or ""
extra = extra:gsub("\\n", "\n")
for line in extra:gmatch("[^\n]+") do
  local name, value = line:match("^%s*([^:]+):%s*(.-)%s*$")
  if name then wrk.headers[name] = value end
end

-- Global, so done() can read it from each thread with thread:get().
non2xx = 0
response = function(status, headers, resp_body)
  if status < 200 or status > 299 then non2xx = non2xx + 1 end
end

-- response() runs in each thread's own Lua state; done() runs in the main state, so
-- count errors per thread and collect them through the thread objects.
local threads = {}
setup = function(thread) table.insert(threads, thread) end

done = function(summary, latency, requests)
  local bad = 0
  for _, t in ipairs(threads) do bad = bad + (t:get("non2xx") or 0) end
  local secs = summary.duration / 1e6
  local errs = summary.errors
  io.write(string.format(
    "BENCH_JSON {\"requests\":%d,\"duration_s\":%.3f,\"rps\":%.1f,\"p50_us\":%d,\"p90_us\":%d,\"p99_us\":%d,\"p999_us\":%d,\"max_us\":%d,\"mean_us\":%.1f,\"non2xx\":%d,\"err_connect\":%d,\"err_read\":%d,\"err_write\":%d,\"err_timeout\":%d,\"err_status\":%d}\n",
    summary.requests, secs, summary.requests / secs,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9), latency.max, latency.mean, bad,
    errs.connect, errs.read, errs.write, errs.timeout, errs.status))
end
