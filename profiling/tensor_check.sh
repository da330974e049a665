#!/usr/bin/env bash
# tensor_check.sh: the short device call after a change to the persistent kernels' tensor work
# (about three minutes on an H100 with 16 cores): build (CUDA on, sm_90), the three GPU tests
# in their --quick forms, bench_gpu --quick over the tensor graphs and if_in_while on the
# persistent executors (the compiled kernel and the interpreter, plain, traced and profiled, and
# the compiled kernel without its L2 window),
# the compiled kernel's profile of each tensor graph (where a loop's time goes, phase by phase),
# a traced compiled run of cg_1024 (gzipped Chrome trace), and the PyTorch/JAX peers of the
# tensor graphs. gpu_check.sh is the whole check (every graph, the sanitizers, the Python
# package); this one is for measuring a change.
#
#   bash profiling/tensor_check.sh [OUT] [--no-peers] [--short]
#
# --short times the plain and traced rows only (not the profiled ones), for a call with little
# device time left. OUT defaults to out/tensor-check; at most seven files go there. Exit
# status: 0 when every step passed, 1 otherwise, 77 without a GPU.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="$root/out/tensor-check"
peers=1
executors=cuda-persistent,cuda-persistent-traced,cuda-persistent-profiled,cuda-persistent-no-l2,cuda-persistent-interp,cuda-persistent-interp-traced
for a in "$@"; do
    case "$a" in
        --no-peers) peers=0 ;;
        --short) executors=cuda-persistent,cuda-persistent-traced,cuda-persistent-interp ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "tensor_check: unknown option '$a'" >&2; exit 2 ;;
        *) out="$a" ;;
    esac
done
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 || { echo "tensor_check: no GPU here"; exit 77; }
mkdir -p "$out"
export PATH="/usr/local/cuda/bin:$PATH"
build="$root/build-gpu"
cfx="$build/cfx"
bench="$root/profiling/bench"
failed=0
summary=()
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$out/gpu.txt" 2>&1
echo "commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null)$(git -C "$root" diff --quiet 2>/dev/null || echo ' (uncommitted changes)'); nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')" >> "$out/gpu.txt"

step() { # name limit log command...
    local name="$1" limit="$2" log="$out/$3" s rc
    shift 3
    s=$(date +%s)
    echo "==== $name" >> "$log"
    timeout --kill-after=10 "$limit" "$@" >> "$log" 2>&1
    rc=$?
    summary+=("$(printf '%-40s rc=%-3s %4ss  %s' "$name" "$rc" "$(( $(date +%s) - s ))" "$(tail -n 30 "$log" | grep -E 'passed, [0-9]+ failed' | tail -n 1)")")
    [ "$rc" = 0 ] || failed=1
    return $rc
}

step build 300 build.log bash -c "cmake -S '$root' -B '$build' -DCMAKE_BUILD_TYPE=Release -DCFX_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build '$build' -j\$(nproc)" || { tail -n 40 "$out/build.log"; exit 1; }
export LD_LIBRARY_PATH="$build:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
step "gpu_compiled" 60 tests.log "$build/tests/gpu_compiled"
step "gpu_persistent --quick" 120 tests.log "$build/tests/gpu_persistent" --quick
step "gpu_executors --quick" 150 tests.log "$build/tests/gpu_executors" --quick
step "bench_gpu --quick (tensor graphs)" 150 bench.log "$build/profiling/bench_gpu" --quick --export "$out/data" \
    --bench-dir "$bench" --graphs if_in_while,collatz,power_iteration,cg_1024,cg_8192,greedy_decode \
    --executors "$executors"
# the compiled kernel's profile of each tensor graph: block 0's stamps, phase by phase
python3 -c "import numpy as np; np.save('$out/collatz_x.npy', 1 + (np.arange(8192, dtype=np.int64) * 2654435761) % 1000000)"
run=("$cfx" run --backend cuda-persistent)
step "profile collatz" 60 profile.log "${run[@]}" "$bench/collatz.cfx" --in x="$out/collatz_x.npy" --out steps=/dev/null --profile
step "profile power_iteration" 60 profile.log "${run[@]}" "$bench/power_iteration.cfx" --in A=random --in v0=random \
    --in max_iters=20 --in tol=0 --out v=/dev/null --profile
step "profile cg_1024" 60 profile.log "${run[@]}" "$bench/cg_1024.cfx" --in A=random --in b=random --in max_iters=20 \
    --in tol=0 --out x=/dev/null --profile
step "profile greedy_decode" 60 profile.log "${run[@]}" "$bench/greedy_decode.cfx" --in W=random --in M=random --in E=random \
    --in h0=random --in start=1 --in eos=-1 --in max_len=128 --out tokens=/dev/null --profile
step "trace cg_1024 (compiled)" 60 profile.log "${run[@]}" "$bench/cg_1024.cfx" --in A=random --in b=random \
    --in max_iters=20 --in tol=0 --out x=/dev/null --trace "$out/cg_1024_compiled.json"
[ -f "$out/cg_1024_compiled.json" ] && gzip -f "$out/cg_1024_compiled.json"
rm -f "$out/collatz_x.npy"
if [ "$peers" = 1 ] && [ -f "$out/data/manifest.json" ]; then
    step "peers.py --quick (tensor graphs)" 100 peers.log python3 "$here/peers.py" --quick --data "$out/data" \
        --graphs collatz,power_iteration,cg_1024,greedy_decode
fi
rm -rf "$out/data"
echo "== failed checks (first 20)"
grep -m 20 -E "check failed|FAIL|error:" "$out/tests.log" 2>/dev/null
[ -f "$out/bench.log" ] && { echo "== bench"; grep -E '^\|' "$out/bench.log" | grep -v ' not run ' | cut -c1-160; }
[ -f "$out/peers.log" ] && { echo "== peers"; grep -E '^\|' "$out/peers.log" | cut -c1-150; }
echo "== summary ($(( $(date +%s) - t0 ))s)"
cat "$out/gpu.txt"
printf '%s\n' "${summary[@]}"
exit $failed
