#!/bin/bash
# test_bench_programs.sh: the benchmark's programs (profiling/bench/*.cfx) give the answers the
# driver computes independently in C, on the cpu executor. The GPU benchmark checks every row
# the same way before it times it; this keeps the programs right on machines without a GPU.
# Also the scripts that drive a GPU round (profiling/*.sh), which only a GPU machine runs in
# full: they parse, and gpu_round.sh's command line and its answer where there is no GPU.
# Usage: bash test_bench_programs.sh CFX_BINARY SOURCE_DIR BINARY_DIR
SRC=$2
BIN=$3
bench="$BIN/../profiling/bench_gpu"
[ -x "$bench" ] || { echo "test_bench_programs: $bench is not built"; exit 1; }
# the small and medium programs; cg_8192, power_iteration and greedy_decode take minutes on a CPU.
# call_op registers its op by its source, which needs a C compiler.
graphs=counter,if_in_while,collatz,cg_1024,call_op_kernel,call_op_cfx
want=6
if command -v cc >/dev/null 2>&1 || [ -n "$CFX_CC" ]; then
    graphs=$graphs,call_op
    want=7
fi
out=$("$bench" --cpu-only --quick --bench-dir "$SRC/profiling/bench" --graphs "$graphs" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: bench_gpu exited $rc"; exit 1; }
ok=$(echo "$out" | grep -c '| cpu |.*| ok |$')
[ "$ok" -eq "$want" ] || { echo "FAIL: expected $want checked cpu rows, got $ok"; exit 1; }

for f in "$SRC"/profiling/*.sh; do
    bash -n "$f" || { echo "FAIL: $f does not parse"; exit 1; }
done
round="$SRC/profiling/gpu_round.sh"
help=$(bash "$round" --help) || { echo "FAIL: gpu_round.sh --help exited $?"; exit 1; }
echo "$help" | grep -q -- '--only STEPS' || { echo "FAIL: gpu_round.sh --help lists no --only"; exit 1; }
for bad in "--bogus" "--only nonsense" "--tools nosuchtool" "--step-timeout soon"; do
    # shellcheck disable=SC2086
    bash "$round" $bad >/dev/null 2>&1
    rc=$?
    [ $rc -eq 2 ] || { echo "FAIL: gpu_round.sh $bad exited $rc, not 2"; exit 1; }
done
# an nvidia-smi that finds no GPU, first on PATH, so that this never starts a real round
fake=${3:+$3/work/test_bench_programs}
fake=${fake:-$(mktemp -d)}
rm -rf "$fake" && mkdir -p "$fake" || exit 1
trap 'rm -rf "$fake"' EXIT
printf '#!/bin/sh\nexit 9\n' > "$fake/nvidia-smi"
chmod +x "$fake/nvidia-smi"
msg=$(PATH="$fake:$PATH" bash "$round" --out "$fake/round" 2>&1)
rc=$?
[ $rc -eq 77 ] || { echo "FAIL: gpu_round.sh without a GPU exited $rc, not 77: $msg"; exit 1; }
echo "$msg" | grep -q 'no GPU here' || { echo "FAIL: gpu_round.sh without a GPU said: $msg"; exit 1; }
[ ! -e "$fake/round" ] || { echo "FAIL: gpu_round.sh without a GPU wrote $fake/round"; exit 1; }
echo "test_bench_programs: $want programs and the round scripts passed, 0 failed"
