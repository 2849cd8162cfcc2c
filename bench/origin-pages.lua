-- wrk -s bench/origin-pages.lua URL -- PATH...: requests PATH... by turns (the pages
-- bench/freshness.sh checks after a site-wide change), then prints wrk-summary.lua's JSON line.
dofile("bench/wrk-summary.lua")

local paths, i = {}, 0

init = function(args)
  for _, p in ipairs(args) do paths[#paths + 1] = p end
  if #paths == 0 then error("origin-pages.lua: give the paths after --") end
end

request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
