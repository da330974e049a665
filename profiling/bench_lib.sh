# bench_lib.sh: what the benchmarks against Lua 5.4 share (bench_cpu.sh, bench_gen.sh). Each
# sources it after setting root (the source tree) and build (the build folder).

# bench_build TARGET: sets bench to profiling/TARGET in $build, building it there first where it
# is missing (and configuring $build first where it has no CMakeCache.txt); exits 1 when the
# build fails.
bench_build() {
    bench="$build/profiling/$1"
    if [ ! -x "$bench" ]; then
        echo "$(basename "$0"): building $1 in $build" >&2
        if [ ! -f "$build/CMakeCache.txt" ]; then
            cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >&2 || exit 1
        fi
        cmake --build "$build" --target "$1" -j2 >&2 || exit 1
    fi
}

# find_lua: sets lua to the first of lua5.4, lua54 and lua that is Lua 5.4, or to "" where none is.
find_lua() {
    lua=""
    for cand in lua5.4 lua54 lua; do
        if command -v "$cand" > /dev/null 2>&1 && "$cand" -v 2>&1 | grep -q "Lua 5\.4"; then
            lua="$cand"
            break
        fi
    done
}
