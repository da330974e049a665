#!/usr/bin/env bash
# gpu_check.sh: the short GPU check for one device call: build (CUDA on, sm_90), the three
# GPU tests in their --quick forms, each timed, then bench_gpu --quick (floors and every graph
# on every executor), with every log in OUT. Summary lines last, so the end of the output says
# what happened. For the whole round, sanitizers and peers included, see gpu_round.sh.
#
#   bash profiling/gpu_check.sh [OUT] [--no-bench] [--sanitize]
#
# OUT defaults to out/gpu-check. --sanitize adds compute-sanitizer memcheck, racecheck and
# synccheck on gpu_persistent --quick (each with its own timeout). Exit status: 0 when every
# step passed, 1 otherwise, 77 without a GPU.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="$root/out/gpu-check"
bench=1
sanitize=0
for a in "$@"; do
    case "$a" in
        --no-bench) bench=0 ;;
        --sanitize) sanitize=1 ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

step() { # name timeout log command...
    local name="$1" limit="$2" log="$out/$3"; shift 3
    local s rc
    s=$(date +%s)
    timeout --kill-after=10 "$limit" "$@" > "$log" 2>&1
    rc=$?
    summary+=("$(printf '%-40s rc=%-3s %4ss  %s' "$name" "$rc" "$(( $(date +%s) - s ))" "$(grep -E 'passed, [0-9]+ failed' "$log" | tail -n 1)")")
    [ "$rc" = 0 ] || failed=1
    return $rc
}

step build 300 build.log bash -c "cmake -S '$root' -B '$build' -DCMAKE_BUILD_TYPE=Release -DCFX_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build '$build' -j\$(nproc)" || { tail -n 40 "$out/build.log"; exit 1; }
step "gpu_persistent --quick" 200 gpu_persistent.log "$build/tests/gpu_persistent" --quick
step "gpu_executors --quick" 200 gpu_executors.log "$build/tests/gpu_executors" --quick
step "gpu_compiled" 200 gpu_compiled.log "$build/tests/gpu_compiled"
if [ "$sanitize" = 1 ]; then
    for tool in memcheck racecheck synccheck; do
        step "compute-sanitizer $tool gpu_persistent" 150 "san-$tool.log" compute-sanitizer --tool "$tool" \
            --error-exitcode 99 "$build/tests/gpu_persistent" --quick
    done
fi
if [ "$bench" = 1 ]; then
    step "bench_gpu --quick" 300 bench.log "$build/profiling/bench_gpu" --quick
fi
echo "== failed checks (first 20 of each log)"
for f in "$out"/gpu_*.log "$out"/san-*.log; do
    [ -f "$f" ] && grep -m 20 -E "check failed|FAIL|error" "$f" | sed "s|^|$(basename "$f"): |"
done
[ -f "$out/bench.log" ] && { echo "== bench"; grep -E '^\|' "$out/bench.log" | cut -c1-160; }
echo "== summary ($(( $(date +%s) - t0 ))s)"
cat "$out/gpu.txt"
printf '%s\n' "${summary[@]}"
exit $failed
