#!/bin/bash
# test_threads_cli.sh: the cpu backend's thread count on the command line: `cfx run --threads N`
# and $CFX_NUM_THREADS, their bad values refused in one line with exit 1, the same results with
# 1 thread as with 2 for a graph over a large tensor (the values worked out by hand), and
# `cfx run --help` naming the option. (tests/test_cpu_threads.c tests the pool and the C API.)
# Usage: bash test_threads_cli.sh CFX_BINARY SOURCE_DIR BINARY_DIR
. "$(dirname "$0")/cli_lib.sh" test_threads_cli "$@"
expect() { # expect RC STDOUT_OR_- DESCRIPTION: the exit status, stdout when not -, stderr one line at most
    checks=$((checks + 1))
    [ "$rc" = "$1" ] || fail "$3: exit $rc, expected $1; stderr: $err"
    [ "$2" = - ] || [ "$out" = "$2" ] || fail "$3: stdout [$out], expected [$2]"
    [ "$(printf '%s' "$err" | wc -l)" -le 1 ] || fail "$3: stderr has more than one line: [$err]"
}

# x is 1.5 everywhere (1100000 elements: the adds and the sum split); each step adds 1.5 * 2 to every
# element: 3 steps give 9 + 1.5;
# sum over 1100000 elements of 10.5 is 11550000 exactly (every partial sum an exact f32/f64)
cat >"$T/big.cfx" <<'EOF'
graph big(steps: i32) -> (s: f32, first: f32, last: f32) {
  x = zeros(f32[1100000]) + 1.5
  y = x
  for i in range(steps) {
    y = y + x * 2.0
  }
  s = sum(y)
  first = y[0]
  last = y[1099999]
}
EOF
want=$'s = 11550000\nfirst = 10.5\nlast = 10.5'
for n in 1 2 3; do
    run_cfx run "$T/big.cfx" --backend cpu --in steps=3 --threads $n
    expect 0 "$want" "--threads $n"
done
run_cfx run "$T/big.cfx" --in steps=3 --threads=2
expect 0 "$want" "--threads=2"
CFX_NUM_THREADS=2 run_cfx run "$T/big.cfx" --in steps=3
expect 0 "$want" "CFX_NUM_THREADS=2"

for bad in 0 -1 257 x 2x ""; do
    run_cfx run "$T/big.cfx" --in steps=3 --threads "$bad"
    expect 1 "" "--threads '$bad'"
    case "$err" in
    *"--threads"*) ;;
    *) fail "--threads '$bad': the message does not name --threads: [$err]" ;;
    esac
done
for bad in 0 -1 257 x 2x; do
    CFX_NUM_THREADS=$bad run_cfx run "$T/big.cfx" --in steps=3
    expect 1 "" "CFX_NUM_THREADS='$bad'"
    case "$err" in
    *"CFX_NUM_THREADS is '$bad'"*) ;;
    *) fail "CFX_NUM_THREADS='$bad': [$err]" ;;
    esac
done
# --threads governs the cpu backend only
run_cfx run "$T/big.cfx" --in steps=3 --threads 2 --backend cuda-host
expect 1 "" "--threads with cuda-host"

run_cfx run --help
checks=$((checks + 1))
case "$out" in
*"--threads N"*CFX_NUM_THREADS*) ;;
*) fail "cfx run --help does not describe --threads and CFX_NUM_THREADS" ;;
esac

finish
