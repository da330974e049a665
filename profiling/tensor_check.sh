#!/usr/bin/env bash
# tensor_check.sh: one device call that measures the persistent executors' loops, their floors,
# the cost sheet's predictions and the peers, and writes the round as records (profiling/rounds.py)
# beside the logs. Sized for about 8 minutes on an H200 with 16 cores (the device lends 15
# minutes a session, start and transfers included):
#
#   [CFX_COMMIT=HASH] bash profiling/tensor_check.sh OUT [--budget SEC] [--no-peers] [--no-tests]
#                                      [--short] [--build-dir DIR] [--no-build]
#
# The device has no protobuf-c: run `bash profiling/device_deps.sh fetch` here first and name
# .devdeps in the call's carry, or the build leaves out the ONNX importer and its steps fail.
#
# Steps, most important first; each logs to OUT/log.txt, each has a time limit that is also
# cut to what is left of --budget (default 470 s), and one that fails or is cut does not stop
# the rest:
#   build        CMake, CUDA on, sm_90 (--build-dir, default build-gpu in the repository;
#                incremental when there; --no-build uses it as it is)
#   predict      bench_gpu --predict for the grid the executors launch: predictions.json
#   tests        gpu_compiled, gpu_executors --quick, gpu_persistent --quick, ONNX's
#                control-flow node tests on cpu, cuda-host, cuda-graph, cuda-persistent (issue
#                30), and gpu_capture (every graph's run captured into an application's graph,
#                replayed 100 times: issue 34)
#   capture      bench_capture --runs 100 (with the tests): a captured run's replay against
#                cfx_run_async each time, on counter, cg_1024 and greedy decoding (its table goes
#                to log.txt)
#   onnx         onnx_bench.py --backend cuda-persistent: the ONNX exports of greedy decoding,
#                CG and a transformer decoder (onnx_models.py) through cfx import and through ONNX Runtime (its CUDA
#                EP where onnxruntime-gpu is installed; the row says when it is not): onnx.json
#   bench        bench_gpu --quick: the floors (grid barrier and its designs, block barrier,
#                bandwidth, L2 read, launches, WHILE node) and every benchmark graph on
#                cuda-persistent (compiled, traced, profiled, without the L2 window), its
#                interpreter (plain and traced) and cuda-graph (cfx's CUDA graph with a WHILE
#                node around the loop's body, cuBLAS inside): bench.json, the table in log.txt
#   peers        peers.py --quick: JAX while/fori, torch eager, torch while_loop eager, under
#                torch.compile and captured into CUDA graph conditional nodes: peers.json
#                (written after every row: a step cut short keeps what it measured)
#   per-op       one ONNX node test per op the import writes (--per-op), on cuda-persistent
#   profile      the compiled kernel's profile of each tensor graph, phase by phase
#   trace        a traced compiled run of cg_1024: cg_1024_compiled.json.gz
# Then summary.md: the device, each step's status and time, the grid, the tables, and
# compare_rounds.py of the predictions against the measurement.
#
# --short: bench's plain rows only and no profiles; --no-peers, --no-tests: without those steps.
# At most 7 files go to OUT (the device returns 8). Exit status: 0 when every step passed, 1
# otherwise, 77 without a GPU, 2 for a bad command line.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out=""
budget=470
do_build=1
build="$root/build-gpu"
peers=1
tests=1
short=0
while [ $# -gt 0 ]; do
    case "$1" in
        --no-peers) peers=0 ;;
        --no-tests) tests=0 ;;
        --short) short=1 ;;
        --no-build) do_build=0 ;;
        --build-dir) build="${2:-}"; shift ;;
        --budget) budget="${2:-}"; shift ;;
        -h|--help) sed -n '2,45p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "tensor_check: unknown option '$1'" >&2; exit 2 ;;
        *) out="$1" ;;
    esac
    shift
done
[ -n "$out" ] || out="$root/out/tensor-check"
case "$budget" in ''|*[!0-9]*) echo "tensor_check: --budget wants seconds" >&2; exit 2 ;; esac
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 || { echo "tensor_check: no GPU here"; exit 77; }
mkdir -p "$out" || exit 2
export PATH="/usr/local/cuda/bin:$PATH" PYTHONUNBUFFERED=1
cfx="$build/cfx"
bench_gpu="$build/profiling/bench_gpu"
bench="$root/profiling/bench"
work="$(mktemp -d /tmp/tensor-check.XXXXXX)"
log="$out/log.txt"
summary="$out/summary.md"
: > "$log"
failed=0
steps=()
t0=$(date +%s)
# The records name this commit. The device's copy of the tree may carry an older .git than the
# working tree it has (a helper's worktree travels inside the session's checkout): give
# CFX_COMMIT=$(git rev-parse --short HEAD) in the device command to name the tree measured.
if [ -n "${CFX_COMMIT:-}" ]; then
    commit="$CFX_COMMIT"
else
    commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    git -C "$root" diff --quiet HEAD 2>/dev/null || commit="$commit+"
fi
export CFX_COMMIT="$commit"
jobs="$(nproc 2>/dev/null || echo 8)"

left() { echo $(( budget - ($(date +%s) - t0) )); }

# step NAME LIMIT COMMAND...: runs COMMAND with its output in the log, stopped after LIMIT
# seconds or what is left of the budget; records its status; never stops the script.
step() {
    local name="$1" limit="$2" s rc l
    shift 2
    l=$(left)
    if [ "$l" -lt 15 ]; then
        steps+=("$(printf '| %s | skipped: the budget is spent | |' "$name")")
        echo "==== $name: skipped, the budget of ${budget}s is spent" >> "$log"
        failed=1
        return 1
    fi
    [ "$limit" -gt $((l - 5)) ] && limit=$((l - 5))
    s=$(date +%s)
    echo "==== $name (limit ${limit}s, at +$((s - t0))s)" >> "$log"
    timeout --kill-after=10 "$limit" "$@" >> "$log" 2>&1
    rc=$?
    [ "$rc" = 124 ] || [ "$rc" = 137 ] && echo "==== $name: stopped at its limit of ${limit}s" >> "$log"
    steps+=("$(printf '| %s | rc %s%s | %ss |' "$name" "$rc" "$([ "$rc" = 124 ] && echo ' (time limit)')" "$(( $(date +%s) - s ))")")
    [ "$rc" = 0 ] || failed=1
    return $rc
}

{
    echo "commit $commit, $(date -u '+%Y-%m-%d %H:%M UTC')"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1
    nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/nvcc \1/p'
} > "$work/device.txt"
cat "$work/device.txt" >> "$log"

# protobuf-c for the ONNX importer, which the device lacks: unpacked from the packages carried
# in .devdeps (profiling/device_deps.sh fetch, here, before the call)
if [ -d "$root/.devdeps" ]; then
    deps_env="$(bash "$here/device_deps.sh" unpack /tmp/cfx-deps 2>> "$log")" && eval "$deps_env"
fi
built=0
[ "$do_build" = 0 ] && built=1
[ "$do_build" = 1 ] && step build 300 bash -c "cmake -S '$root' -B '$build' -DCMAKE_BUILD_TYPE=Release -DCFX_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 > '$work/cmake.log' 2>&1 && cmake --build '$build' -j$jobs > '$work/build.log' 2>&1 \
    || { tail -n 60 '$work/cmake.log' '$work/build.log'; exit 1; }; grep -E '^-- cfx: ' '$work/cmake.log'; tail -n 3 '$work/build.log'" && built=1
export LD_LIBRARY_PATH="$build:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"

if [ "$built" = 1 ]; then
    # the grid the executors launch is sms x min(occupancy, 2) (P_MAX_BLOCKS_PER_SM): --predict
    # prices 2 x this device's multiprocessors, and bench.json's rows the grid each launched
    # (grid_blocks, from the executor's own description)
    step predict 30 "$bench_gpu" --predict --bench-dir "$bench" --json "$out/predictions.json"

    # the open issues first: the executors' tests (nothing since f8cd60a has run on a GPU),
    # ONNX's control-flow node tests on every executor (issue 30), runs captured into an
    # application's graph (issue 34), then their measurements, then the floors
    if [ "$tests" = 1 ]; then
        step "gpu_compiled" 60 "$build/tests/gpu_compiled"
        step "gpu_executors --quick" 120 "$build/tests/gpu_executors" --quick
        step "gpu_persistent --quick" 120 "$build/tests/gpu_persistent" --quick
        step "onnx node tests" 90 python3 "$root/tests/onnx/node_tests.py" "$build/cfx" --control-flow \
            --backends cpu,cuda-host,cuda-graph,cuda-persistent
        step "gpu_capture" 90 "$build/tests/gpu_capture"
        step capture 60 "$build/profiling/bench_capture" --runs 100
    fi
    if [ "$peers" = 1 ]; then
        step onnx 100 python3 "$here/onnx_bench.py" "$build" --backend cuda-persistent --repeats 3 --json "$out/onnx.json"
    fi

    graphs=counter,if_in_while,collatz,power_iteration,cg_1024,cg_8192,greedy_decode,call_op_kernel,call_op_cfx
    executors=cuda-graph,cuda-persistent,cuda-persistent-traced,cuda-persistent-profiled,cuda-persistent-no-l2,cuda-persistent-interp,cuda-persistent-interp-traced
    [ "$short" = 1 ] && executors=cuda-graph,cuda-persistent,cuda-persistent-interp
    step bench 210 "$bench_gpu" --quick --bench-dir "$bench" --graphs "$graphs" --executors "$executors" \
        --json "$out/bench.json" --export "$work/data"

    if [ "$peers" = 1 ] && [ -f "$work/data/manifest.json" ]; then
        step peers 150 python3 "$here/peers.py" --quick --data "$work/data" --cfx "$cfx" \
            --graphs if_in_while,collatz,power_iteration,cg_1024,greedy_decode,counter,cg_8192 \
            --cfx-json "$out/bench.json" --json "$out/peers.json"
    fi
    # one node test per op the import writes (the recurrences, attention, convolutions, losses,
    # quantization, ...: about 150), on the persistent kernel
    [ "$tests" = 1 ] && step "onnx node tests, one per op" 150 python3 "$root/tests/onnx/node_tests.py" "$build/cfx" \
        --per-op --backends cpu,cuda-persistent
    if [ "$short" = 0 ]; then
        python3 -c "import numpy as np; np.save('$work/collatz_x.npy', 1 + (np.arange(8192, dtype=np.int64) * 2654435761) % 1000000)"
        run=("$cfx" run --backend cuda-persistent)
        step "profile collatz" 30 "${run[@]}" "$bench/collatz.cfx" --in x="$work/collatz_x.npy" --out steps=/dev/null --profile
        step "profile power_iteration" 30 "${run[@]}" "$bench/power_iteration.cfx" --in A=random --in v0=random \
            --in max_iters=20 --in tol=0 --out v=/dev/null --profile
        step "profile cg_1024" 30 "${run[@]}" "$bench/cg_1024.cfx" --in A=random --in b=random --in max_iters=20 \
            --in tol=0 --out x=/dev/null --profile
        step "profile cg_8192" 30 "${run[@]}" "$bench/cg_8192.cfx" --in A=random --in b=random --in max_iters=20 \
            --in tol=0 --out x=/dev/null --profile
        step "profile greedy_decode" 30 "${run[@]}" "$bench/greedy_decode.cfx" --in W=random --in M=random --in E=random \
            --in h0=random --in start=1 --in eos=-1 --in max_len=128 --out tokens=/dev/null --profile
        step "trace cg_1024" 30 "${run[@]}" "$bench/cg_1024.cfx" --in A=random --in b=random \
            --in max_iters=20 --in tol=0 --out x=/dev/null --trace "$work/cg_1024_compiled.json"
        [ -f "$work/cg_1024_compiled.json" ] && gzip -c "$work/cg_1024_compiled.json" > "$out/cg_1024_compiled.json.gz"
    fi
fi

# summary.md: written whatever happened above
{
    echo "# tensor_check"
    echo
    sed 's/^/    /' "$work/device.txt"
    echo
    echo "| step | status | time |"
    echo "|---|---|---:|"
    printf '%s\n' "${steps[@]}"
    echo
    echo "Total $(( $(date +%s) - t0 ))s of a budget of ${budget}s."
    if [ -f "$out/bench.json" ] && [ -f "$out/predictions.json" ]; then
        echo
        echo "## Measured (B) against the cost sheet (A)"
        echo
        python3 "$here/compare_rounds.py" "$out/predictions.json" "$out/bench.json" 2>&1
    fi
    echo
    echo "## Tables"
    echo
    grep -E '^(Device|Grid barrier|\|)' "$log" | grep -v ' not run |' | cut -c1-220
    echo
    echo "## Failures"
    echo
    grep -m 30 -E 'check failed|FAIL|error:|Traceback|stopped at its limit' "$log" || echo "none found in the log"
} > "$summary" 2>&1
rm -rf "$work"
cat "$summary"
exit $failed
