#!/usr/bin/env bash
# gpu_round.sh: the GPU round in one command, for a machine with an NVIDIA GPU: build with the
# README's CMake line (CUDA on, sm_90), the GPU tests, the gpu_* tests under compute-sanitizer
# (memcheck on --quick workloads, racecheck and synccheck on gpu_persistent --tiny), and
# profiling/run_benchmarks.sh, sized to end within the 10 minutes of one device command; the
# CPU suite, which CI runs, is a step of its own (--only suite). Every log, the summary and the
# results file end up in one folder.
#
#   bash profiling/gpu_round.sh [--quick] [--no-peers] [--only STEPS] [--tools TOOLS]
#                               [--build-dir DIR] [--out DIR] [--tar FILE] [--step-timeout SEC]
#                               [--jobs N]
#
#   --only STEPS       comma list of: build, gpu-tests, suite, sanitize, bench; `tests` is
#                      gpu-tests,suite (default: build,gpu-tests,sanitize,bench). The build
#                      runs first whatever the list says (incremental after the first time),
#                      unless --no-build
#   --no-build         use the build directory as it is
#   --tools TOOLS      compute-sanitizer tools, comma list (default memcheck,racecheck,synccheck)
#   --quick            run_benchmarks.sh --quick (the sanitizers always run the small
#                      workloads)
#   --no-peers         run_benchmarks.sh --no-peers (no PyTorch/JAX)
#   --build-dir DIR    default build-gpu (in the repository)
#   --out DIR          the round's folder (default out/gpu-round-UTCSTAMP in the repository)
#   --tar FILE         at the end, also pack the round's folder into FILE (.tar.gz): one file
#                      to bring back where a transfer takes only a few
#   --step-timeout SEC each step is stopped after this long (default 300; a sanitizer step
#                      gets at most 150)
#
# The whole round takes longer than the 10 minutes one device command may run, so split it
# over a few calls. A borrowed machine is often handed back between calls, so every call
# builds (incremental where the last call's build is still there, whole where it is not);
# give each call its own --out folder:
#   bash profiling/gpu_round.sh --only tests --out $OUT/r
#   bash profiling/gpu_round.sh --only sanitize --tools memcheck --out $OUT/r
#   bash profiling/gpu_round.sh --only sanitize --tools racecheck,synccheck --out $OUT/r
#   bash profiling/gpu_round.sh --only bench --quick --no-peers --out $OUT/r
# Each call's folder holds summary.md, nvidia-smi.txt and one log per step: at most 8 files
# for each of the calls above.
#
# Exit status: 0 when every step that ran passed; 1 when one failed or timed out; 2 for a bad
# command line; 77 when there is no GPU here: it says so and runs nothing (77 is ctest's
# "skipped", so a caller can tell "nothing to do here" from "passed").
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
build="$root/build-gpu"
out=""
tar_file=""
quick=0
peers=1
do_build=1
only="build,gpu-tests,sanitize,bench"
tools="memcheck,racecheck,synccheck"
step_timeout=300
jobs="$(nproc 2>/dev/null || echo 4)"

usage() { sed -n '2,/^# Exit status/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1 ;;
        --no-peers) peers=0 ;;
        --no-build) do_build=0 ;;
        --only) only="${2:-}"; shift ;;
        --tools) tools="${2:-}"; shift ;;
        --build-dir) build="${2:-}"; shift ;;
        --out) out="${2:-}"; shift ;;
        --tar) tar_file="${2:-}"; shift ;;
        --step-timeout) step_timeout="${2:-}"; shift ;;
        --jobs) jobs="${2:-}"; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "gpu_round: unknown option '$1' (--help lists them)" >&2; exit 2 ;;
    esac
    shift
done
steps=""
for s in ${only//,/ }; do
    case "$s" in
        build|gpu-tests|suite|sanitize|bench) steps="$steps,$s" ;;
        tests) steps="$steps,gpu-tests,suite" ;;
        *) echo "gpu_round: unknown step '$s' (build, gpu-tests, suite, sanitize, bench, tests)" >&2; exit 2 ;;
    esac
done
only="${steps#,}"
for t in ${tools//,/ }; do
    case "$t" in memcheck|racecheck|synccheck|initcheck) ;;
        *) echo "gpu_round: unknown compute-sanitizer tool '$t'" >&2; exit 2 ;;
    esac
done
case "$step_timeout" in ''|*[!0-9]*) echo "gpu_round: --step-timeout needs seconds" >&2; exit 2 ;; esac
wants() { case ",$only," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

# ---- is there a GPU? ---------------------------------------------------------------------
gpu=""
if command -v nvidia-smi >/dev/null 2>&1; then
    gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)"
fi
if [ -z "$gpu" ]; then
    why="nvidia-smi is not installed"
    command -v nvidia-smi >/dev/null 2>&1 && why="nvidia-smi finds no GPU"
    echo "gpu_round: no GPU here ($why): nothing run, nothing written (exit 77, skipped)"
    exit 77
fi

[ -n "$out" ] || out="$root/out/gpu-round-$(date -u +%Y%m%d-%H%M%S)"
mkdir -p "$out" || { echo "gpu_round: cannot create $out" >&2; exit 2; }
out="$(cd "$out" && pwd)"
export PATH="/usr/local/cuda/bin:$PATH"
summary="$out/summary.md"
results=()   # "step|result|seconds|log"
failed=0

# Runs one step with a timeout, its output to LOG; records pass / FAIL (exit N) / TIMEOUT.
# `not_here` (set by the caller, cleared after) is a pattern which, found in the log of a
# step that passed, makes it a failure: a GPU test that skipped, a benchmark that measured
# nothing, on a machine that has a GPU.
not_here=""
step() {
    local name="$1" log="$out/$2"; shift 2
    local t0 rc result
    echo "gpu_round: $name (log: $log)"
    t0=$(date +%s)
    timeout --kill-after=20 "$step_timeout" "$@" > "$log" 2>&1
    rc=$?
    case "$rc" in
        0) result="pass" ;;
        124|137) result="TIMEOUT after ${step_timeout}s"; failed=1 ;;
        77) result="skipped (exit 77)"; failed=1 ;;  # on a GPU machine a skip is a failure
        *) result="FAIL (exit $rc)"; failed=1 ;;
    esac
    if [ "$rc" = 0 ] && [ -n "$not_here" ] && grep -q -- "$not_here" "$log"; then
        result="FAIL (found no device: '$not_here' in the log)"
        failed=1
    fi
    not_here=""
    results+=("$name|$result|$(( $(date +%s) - t0 ))|$(basename "$log")")
    echo "gpu_round: $name: $result"
}

{
    echo "## gpu_round $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo
    echo "GPU: $gpu; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1);" \
         "nvcc $(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p');" \
         "commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
         "$(git -C "$root" diff --quiet 2>/dev/null || echo '(with uncommitted changes)')"
    echo "Steps: $only; tools: $tools; quick: $quick; peers: $peers; build: $build"
    echo
} >> "$summary"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1

# ---- build: the README's line with CUDA on and sm_90 --------------------------------------
# protobuf-c for the ONNX importer, which the device lacks, from the packages carried in
# .devdeps (profiling/device_deps.sh fetch, here, before the call)
if [ -d "$root/.devdeps" ]; then
    deps_env="$(bash "$here/device_deps.sh" unpack /tmp/cfx-deps 2>> "$out/01-build.log")" && eval "$deps_env"
fi
if [ "$do_build" = 1 ]; then
    step build 01-build.log bash -c "cmake -S '$root' -B '$build' -DCMAKE_BUILD_TYPE=Release -DCFX_CUDA=ON \
        -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build '$build' -j'$jobs'"
fi
if [ ! -x "$build/cfx" ]; then
    echo "gpu_round: no build in $build (the build failed, or --no-build without one)" >&2
    failed=1
else
    # ---- tests -----------------------------------------------------------------------------
    if wants gpu-tests; then
        not_here="(Skipped)"
        step "ctest -L gpu" 02-ctest-gpu.log ctest --test-dir "$build" -L gpu --output-on-failure --no-tests=error
    fi
    if wants suite; then
        # the rest of the suite: the gpu label ran in the step before (when asked for), and its
        # tests are the longest (the cpu executor's side of a 2048-cube product, say)
        label_args=()
        wants gpu-tests && label_args=(-LE gpu)
        step "ctest (the suite${label_args:+, but the gpu label})" 03-ctest-all.log \
            ctest --test-dir "$build" --output-on-failure -j"$jobs" "${label_args[@]}"
    fi
    # ---- compute-sanitizer on both gpu_* tests ----------------------------------------------
    if wants sanitize; then
        if ! command -v compute-sanitizer >/dev/null 2>&1; then
            results+=("compute-sanitizer|FAIL (not installed: /usr/local/cuda/bin/compute-sanitizer)|0|-")
            failed=1
        else
            saved_timeout=$step_timeout
            [ "$step_timeout" -gt 150 ] && step_timeout=150
            for tool in ${tools//,/ }; do
                # the tests' smaller workloads, since a sanitizer runs every kernel many times
                # slower; every code path is still taken. memcheck runs both tests --quick;
                # racecheck and synccheck, slower again, gpu_persistent --tiny (each kernel
                # path once: the interpreter, micro-ops, the compiled kernel, replicas,
                # batches, device launch and the pause path)
                if [ "$tool" = memcheck ]; then
                    runs="gpu_persistent:--quick gpu_executors:--quick"
                else
                    runs="gpu_persistent:--tiny"
                fi
                for run in $runs; do
                    t=${run%%:*}
                    step "compute-sanitizer --tool $tool $t ${run#*:}" "04-sanitize-$tool-$t.log" \
                        compute-sanitizer --tool "$tool" --error-exitcode 99 --target-processes all \
                        "$build/tests/$t" "${run#*:}"
                done
            done
            step_timeout=$saved_timeout
        fi
    fi
    # ---- benchmarks ------------------------------------------------------------------------
    if wants bench; then
        bench_args=(--build-dir "$build")
        [ "$quick" = 1 ] && bench_args+=(--quick)
        [ "$peers" = 0 ] && bench_args+=(--no-peers)
        not_here="cannot measure"
        step "run_benchmarks.sh ${bench_args[*]:2}" 05-bench.log bash "$here/run_benchmarks.sh" "${bench_args[@]}"
        # the results file it wrote (or rewrote) goes into the round's folder too
        written="$(sed -n 's/^run_benchmarks: wrote //p' "$out/05-bench.log" | tail -n 1)"
        if [ -n "$written" ] && [ -f "$written" ]; then
            cp "$written" "$out/"
            echo "results file: $written (copied here)" >> "$summary"
        else
            echo "results file: none written (see 05-bench.log)" >> "$summary"
        fi
    fi
fi

{
    echo "| step | result | seconds | log |"
    echo "|---|---|---:|---|"
    for r in "${results[@]}"; do
        IFS='|' read -r n res sec log <<< "$r"
        echo "| $n | $res | $sec | $log |"
    done
    echo
} >> "$summary"
echo
echo "gpu_round: summary ($summary):"
for r in "${results[@]}"; do
    IFS='|' read -r n res sec log <<< "$r"
    printf '  %-48s %s (%ss)\n' "$n" "$res" "$sec"
done
echo "gpu_round: every log is in $out"
if [ -n "$tar_file" ]; then
    if tar czf "$tar_file" -C "$(dirname "$out")" "$(basename "$out")"; then
        echo "gpu_round: packed into $tar_file"
    else
        echo "gpu_round: could not pack $out into $tar_file" >&2
        failed=1
    fi
fi
exit $failed
