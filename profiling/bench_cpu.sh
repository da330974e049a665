#!/usr/bin/env bash
# bench_cpu.sh: the CPU executor against Lua 5.4 on the same scalar loop, per iteration.
#
#   while i < n { s = s + i % 7; i = i + 1 }      (n = 10^7 unless N is set)
#
# usage: bash profiling/bench_cpu.sh [BUILD_DIR]     (default: $BUILD_DIR, else ./build)
# Builds bench_cpu_loop in BUILD_DIR if it is missing, runs it and profiling/loops.lua, and
# prints a Markdown table: nanoseconds per iteration (medians of 7 runs for cfx, 5 for Lua)
# and the ratio. Both must agree on the result, which is checked. The goal: cfx no slower
# per iteration than Lua 5.4.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
build="${1:-${BUILD_DIR:-$root/build}}"
n="${N:-10000000}"

. "$here/bench_lib.sh"
bench_build bench_cpu_loop

cfx_line="$("$bench" "$n" 7)" || { echo "bench_cpu.sh: bench_cpu_loop failed" >&2; exit 1; }
read -r _ _ cfx_ns cfx_s <<< "$cfx_line"

find_lua

echo "## CPU executor vs Lua 5.4: \`while i < n { s = s + i % 7; i = i + 1 }\`, n = $n"
echo
echo "host: $(uname -m), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')"
echo
if [ -z "$lua" ]; then
    echo "| runner | ns per iteration |"
    echo "| --- | --- |"
    echo "| cfx cpu | $cfx_ns |"
    echo
    echo "Lua 5.4 is not installed, so there is nothing to compare with."
    echo "Install it with: apt-get install lua5.4   (or: brew install lua@5.4)"
    exit 0
fi

lua_line="$("$lua" "$here/loops.lua" counter "$n" 5)" || { echo "bench_cpu.sh: loops.lua failed" >&2; exit 1; }
read -r _ lua_sec lua_s <<< "$lua_line"
lua_ns="$(awk -v s="$lua_sec" -v n="$n" 'BEGIN { printf "%.2f", s * 1e9 / n }')"
if [ "$cfx_s" != "$lua_s" ]; then
    echo "bench_cpu.sh: results differ: cfx $cfx_s, lua $lua_s" >&2
    exit 1
fi
ratio="$(awk -v a="$cfx_ns" -v b="$lua_ns" 'BEGIN { printf "%.2f", a / b }')"
echo "| runner | ns per iteration | vs Lua |"
echo "| --- | --- | --- |"
echo "| cfx cpu | $cfx_ns | $ratio |"
echo "| $("$lua" -v 2>&1 | awk '{print $1, $2}') | $lua_ns | 1.00 |"
echo
echo "Both computed s = $cfx_s. A ratio below 1 means cfx is faster per iteration."
