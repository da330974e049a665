-- loops.lua: the loops bench_gen (and bench_cpu.sh: counter) time in cfx, written in Lua 5.4 for the
-- same comparison.
--   lua loops.lua LOOP N REPEATS
-- Prints one line: `LOOP MEDIAN_SECONDS RESULT` (processor time, os.clock, of one whole run).
-- The loops are bench_gen.c's graphs statement for statement; Lua's integers are 64-bit, and
-- no loop here comes near 2^31, so the i32 graphs and Lua agree.
local loops = {}

-- while i < n { s = s + i % 7; i = i + 1 }
function loops.counter(n)
  local s, i = 0, 0
  while i < n do
    s = s + i % 7
    i = i + 1
  end
  return s
end

-- MindSpore's IfInWhileNet with x = 0, y = 1, i = 0 and the bound n: out = 2n - 1
function loops.if_in_while(n)
  local x, y, i = 0, 1, 0
  local out = x
  while i < n do
    if x + i < y then
      out = out + x
    else
      out = out + y
    end
    out = out + 1
    i = i + 1
  end
  return out
end

-- the total number of Collatz steps of the starting values 1 .. n - 1
function loops.collatz(n)
  local steps = 0
  for k = 1, n - 1 do
    local v = k
    while v ~= 1 do
      if v % 2 == 0 then
        v = v // 2
      else
        v = 3 * v + 1
      end
      steps = steps + 1
    end
  end
  return steps
end

local name, n, repeats = arg[1], tonumber(arg[2]), tonumber(arg[3]) or 5
local f = loops[name]
if not f or not n then
  io.stderr:write("usage: lua loops.lua counter|if_in_while|collatz N [REPEATS]\n")
  os.exit(2)
end
local times, result = {}, 0
for r = 1, repeats do
  local t0 = os.clock()
  result = f(n)
  times[r] = os.clock() - t0
end
table.sort(times)
print(string.format("%s %.9f %d", name, times[(repeats + 1) // 2], result))
