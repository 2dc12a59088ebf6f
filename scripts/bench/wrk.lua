-- The bench's native load generator: wrk runs this script (scripts/bench/processes.ts, runLoad) with one
-- argument, a spec file of plain lines:
--   method GET|PATCH
--   header <name>: <value>        (any number)
--   unique <name>: <prefix>       (a header whose value is <prefix>-<n>, new for every request)
--   path /api/...                 (one or more; each request takes a random one)
-- At the end it prints one JSON line: requests, duration (µs), latency p50/p99 (µs), non-2xx answers and errors.

local method, headers, uniques, paths = "GET", {}, {}, {}
local counter = 0

function init(args)
  for line in io.lines(args[1]) do
    local kind, rest = line:match("^(%S+) (.*)$")
    if kind == "method" then
      method = rest
    elseif kind == "header" or kind == "unique" then
      local name, value = rest:match("^([^:]+): (.*)$")
      if kind == "header" then headers[name] = value else uniques[name] = value end
    elseif kind == "path" then
      paths[#paths + 1] = rest
    end
  end
  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "0", 16) % 100000)
end

function request()
  for name, prefix in pairs(uniques) do
    counter = counter + 1
    headers[name] = prefix .. "-" .. counter
  end
  return wrk.format(method, paths[math.random(#paths)], headers, nil)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"total":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"non2xx":%d,"errors":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.status,
    e.connect + e.read + e.write + e.timeout))
end
