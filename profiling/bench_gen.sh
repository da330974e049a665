#!/usr/bin/env bash
# bench_gen.sh: the C that cfx generates from a graph, against the cpu executor and Lua 5.4 on
# the same loops (and, on a machine with a GPU, cuda-persistent's interpreter and compiled
# kernel), per loop iteration, with the ratios, in one run.
#
# usage: bash profiling/bench_gen.sh [BUILD_DIR] [--quick]   (default: $BUILD_DIR, else ./build)
#
# Builds bench_gen in BUILD_DIR if it is missing and runs it (bench_gen.c says what is timed
# and how). Lua 5.4 is needed for the Lua rows: install it with `apt-get install lua5.4` (or
# `brew install lua@5.4`); without it those rows say so and the rest is measured. A C compiler
# is needed for the generated code (CMake looks for cc at configure time). Prints a Markdown
# table and writes no file; exits 1 when a runner disagrees with the cpu executor.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
quick=""
for a in "$@"; do
    case "$a" in
        --quick) quick="--quick" ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) build="$a" ;;
    esac
done

. "$here/bench_lib.sh"
bench_build bench_gen

find_lua

echo "host: $(uname -m), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), $(nproc) cores;" \
     "$(cc --version 2>/dev/null | head -n 1); ${lua:+$("$lua" -v 2>&1)}"
echo
if [ -n "$lua" ]; then
    "$bench" --lua "$lua" --loops "$here/loops.lua" $quick
else
    echo "(Lua 5.4 is not installed: apt-get install lua5.4, or brew install lua@5.4)"
    echo
    "$bench" $quick
fi
