#!/usr/bin/env bash
# gpu_check.sh: the short GPU check for one device call (about six minutes on an H100 with 16
# cores): build (CUDA on, sm_90), the three GPU tests in their --quick forms, bench_gpu --quick
# (floors and every graph on every executor), compute-sanitizer (memcheck on gpu_persistent
# --quick, synccheck on --tiny, racecheck on every graph of graphs/ in both modes), the Python
# package's tests on the GPU, and the PyTorch/JAX peers of the tensor graphs. Every step has a time limit; every log goes to OUT
# (seven files at most, as one device call brings back); the summary comes last.
# gpu_round.sh is the whole round, over several calls.
#
#   bash profiling/gpu_check.sh [OUT] [--no-bench] [--no-sanitize] [--no-peers]
#
# OUT defaults to out/gpu-check. Exit status: 0 when every step passed, 1 otherwise, 77
# without a GPU.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="$root/out/gpu-check"
bench=1
sanitize=1
peers=1
for a in "$@"; do
    case "$a" in
        --no-bench) bench=0 ;;
        --no-sanitize) sanitize=0 ;;
        --no-peers) peers=0 ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "gpu_check: unknown option '$a'" >&2; exit 2 ;;
        *) out="$a" ;;
    esac
done
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 || { echo "gpu_check: no GPU here"; exit 77; }
mkdir -p "$out"
export PATH="/usr/local/cuda/bin:$PATH"
build="$root/build-gpu"
summary=()
failed=0
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
echo "commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null)$(git -C "$root" diff --quiet 2>/dev/null || echo ' (uncommitted changes)'); nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')" >> "$out/gpu.txt"

step() { # name timeout log command... (the log is appended to)
    local name="$1" limit="$2" log="$out/$3"; shift 3
    local s rc
    s=$(date +%s)
    echo "==== $name" >> "$log"
    timeout --kill-after=10 "$limit" "$@" >> "$log" 2>&1
    rc=$?
    summary+=("$(printf '%-44s rc=%-3s %4ss  %s' "$name" "$rc" "$(( $(date +%s) - s ))" "$(tail -n 30 "$log" | grep -E 'passed, [0-9]+ failed|ERROR SUMMARY|[0-9]+ passed' | tail -n 1)")")
    [ "$rc" = 0 ] || failed=1
    return $rc
}

# protobuf-c for the ONNX importer, which the device lacks, from the packages carried in
# .devdeps (profiling/device_deps.sh fetch, here, before the call)
if [ -d "$root/.devdeps" ]; then
    deps_env="$(bash "$here/device_deps.sh" unpack /tmp/cfx-deps 2>> "$out/build.log")" && eval "$deps_env"
fi
step build 300 build.log bash -c "cmake -S '$root' -B '$build' -DCMAKE_BUILD_TYPE=Release -DCFX_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build '$build' -j\$(nproc)" || { tail -n 40 "$out/build.log"; exit 1; }
step "gpu_persistent --quick" 120 tests.log "$build/tests/gpu_persistent" --quick
step "gpu_executors --quick" 150 tests.log "$build/tests/gpu_executors" --quick
step "gpu_compiled" 60 tests.log "$build/tests/gpu_compiled"
if [ "$bench" = 1 ]; then
    step "bench_gpu --quick" 150 bench.log "$build/profiling/bench_gpu" --quick --export "$out/data"
fi
if [ "$sanitize" = 1 ]; then
    step "memcheck gpu_persistent --quick" 90 san.log compute-sanitizer --tool memcheck --error-exitcode 99 \
        "$build/tests/gpu_persistent" --quick
    # (racecheck on gpu_persistent --tiny: the sanitizer's own library segfaulted on an H100,
    # CUDA 13.0, in its first program; the graphs through the command line instead)
    step "racecheck graphs/, both modes" 150 san.log python3 "$here/racecheck_graphs.py" "$build/cfx" -
    step "synccheck gpu_persistent --tiny" 45 san.log compute-sanitizer --tool synccheck --error-exitcode 99 \
        "$build/tests/gpu_persistent" --tiny
fi
if python3 -c 'import pytest' 2>/dev/null; then
    step "pytest python/tests (GPU)" 60 py.log env CFX_LIBRARY="$build/libcfx.so" PYTHONPATH="$root/python" \
        python3 -m pytest -q -rs -p no:cacheprovider "$root/python/tests"
    step "python/examples/decode.py (GPU)" 60 py.log env CFX_LIBRARY="$build/libcfx.so" PYTHONPATH="$root/python" \
        python3 "$root/python/examples/decode.py"
fi
if [ "$peers" = 1 ] && [ -f "$out/data/manifest.json" ]; then
    step "peers.py --quick (tensor graphs)" 100 peers.log python3 "$here/peers.py" --quick --data "$out/data" \
        --graphs collatz,power_iteration,cg_1024,greedy_decode
fi
rm -rf "$out/data"
echo "== failed checks (first 20 of each log)"
for f in "$out"/tests.log "$out"/san.log "$out"/py.log; do
    [ -f "$f" ] && grep -m 20 -E "check failed|FAIL|Error|error:" "$f" | sed "s|^|$(basename "$f"): |"
done
[ -f "$out/bench.log" ] && { echo "== bench"; grep -E '^\|' "$out/bench.log" | grep -v -- '-pause \|-inline \|-records \| cpu ' | cut -c1-150; }
[ -f "$out/peers.log" ] && { echo "== peers"; grep -E '^\|' "$out/peers.log" | cut -c1-150; }
echo "== summary ($(( $(date +%s) - t0 ))s)"
cat "$out/gpu.txt"
printf '%s\n' "${summary[@]}"
exit $failed
