-- wrk -s bench/wrk-zipf.lua: the many-URL hit-path run (bench/hit_path.py). Each request asks
-- for one of the paths in the file WRK_URLS names (one per line, most popular first), drawn
-- from a Zipf distribution with s = 1 (rank k is asked 1/k as often as rank 1), the way reads
-- spread over a site's posts. Prints bench/wrk-summary.lua's JSON line at the end.
-- wrk runs this file in every thread's Lua state and in the main one; LuaJIT (Lua 5.1).
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "wrk-summary.lua")

local paths, cumulative = {}, {}
local file = os.getenv("WRK_URLS")
if file then
  for line in io.lines(file) do
    if line ~= "" then paths[#paths + 1] = line end
  end
end
local total = 0
for k = 1, #paths do
  total = total + 1 / k
  cumulative[k] = total
end

function init(args)
  if #paths == 0 then
    error("wrk-zipf.lua: WRK_URLS must name a file of paths, one per line")
  end
  -- every thread its own sequence
  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "0", 16) % 100000)
end

function request()
  local x = math.random() * total
  local lo, hi = 1, #paths
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if cumulative[mid] < x then lo = mid + 1 else hi = mid end
  end
  return wrk.format(nil, paths[lo])
end
