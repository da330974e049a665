#!/usr/bin/env bash
# trace_check.sh: the GPU check of the device timeline and the profile (docs/persistent.md), short
# enough for one device call, over a build made elsewhere (BUILD, default build/): gpu_persistent
# --quick and gpu_compiled (which check the traced run's path and the profile's loop count), a
# traced and a profiled interpreter run of cg_1024 (the trace file and the profile to OUT), and
# bench_gpu --quick on cg_1024 and if_in_while with the interpreter plain, record by record,
# traced and profiled, which gives the overhead of tracing.
#
#   BUILD=build bash profiling/trace_check.sh [OUT] [--no-tests]
#
# --no-tests leaves out gpu_persistent and gpu_compiled (when gpu_check.sh ran them in the same call).
set -u
tests=1
[ "${2:-}" = --no-tests ] && tests=0
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD:-$root/build}"
out="${1:-$root/out/trace-check}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$build:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$out/gpu.txt" 2>&1
echo "commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null)" >> "$out/gpu.txt"
step() { # name limit command...: the output to log.txt, the status to summary.txt
    local name="$1" limit="$2"
    shift 2
    echo "==== $name" >> "$out/log.txt"
    timeout -k 5 "$limit" "$@" >> "$out/log.txt" 2>&1
    echo "$name rc=$?" | tee -a "$out/summary.txt"
}
cg=(--in A=random --in b=random --in max_iters=20 --in tol=0 --out x="$out/x.npy")
if [ "$tests" = 1 ]; then
    step "gpu_persistent --quick" 150 "$build/tests/gpu_persistent" --quick
    step "gpu_compiled" 90 "$build/tests/gpu_compiled"
fi
step "cg_1024 traced (interp)" 60 "$build/cfx" run "$root/profiling/bench/cg_1024.cfx" "${cg[@]}" \
    --backend cuda-persistent --persistent-mode interp --trace "$out/cg_1024_interp.json"
step "cg_1024 profiled (interp)" 60 "$build/cfx" run "$root/profiling/bench/cg_1024.cfx" "${cg[@]}" \
    --backend cuda-persistent --profile
step "if_in_while profiled (interp)" 60 "$build/cfx" run "$root/profiling/bench/if_in_while.cfx" --in x=0 \
    --in y=1 --in i=0 --in n=3 --backend cuda-persistent --profile
step "bench_gpu --quick (overhead)" 150 "$build/profiling/bench_gpu" --quick --bench-dir "$root/profiling/bench" \
    --graphs cg_1024,if_in_while --csv "$out/bench.csv" \
    --executors cuda-persistent,cuda-persistent-traced,cuda-persistent-profiled,cuda-persistent-interp,cuda-persistent-records,cuda-persistent-interp-traced,cuda-persistent-interp-profiled
