#!/bin/bash
# test_cost.sh: `cfx dump --cost`, the cost sheet. The grid barriers per loop iteration of the
# benchmark graphs are pinned: both modes of cuda-persistent pass the plan's barriers, and a
# change that adds one shows here, on any machine. The counts, derived by hand from the graphs
# and the scheduler's rules (host/gen/plan.c):
#   counter, if_in_while   0: scalar loops, one block alone (a one-block region)
#   collatz                1: any(v > 1) is a split reduction over 8192 elements (one combine);
#                          the elementwise update reads and writes each block's own share
#   cg_1024                2: dot(p, Ap) must wait for every block's rows of Ap (a combine), and
#                          r (a replica: every block holds all of r, p and s20) reads all of
#                          Ap's temporary alpha * Ap (a barrier); dot(r, r) is over a replica.
#                          The compiled kernel 1: Ap takes two buffers that the iterations
#                          alternate between, so every block computes alpha * Ap whole (a
#                          replica too) right after the combine, and the next iteration's
#                          product writes the other buffer while slow blocks still read
#   power_iteration        2: A @ v reads all of v, which every block wrote a share of (a
#                          barrier); dot(v, w) and norm(w) combine over one barrier (a batch).
#                          The compiled kernel 1: v is a replica (every block computes all of
#                          v = w / norm(w), reading w's 16 KB whole after the combine) and w
#                          takes two buffers that the iterations alternate between, so the next
#                          product writes the other one while slow blocks still read
#   greedy_decode          2: tanh(M @ h + E[tok]) into h (a replica) reads all of M @ h (a
#                          barrier); argmax over 32768 logits (a combine). The compiled kernel
#                          1: M @ h is computed an iteration ahead, right after h, into the
#                          other of its two buffers, so its rows are complete at the argmax's
#                          combine and M @ h + E[tok] and tanh are replicas after it
#   cg_8192                3: its vectors (32 KB) are too big for replicas: A @ p reads all of
#                          p (a barrier), dot(p, Ap) and dot(r, r) (two combines, the second
#                          depends on the first's alpha)
# Usage: bash test_cost.sh CFX_BINARY SOURCE_DIR BINARY_DIR
CFX=$1
SRC=$2
fails=0
checks=0

fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# grid_barriers FILE: the grid-barrier column of every mode row, space separated
grid_barriers() {
    "$CFX" dump "$1" --cost | awk '$1 == "interpreter" || $1 == "compiled" { printf "%s ", $3 }'
}

expect_barriers() { # GRAPH "EXPECTED COLUMN"
    checks=$((checks + 1))
    local got
    got=$(grid_barriers "$SRC/profiling/bench/$1.cfx")
    [ "$got" = "$2" ] || fail "$1: grid barriers per iteration [$got], expected [$2]"
}

expect_barriers counter "0 0 "
expect_barriers if_in_while "0 0 "
expect_barriers collatz "1 1 "
expect_barriers cg_1024 "2 1 "
expect_barriers power_iteration "2 1 "
expect_barriers greedy_decode "2 1 "
expect_barriers cg_8192 "3 3 "

# the compiled kernel's plan names what alternates: cg_1024's Ap, power iteration's w
checks=$((checks + 1))
"$CFX" dump "$SRC/profiling/bench/cg_1024.cfx" --cost | grep -q "^plan of the compiled kernel: .*1 tensor alternating by iteration (s13 Ap)" ||
    fail "cg_1024's compiled plan does not say Ap alternates"
checks=$((checks + 1))
"$CFX" dump "$SRC/profiling/bench/power_iteration.cfx" --cost | grep -q "^plan of the compiled kernel: 1 replica (s4 v), 1 tensor alternating by iteration (s14 w)" ||
    fail "power_iteration's compiled plan does not say v is a replica and w alternates"

# greedy decoding's compiled plan computes M @ h (record 7) an iteration ahead, after h (record 11)
checks=$((checks + 1))
"$CFX" dump "$SRC/profiling/bench/greedy_decode.cfx" --cost | grep -q "^plan of the compiled kernel: .*1 product computed an iteration ahead (record 7 after 11)" ||
    fail "greedy_decode's compiled plan does not compute M @ h ahead"

# the tensor kept in L2: greedy decoding's W (read whole by W @ h), not E (a row an iteration);
# nothing for collatz (no tensor of 1 MiB)
checks=$((checks + 1))
"$CFX" dump "$SRC/profiling/bench/greedy_decode.cfx" --cost | grep -q "^kept in L2 .*(s0 W) 33.6 MB" ||
    fail "greedy_decode does not keep W in L2"
checks=$((checks + 1))
"$CFX" dump "$SRC/profiling/bench/collatz.cfx" --cost | grep -q "^kept in L2: nothing" ||
    fail "collatz keeps a tensor in L2"

# a one-block loop is said to be one
checks=$((checks + 1))
"$CFX" dump "$SRC/profiling/bench/counter.cfx" --cost | grep -q "a one-block loop" ||
    fail "counter's loop is not reported as a one-block loop"

# the bytes: power_iteration's loop reads A (4096 x 4096 f32, 67.1 MB) at least once
checks=$((checks + 1))
"$CFX" dump "$SRC/profiling/bench/power_iteration.cfx" --cost |
    awk '$1 == "interpreter" { split($5, a, " "); if ($5 + 0 < 67.1 || $6 != "MB") exit 1 }' ||
    fail "power_iteration reads less than its matrix per iteration"

# the prediction follows the floors: with a grid barrier of 100 us the barriers dominate (the
# compiled kernel's one per cg_1024 iteration)
checks=$((checks + 1))
pred=$("$CFX" dump "$SRC/profiling/bench/cg_1024.cfx" --cost --floors 100,0.001,1e6,0.001,0.001,0.001 |
    awk '$1 == "compiled" { print $NF }')
awk -v p="$pred" 'BEGIN { exit !(p >= 100 && p < 101) }' ||
    fail "cg_1024's compiled kernel with 1 barrier of 100 us predicted [$pred] us, expected 100 and a little"

# every graph of graphs/ that compiles gets a sheet
for f in "$SRC"/graphs/*.cfx; do
    "$CFX" check "$f" >/dev/null 2>&1 || continue
    checks=$((checks + 1))
    out=$("$CFX" dump "$f" --cost 2>&1) || fail "$f: dump --cost exited $?: $out"
    case "$out" in *"cost of one loop iteration"*) ;; *) fail "$f: no cost sheet: $out" ;; esac
done

# the options
bad() { # DESCRIPTION EXPECTED_STDERR ARGS...
    local what=$1 want=$2
    shift 2
    checks=$((checks + 1))
    local err
    err=$("$CFX" dump "$SRC/profiling/bench/counter.cfx" "$@" 2>&1 >/dev/null)
    local rc=$?
    [ "$rc" = 1 ] || fail "$what: exit $rc, expected 1"
    case "$err" in *"$want"*) ;; *) fail "$what: stderr [$err] lacks [$want]" ;; esac
}
bad "--blocks alone" "--blocks goes with --cost" --blocks 10
bad "--floors alone" "--floors goes with --cost" --floors 1,1,1,1,1,1
bad "--blocks 0" "--blocks wants a count of blocks from 1 to 1000000, got '0'" --cost --blocks 0
bad "--blocks x" "--blocks wants a count of blocks" --cost --blocks x
bad "--floors short" "--floors wants six numbers" --cost --floors 1,2,3
bad "--floors negative" "--floors wants six positive numbers" --cost --floors 1,2,3,4,5,-6
bad "--cost=1" "--cost takes no value" --cost=1

echo "test_cost: $((checks - fails)) passed, $fails failed"
[ "$fails" = 0 ]
