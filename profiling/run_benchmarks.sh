#!/usr/bin/env bash
# run_benchmarks.sh: builds cfx, runs the CPU benchmark, the GPU benchmark, the generated-code
# benchmark and the PyTorch/JAX peers, and writes profiling/results/DATE-GPU.md with every
# table and the versions of everything that produced them (GPU, driver, CUDA, torch, jax).
#
#   bash profiling/run_benchmarks.sh [--quick] [--no-peers] [--build-dir DIR]
#
# Without a GPU it says it cannot measure, writes nothing under profiling/results/ and
# exits 0. It exits 1 when the build fails or a benchmark's check fails (the results file
# is still written then, with the failures in it, since a failure is a result too).
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
build="$root/build"
quick=""
peers=1
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick="--quick" ;;
        --no-peers) peers=0 ;;
        --build-dir) build="$2"; shift ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "run_benchmarks: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done

# ---- is there anything to measure on? --------------------------------------------------
if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "run_benchmarks: no GPU here (nvidia-smi is not installed): cannot measure;" \
         "nothing written under profiling/results/"
    exit 0
fi
if ! gpu_name="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)" ||
   [ -z "$gpu_name" ]; then
    echo "run_benchmarks: no GPU here (nvidia-smi finds none): cannot measure;" \
         "nothing written under profiling/results/"
    exit 0
fi

# ---- build: the same command line as profiling/README.md -------------------------------
echo "run_benchmarks: building in $build"
mkdir -p "$build"
if ! { cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCFX_CUDA=ON &&
       cmake --build "$build" -j "$(nproc)"; } > "$build/run_benchmarks.log" 2>&1; then
    tail -n 40 "$build/run_benchmarks.log"
    echo "run_benchmarks: the build failed (full log: $build/run_benchmarks.log)" >&2
    exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
status=0

# ---- the GPU benchmark (first: it also exports the inputs and results for the peers) --
echo "run_benchmarks: bench_gpu $quick"
gpu_rc=0
"$build/profiling/bench_gpu" $quick --json "$work/gpu.json" --csv "$work/gpu.csv" \
    --export "$work/data" > "$work/gpu.md" 2> "$work/gpu.log" || gpu_rc=$?
if ! grep -q '^## Time per loop iteration' "$work/gpu.md"; then
    cat "$work/gpu.md"
    tail -n 20 "$work/gpu.log"
    if [ "$gpu_rc" != 0 ]; then
        echo "run_benchmarks: bench_gpu failed (exit $gpu_rc) before its table;" \
             "nothing written under profiling/results/" >&2
        exit 1
    fi
    echo "run_benchmarks: bench_gpu measured nothing: cannot measure;" \
         "nothing written under profiling/results/"
    exit 0
fi
[ "$gpu_rc" = 0 ] || status=1
cat "$work/gpu.md"

# ---- the CPU benchmark -----------------------------------------------------------------
if [ -f "$here/bench_cpu.sh" ]; then
    echo "run_benchmarks: bench_cpu.sh"
    BUILD_DIR="$build" bash "$here/bench_cpu.sh" "$build" > "$work/cpu.md" 2>&1 ||
        printf '\n(bench_cpu.sh exited with an error)\n' >> "$work/cpu.md"
else
    printf '## CPU benchmark\n\nprofiling/bench_cpu.sh is not in this checkout.\n' > "$work/cpu.md"
fi

# ---- the generated code: C and the compiled kernel against the executors and Lua --------
if [ -f "$here/bench_gen.sh" ]; then
    echo "run_benchmarks: bench_gen.sh $quick"
    BUILD_DIR="$build" bash "$here/bench_gen.sh" "$build" $quick > "$work/gen.md" 2>&1 || status=1
else
    printf '## Generated code\n\nprofiling/bench_gen.sh is not in this checkout.\n' > "$work/gen.md"
fi

# ---- the peers ---------------------------------------------------------------------------
if [ "$peers" = 1 ]; then
    echo "run_benchmarks: peers.py $quick"
    python3 "$here/peers.py" --data "$work/data" --cfx "$build/cfx" $quick \
        --cfx-json "$work/gpu.json" --json "$work/peers.json" > "$work/peers.md" \
        2> "$work/peers.log" || status=1
    cat "$work/peers.md"
else
    echo "Not run (--no-peers)." > "$work/peers.md"
fi

# ---- versions ----------------------------------------------------------------------------
pyver() { python3 -c "import $1; print($1.__version__)" 2>/dev/null || echo "not installed"; }
date_utc="$(date -u +%Y-%m-%d)"
slug="$(printf '%s' "$gpu_name" | tr -c 'A-Za-z0-9' '-' | tr -s '-' | sed 's/^-//; s/-$//')"
mkdir -p "$here/results"
out="$here/results/$date_utc-$slug.md"
{
    echo "# cfx benchmarks on $gpu_name, $date_utc"
    echo
    echo "Produced by \`bash profiling/run_benchmarks.sh $quick\` at commit" \
         "\`$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)\`" \
         "$(git -C "$root" diff --quiet 2>/dev/null || echo '(with uncommitted changes)')."
    echo
    echo "| what | version |"
    echo "|---|---|"
    echo "| GPU | $(nvidia-smi --query-gpu=name,memory.total,pcie.link.gen.current --format=csv,noheader | head -n 1) |"
    echo "| NVIDIA driver | $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1) |"
    echo "| CUDA (nvidia-smi) | $(nvidia-smi | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n 1) |"
    echo "| nvcc | $(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p' || echo unknown) |"
    echo "| CPU | $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) cores |"
    echo "| C compiler | $(cc --version | head -n 1) |"
    echo "| cmake | $(cmake --version | head -n 1) |"
    echo "| python | $(python3 --version 2>&1) |"
    echo "| numpy | $(pyver numpy) |"
    echo "| torch | $(pyver torch) |"
    echo "| jax | $(pyver jax) |"
    echo "| jaxlib | $(pyver jaxlib) |"
    echo
    echo "How to read these tables: profiling/README.md."
    echo
    sed '1{/^# /d}' "$work/gpu.md"
    echo
    cat "$work/cpu.md"   # bench_cpu.sh prints its own heading and table
    echo
    cat "$work/gen.md"   # so does bench_gen.sh
    echo
    cat "$work/peers.md"
    echo
    echo "## Raw numbers"
    echo
    echo "bench_gpu --json:"
    echo
    echo '```json'
    cat "$work/gpu.json" 2>/dev/null
    echo '```'
    if [ -s "$work/peers.json" ]; then
        echo
        echo "peers.py --json:"
        echo
        echo '```json'
        cat "$work/peers.json"
        echo '```'
    fi
} > "$out"
echo "run_benchmarks: wrote $out"
exit $status
