-- loop.lua: the loop bench_cpu_loop times in cfx, in Lua 5.4, for the per-iteration comparison.
--   while i < n { s = s + i % 7; i = i + 1 }
-- Prints one line: `lua N ITERATIONS NS_PER_ITERATION S` (the median of 5 runs).
local n = tonumber(arg[1]) or 10000000

local function run()
  local s, i = 0, 0
  while i < n do
    s = s + i % 7
    i = i + 1
  end
  return s
end

local times, s = {}, 0
for rep = 1, 5 do
  local t0 = os.clock()
  s = run()
  times[rep] = os.clock() - t0
end
table.sort(times)
print(string.format("lua %d %.2f %d", n, times[3] / n * 1e9, s))
