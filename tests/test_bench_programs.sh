#!/bin/bash
# test_bench_programs.sh: the benchmark's programs (profiling/bench/*.cfx) give the answers the
# driver computes independently in C, on the cpu executor. The GPU benchmark checks every row
# the same way before it times it; this keeps the programs right on machines without a GPU.
# Usage: bash test_bench_programs.sh CFX_BINARY SOURCE_DIR BINARY_DIR
SRC=$2
BIN=$3
bench="$BIN/../profiling/bench_gpu"
[ -x "$bench" ] || { echo "test_bench_programs: $bench is not built"; exit 1; }
# the small and medium programs; cg_8192, power_iteration and greedy_decode take minutes on a CPU
out=$("$bench" --cpu-only --quick --bench-dir "$SRC/profiling/bench" \
      --graphs counter,if_in_while,collatz,cg_1024 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: bench_gpu exited $rc"; exit 1; }
ok=$(echo "$out" | grep -c '| cpu |.*| ok |$')
[ "$ok" -eq 4 ] || { echo "FAIL: expected 4 checked cpu rows, got $ok"; exit 1; }
echo "test_bench_programs: 4 passed, 0 failed"
