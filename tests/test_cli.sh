#!/bin/bash
# test_cli.sh: the cfx command line: exit statuses 0/1/3, printed results, --help texts,
# missing inputs, --in literals/.npy/random, --out writing a valid .npy, backends, bad options,
# output that cannot be written (a full disk, a file size limit), messages that stay one
# short line, and traces whose events lead to their source.
# Usage: bash test_cli.sh CFX_BINARY SOURCE_DIR BINARY_DIR
. "$(dirname "$0")/cli_lib.sh" test_cli "$@"

# expect_rc N DESCRIPTION
expect_rc() {
    checks=$((checks + 1))
    [ "$rc" = "$1" ] || fail "$2: exit $rc, expected $1; stderr: $err"
}
expect_out() {
    checks=$((checks + 1))
    [ "$out" = "$1" ] || fail "$2: stdout was [$out], expected [$1]"
}
expect_err() {
    checks=$((checks + 1))
    [ "$err" = "$1" ] || fail "$2: stderr was [$err], expected [$1]"
}
# expect_in TEXT WHERE(out|err) DESCRIPTION: TEXT is a line or part of one
expect_in() {
    checks=$((checks + 1))
    local hay
    if [ "$2" = out ]; then hay=$out; else hay=$err; fi
    case "$hay" in
    *"$1"*) ;;
    *) fail "$3: [$1] not in std$2: [$hay]" ;;
    esac
}
# expect_not_in TEXT WHERE(out|err) DESCRIPTION
expect_not_in() {
    checks=$((checks + 1))
    local hay
    if [ "$2" = out ]; then hay=$out; else hay=$err; fi
    case "$hay" in
    *"$1"*) fail "$3: [$1] in std$2: [$hay]" ;;
    esac
}

# ---- graphs --------------------------------------------------------------------------------
cat >"$T/iw.cfx" <<'G'
# the spec's example: x=0, y=1, i=0 -> out = 5
graph if_in_while(x: i32, y: i32, i: i32) -> (out: i32) {
  out = x
  while i < 3 {
    if x + i < y {
      out = out + x
    } else {
      out = out + y
    }
    out = out + 1
    i = i + 1
  }
}
G
cat >"$T/idx.cfx" <<'G'
graph idx(x: i32[4], i: i32) -> (r: i32) {
  r = x[i]
}
G
cat >"$T/two.cfx" <<'G'
graph double(x: f32[3]) -> (y: f32[3], tenth: f32) {
  y = x * 2
  tenth = 0.1
}
graph printer(x: i32) -> (b: bool, v: f64[2, 2]) {
  print(x + 1, "lbl")
  b = x > 2
  v = full(f64[2, 2], 1.0)
  print(v)
}
graph ints(a: i32[4], b: i64, c: bool[2]) -> (a2: i32[4], b2: i64, c2: bool[2]) {
  a2 = a
  b2 = b
  c2 = c
}
G
cat >"$T/spin.cfx" <<'G'
graph spin(x: i32) -> (i: i32) {
  i = 0
  while x < 1 {
    i = i + 1
  }
}
G
printf 'graph bad(x: i32) -> (y: i32) {\n  y = x + 1.5\n}\n' >"$T/bad.cfx"

# ---- help and version ------------------------------------------------------------------------
run_cfx --help
expect_rc 0 "cfx --help"
expect_in "usage: cfx run FILE [options]" out "cfx --help"
expect_in "cfx check FILE" out "cfx --help"
expect_in "cfx dump FILE" out "cfx --help"
run_cfx -h
expect_rc 0 "cfx -h"
expect_in "usage: cfx run FILE" out "cfx -h"
run_cfx --version
expect_rc 0 "cfx --version"
expect_in "cfx 1.0 (language version 2)" out "cfx --version"
expect_in "cpu BLAS: " out "cfx --version says whether a BLAS was found"
run_cfx backends
expect_rc 0 "cfx backends"
expect_in "cfx 1.0" out "cfx backends"
expect_in "cpu BLAS: " out "cfx backends says which BLAS the cpu executor's products use"
expect_in "  cpu              available" out "cfx backends lists the cpu backend"
for b in cuda-host cuda-graph cuda-persistent; do
    expect_in "  $b " out "cfx backends lists $b"
done
run_cfx backends extra
expect_rc 1 "cfx backends takes no argument"
run_cfx
expect_rc 1 "cfx without arguments"
expect_in "usage:" err "cfx without arguments"
run_cfx frobnicate
expect_rc 1 "unknown command"
expect_err "cfx: unknown command 'frobnicate' (run, check, dump, import, backends; see cfx --help)" "unknown command"

run_cfx run --help
expect_rc 0 "cfx run --help"
for opt in "--graph NAME" "--in NAME=VALUE" "--seed N" "--out NAME=FILE.npy" "--backend B" \
    "--max-iters N" "--trace FILE.json" "--profile" "--deadline SECONDS" "--persistent-mode M" "--help, -h" "random" ".npy" "cuda-persistent" "cuda-graph" "cuda-host"; do
    expect_in "$opt" out "cfx run --help mentions $opt"
done
run_cfx run "$T/iw.cfx" --help
expect_rc 0 "cfx run FILE --help"
expect_in "graph if_in_while" out "run FILE --help"
expect_in "  inputs:
    x: i32
    y: i32
    i: i32
  results:
    out: i32" out "run FILE --help lists inputs and results"
run_cfx check --help
expect_rc 0 "cfx check --help"
run_cfx dump --help
expect_rc 0 "cfx dump --help"

# ---- running -------------------------------------------------------------------------------
run_cfx run "$T/iw.cfx" --in x=0 --in y=1 --in i=0
expect_rc 0 "if_in_while"
expect_out "out = 5" "if_in_while x=0 y=1 i=0"
expect_err "" "if_in_while writes nothing on stderr"
# by hand: i=0: 0<1 -> out=0+0+1=1; i=1: 1<1 no -> out=1+1+1=3; i=2: no -> 3+1+1=5
run_cfx run "$T/iw.cfx" --in=x=0 --in y=1 --in=i=2
expect_out "out = 2" "if_in_while i=2 (x=0: out = 0 + 1 + 1)"
run_cfx run "$T/iw.cfx" --in x=0 --in y=1 --in i=5
expect_out "out = 0" "if_in_while with no iteration"

run_cfx run "$T/two.cfx" --in "x=[0.5, 1.25, 1.5]"
expect_rc 0 "double"
expect_out "y = [1, 2.5, 3]
tenth = 0.1" "double prints results in declaration order, shortest reals"
run_cfx run "$T/two.cfx" --graph printer --in x=3
expect_rc 0 "printer"
expect_out "lbl: 4
[[1, 1], [1, 1]]
b = true
v = [[1, 1], [1, 1]]" "prints come first, in program order, then the results"
run_cfx run "$T/two.cfx" --graph ints --in "a=[1,-2,0x10,2147483647]" --in b=-9223372036854775808 --in "c=[true,false]"
expect_rc 0 "ints"
expect_out "a2 = [1, -2, 16, 2147483647]
b2 = -9223372036854775808
c2 = [true, false]" "integers and bools print plainly"

# ---- stopped runs: exit 3 and the status line ------------------------------------------------
run_cfx run "$T/idx.cfx" --in "x=[10,20,30,40]" --in i=4
expect_rc 3 "index out of range"
expect_err "$T/idx.cfx:2:3: run stopped: index: 'x' has 4 rows, index was 4" "index status line"
expect_out "" "a stopped run prints no results"
run_cfx run "$T/idx.cfx" --in "x=[10,20,30,40]" --in i=-1
expect_rc 0 "negative index"
expect_out "r = 40" "x[-1] is the last row"
run_cfx run "$T/spin.cfx" --in x=0 --max-iters 10
expect_rc 3 "budget"
expect_err "$T/spin.cfx:3:3: run stopped: limit: iteration budget of 10 spent" "budget status line (the while statement)"
run_cfx run "$T/spin.cfx" --in x=0 --max-iters=-3
expect_rc 1 "negative --max-iters"
expect_in "--max-iters wants a non-negative integer, got '-3'" err "negative --max-iters"
# a non-negative integer past the cap is told the cap, not that it is no integer
run_cfx run "$T/spin.cfx" --in x=0 --max-iters 18446744073709551615
expect_rc 1 "--max-iters past INT64_MAX"
expect_err "cfx: --max-iters is at most 9223372036854775807, got '18446744073709551615' (see cfx run --help)" \
    "--max-iters past INT64_MAX"
run_cfx run "$T/spin.cfx" --in x=0 --max-iters 9223372036854775808
expect_in "cfx: --max-iters is at most 9223372036854775807" err "--max-iters one past INT64_MAX"
run_cfx run "$T/spin.cfx" --in x=0 --seed 99999999999999999999
expect_in "cfx: --seed is at most 9223372036854775807" err "--seed past INT64_MAX"
run_cfx run "$T/spin.cfx" --in x=5 --max-iters 9223372036854775807
expect_rc 0 "--max-iters INT64_MAX itself"

# ---- compile errors and check -----------------------------------------------------------------
run_cfx run "$T/bad.cfx" --in x=1
expect_rc 1 "compile error"
expect_in "$T/bad.cfx:2:" err "compile error position"
expect_in ": error: " err "compile error form"
expect_in "  y = x + 1.5" err "compile error shows the source line"
run_cfx check "$T/bad.cfx"
expect_rc 1 "check of a bad file"
run_cfx check "$T/iw.cfx"
expect_rc 0 "check of a good file"
expect_out "" "check prints nothing when fine"
expect_err "" "check prints nothing when fine (stderr)"
run_cfx check "$T/nope.cfx"
expect_rc 1 "check of a missing file"
expect_err "cfx: $T/nope.cfx: cannot read: No such file or directory" "missing file message (cfx's own, not a compile error)"
run_cfx check /nonexistent
expect_err "cfx: /nonexistent: cannot read: No such file or directory" "check /nonexistent"
run_cfx check "$T"
expect_rc 1 "check of a directory"
expect_in "cfx: $T: cannot read: " err "check of a directory"
# one mistake, one error: a Python def is not also "no graph in file"
printf 'def g(x):\n  return x\n' >"$T/def.cfx"
run_cfx check "$T/def.cfx"
expect_rc 1 "a Python def"
expect_err "$T/def.cfx:1:1: error: 'def' is Python: write graph NAME(x: TYPE) -> (y: TYPE) { ... }
def g(x):
^" "a Python def is one error"
run_cfx check
expect_rc 1 "check without a file"

# ---- dump ------------------------------------------------------------------------------------
run_cfx dump "$T/two.cfx"
expect_rc 0 "dump all graphs"
expect_in "double" out "dump names graph double"
expect_in "printer" out "dump names graph printer"
expect_in "HALT" out "dump lists records"
run_cfx dump "$T/two.cfx" --graph ints
expect_rc 0 "dump one graph"
checks=$((checks + 1))
case "$out" in *printer*) fail "dump --graph ints shows another graph" ;; esac
run_cfx dump "$T/two.cfx" --graph nothere
expect_rc 1 "dump of an unknown graph"
expect_err "cfx: $T/two.cfx has no graph 'nothere'; its graphs are: double printer ints" "unknown graph message"
# --kernel: the generated kernel of the compiled mode (CUDA C, the default) or the host's C
run_cfx dump "$T/two.cfx" --graph double --kernel
expect_rc 0 "dump --kernel"
expect_in "__global__ void __launch_bounds__(CK_THREADS, 2) cfx_compiled(const ck_args a)" out "dump --kernel prints the CUDA kernel's entry"
run_cfx dump "$T/two.cfx" --graph double --kernel cuda
expect_in "cfx_compiled(const ck_args a)" out "dump --kernel cuda"
run_cfx dump "$T/two.cfx" --graph double --kernel=c
expect_rc 0 "dump --kernel=c"
expect_in "void cgen_run(cgen_host_args *a)" out "dump --kernel c prints the host function"
run_cfx dump "$T/two.cfx" --kernel=ptx
expect_rc 1 "dump --kernel=ptx"
expect_err "cfx: --kernel is cuda or c, got 'ptx' (see cfx dump --help)" "dump --kernel of an unknown target"
run_cfx dump "$T/two.cfx" --kernel --cost
expect_rc 1 "dump --kernel --cost"
run_cfx dump --help
expect_in "--kernel prints instead each graph's generated kernel" out "dump --help tells of --kernel"

# ---- bad command lines -------------------------------------------------------------------------
run_cfx run "$T/iw.cfx" --in x=0
expect_rc 1 "missing inputs"
expect_err "cfx: missing inputs: y i; graph 'if_in_while' takes, each as --in NAME=VALUE:
  x: i32
  y: i32
  i: i32" "missing inputs list every input with its type"
# inputs with defaults: --help shows them, a run may leave them out, and the missing-inputs
# message names only the inputs without one
cat >"$T/def.cfx" <<'EOF'
graph scaled(x: f32[2], k: f32 = 2.5, n: i32 = -3, on: bool = true) -> (y: f32[2], m: i32) {
  y = x * k
  m = n if on else 0
}
EOF
run_cfx run "$T/def.cfx" --help
expect_rc 0 "--help of a graph with defaults"
expect_in "    k: f32 = 2.5
    n: i32 = -3
    on: bool = true" out "--help shows the defaults"
run_cfx run "$T/def.cfx" --in "x=[1,2]"
expect_rc 0 "run that leaves out the defaulted inputs"
expect_out "y = [2.5, 5]
m = -3" "defaults taken"
run_cfx run "$T/def.cfx" --in "x=[1,2]" --in on=false --in k=1
expect_rc 0 "run that gives some defaulted inputs"
expect_out "y = [1, 2]
m = 0" "defaults overridden"
cat >"$T/none.cfx" <<'EOF'
graph opt(x: f32[2], bias: f32[2] = None) -> (y: f32[2]) {
  y = x if bias is None else x + bias
}
EOF
run_cfx run "$T/none.cfx" --help
expect_in "    bias: f32[2] = None" out "--help shows a None default"
run_cfx run "$T/none.cfx" --in "x=[1,2]"
expect_out "y = [1, 2]" "a None parameter left out"
run_cfx run "$T/none.cfx" --in "x=[1,2]" --in "bias=[3,3]"
expect_out "y = [4, 5]" "a None parameter given"
run_cfx run "$T/def.cfx" --in k=1
expect_rc 1 "missing input without a default"
expect_err "cfx: missing input: x; graph 'scaled' takes, each as --in NAME=VALUE:
  x: f32[2]
  k: f32 = 2.5
  n: i32 = -3
  on: bool = true" "missing inputs name only those without a default"
run_cfx run "$T/iw.cfx" --in x=1.5 --in y=1 --in i=0
expect_rc 1 "non-integer for i32"
expect_err "cfx: --in x=1.5: expected an integer for i32, got '1.5' (the input is i32)" "bad --in value"
run_cfx run "$T/two.cfx" --in "x=[1,2]"
expect_rc 1 "wrong shape"
expect_err "cfx: --in x=[1,2]: dimension 0 has 2 elements, expected 3 (the input is f32[3])" "wrong shape message"
run_cfx run "$T/two.cfx" --in "x=[1,2,3,]"
expect_rc 1 "a trailing comma"
expect_err "cfx: --in x=[1,2,3,]: a ',' before ']': a trailing comma is not allowed (the input is f32[3])" \
    "a trailing comma is blamed, not the dimension"
# a bad value of 100 KB is echoed cut to a short line, as compile errors echo source
long=$(head -c 100000 /dev/zero | tr '\0' '1')
run_cfx run "$T/two.cfx" --in "x=[$long]"
expect_rc 1 "a 100 KB value"
checks=$((checks + 1))
[ "$(printf '%s' "$err" | wc -l)" -le 1 ] && [ "${#err}" -lt 400 ] ||
    fail "a 100 KB --in value makes a message of ${#err} bytes: $(printf '%s' "$err" | head -c 300)"
expect_in "cfx: --in x=[$(printf '1%.0s' $(seq 63))...: " err "a 100 KB value is cut after 64 bytes"
run_cfx run "$T/two.cfx" --in "$(printf 'x=[1,\001,2]')"
expect_in "cfx: --in x=[1,\x01,2]: " err "a byte that does not print is echoed as \\xNN"
run_cfx run "$T/iw.cfx" --in "$long=1"
checks=$((checks + 1))
[ "${#err}" -lt 600 ] || fail "a 100 KB input name makes a message of ${#err} bytes"
run_cfx run "$T/iw.cfx" --in x=0 --in y=1 --in i=0 --backend "$long"
checks=$((checks + 1))
[ "${#err}" -lt 400 ] || fail "a 100 KB backend name makes a message of ${#err} bytes"
run_cfx run "$T/iw.cfx" --in x=0 --in y=1 --in i=0 --in q=3
expect_rc 1 "unknown input"
expect_in "cfx: graph 'if_in_while' has no input 'q'" err "unknown input"
run_cfx run "$T/iw.cfx" --in x=0 --in x=1 --in y=1 --in i=0
expect_rc 1 "input given twice"
expect_err "cfx: input 'x' is given twice" "input given twice"
run_cfx run "$T/iw.cfx" --in x=0 --in y=1 --in i=0 --frob
expect_rc 1 "unknown option"
expect_err "cfx: unknown option '--frob' (see cfx run --help)" "unknown option"
run_cfx run "$T/iw.cfx" --graph
expect_rc 1 "missing value"
expect_err "cfx: option --graph needs a value (see cfx run --help)" "missing value"
run_cfx run "$T/iw.cfx" --in x
expect_rc 1 "--in without ="
expect_err "cfx: --in wants NAME=VALUE, got 'x' (see cfx run --help)" "--in without ="
run_cfx run "$T/iw.cfx" extra.cfx
expect_rc 1 "two files"
expect_in "unexpected argument 'extra.cfx'" err "two files"
run_cfx run
expect_rc 1 "run without a file"
run_cfx run "$T/iw.cfx" --graph nope --in x=0
expect_rc 1 "unknown graph"
run_cfx run "$T/iw.cfx" --in x=0 --in y=1 --in i=0 --backend warp
expect_rc 1 "unknown backend"
expect_err "cfx: unknown backend 'warp' (auto, cpu, cuda-host, cuda-graph, cuda-persistent)" "unknown backend"
run_cfx run "$T/iw.cfx" --in x=0 --in y=1 --in i=0 --seed x
expect_rc 1 "bad seed"
run_cfx run "$T/two.cfx" --in "x=[1,2,3]" --out nothere=a.npy
expect_rc 1 "--out of an unknown result"

# ---- backends ----------------------------------------------------------------------------------
run_cfx run "$T/iw.cfx" --in x=0 --in y=1 --in i=0 --backend auto
expect_rc 0 "backend auto"
expect_out "out = 5" "backend auto result"
checks=$((checks + 1))
case "$err" in
"cfx: backend cuda-persistent ("*")" | "cfx: backend cpu ("*")") ;;
*) fail "backend auto should say which it picked, said [$err]" ;;
esac
run_cfx run "$T/iw.cfx" --in x=0 --in y=1 --in i=0 --backend cpu
expect_rc 0 "backend cpu"
expect_err "" "backend cpu says nothing"
for b in cuda-host cuda-graph cuda-persistent; do
    run_cfx run "$T/iw.cfx" --in x=0 --in y=1 --in i=0 --backend $b
    if [ "$rc" = 0 ]; then
        expect_out "out = 5" "backend $b result"
    else
        expect_rc 1 "backend $b where it is not available"
        expect_in "cfx: backend $b is not available: " err "backend $b reason"
    fi
done

# --persistent-mode: compiled or interp, for cuda-persistent (auto may pick cpu: then it is moot)
run_cfx run "$T/iw.cfx" --in x=0 --in y=1 --in i=0 --persistent-mode fast
expect_rc 1 "bad persistent mode"
expect_err "cfx: --persistent-mode wants compiled or interp, got 'fast' (see cfx run --help)" "bad persistent mode"
run_cfx run "$T/iw.cfx" --in x=0 --in y=1 --in i=0 --backend cpu --persistent-mode interp
expect_rc 1 "persistent mode on cpu"
expect_err "cfx: --persistent-mode applies to the cuda-persistent backend, not cpu (see cfx run --help)" \
    "persistent mode on cpu"
run_cfx run "$T/iw.cfx" --in x=0 --in y=1 --in i=0 --persistent-mode interp
expect_rc 0 "persistent mode with auto"
expect_out "out = 5" "persistent mode with auto"

# ---- --out writes a valid .npy, which reads back as an input -----------------------------------
run_cfx run "$T/two.cfx" --in "x=[0.5, 1.25, 1.5]" --out "y=$T/y.npy"
expect_rc 0 "--out"
expect_out "tenth = 0.1" "--out result is not printed"
checks=$((checks + 1))
# numpy's exact header for float32 shape (3,): 10 prefix bytes + 118 header bytes, then data
want_hex="934e554d505901007600"
got_hex=$(head -c 10 "$T/y.npy" | od -An -tx1 | tr -d ' \n')
[ "$got_hex" = "$want_hex" ] || fail "--out prefix bytes $got_hex, expected $want_hex"
checks=$((checks + 1))
dict=$(head -c 128 "$T/y.npy" | tail -c 118)
case "$dict" in
"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"*) ;;
*) fail "--out header dict is [$dict]" ;;
esac
checks=$((checks + 1))
# 1.0f, 2.5f, 3.0f little-endian: 0x3f800000 0x40200000 0x40400000
data_hex=$(tail -c 12 "$T/y.npy" | od -An -tx1 | tr -d ' \n')
[ "$data_hex" = "0000803f0000204000004040" ] || fail "--out data bytes $data_hex"
checks=$((checks + 1))
[ "$(wc -c <"$T/y.npy")" -eq 140 ] || fail "--out file size $(wc -c <"$T/y.npy"), expected 140"
run_cfx run "$T/two.cfx" --in "x=$T/y.npy"
expect_rc 0 "a .npy input"
expect_out "y = [2, 5, 6]
tenth = 0.1" "the .npy written by --out reads back"
run_cfx run "$T/two.cfx" --in "x=$T/missing.npy"
expect_rc 1 "a missing .npy input"
expect_err "cfx: --in x: $T/missing.npy: cannot read: No such file or directory" "missing .npy"
run_cfx run "$T/two.cfx" --in "x=[1,2,3]" --out "y=$T/no/dir/y.npy"
expect_rc 1 "--out to a directory that does not exist"
expect_in "cannot write" err "--out failure"

# ---- random inputs ------------------------------------------------------------------------------
run_cfx run "$T/two.cfx" --graph ints --in a=random --in b=random --in c=random --seed 7
expect_rc 0 "random inputs"
first=$out
run_cfx run "$T/two.cfx" --graph ints --in c=random --in b=random --in a=random --seed 7
checks=$((checks + 1))
[ "$out" = "$first" ] || fail "random with one seed differs between runs: [$first] vs [$out]"
run_cfx run "$T/two.cfx" --graph ints --in a=random --in b=random --in c=random --seed 8
checks=$((checks + 1))
[ "$out" != "$first" ] || fail "random with another seed gave the same values"
checks=$((checks + 1))
for v in $(echo "$first" | head -1 | sed 's/^a2 = //' | tr -d '[],'); do
    if [ "$v" -lt 0 ] || [ "$v" -ge 100 ]; then fail "random i32 $v outside [0, 100)"; fi
done
run_cfx run "$T/two.cfx" --in x=random
expect_rc 0 "random reals"

# ---- profile and deadline ------------------------------------------------------------------------
# by hand: i = 0, 1, 2 are three iterations of the while on line 4 (of the graph at line 2)
run_cfx run "$T/iw.cfx" --in x=0 --in y=1 --in i=0 --profile --backend cpu
expect_rc 0 "--profile"
expect_out "out = 5" "--profile leaves the results as they are"
expect_in "profile of graph if_in_while ($T/iw.cfx) on cpu: " err "--profile's heading"
expect_in "by source line:" err "--profile by line"
expect_in "by record kind:" err "--profile by kind"
checks=$((checks + 1))
loop_row=$(printf '%s\n' "$err" | sed -n '/^loops/,$p' | awk '$1 == 4 {print $2}')
[ "$loop_row" = 3 ] || fail "--profile: the loop on line 4 has [$loop_row] iterations, expected 3: $err"
# a run stopped by its budget of 2: the profile counts the 2 iterations that ran, not the TICK
# that stopped it
run_cfx run "$T/iw.cfx" --in x=0 --in y=1 --in i=0 --profile --backend cpu --max-iters 2
expect_rc 3 "--profile of a stopped run"
checks=$((checks + 1))
loop_row=$(printf '%s\n' "$err" | sed -n '/^loops/,$p' | awk '$1 == 4 {print $2}')
[ "$loop_row" = 2 ] || fail "--profile of a stopped run: the loop on line 4 has [$loop_row] iterations, expected 2: $err"
run_cfx run "$T/iw.cfx" --in x=0 --in y=1 --in i=0 --profile=yes
expect_rc 1 "--profile takes no value"
# spin.cfx with x=0 never ends: the deadline cancels it and says where it stood
run_cfx run "$T/spin.cfx" --in x=0 --deadline 0.2 --backend cpu
expect_rc 3 "--deadline"
expect_in "$T/spin.cfx:" err "--deadline's status line"
expect_in "run stopped: cancelled: the deadline of 0.2 s passed" err "--deadline says it was the deadline"
expect_not_in "cancelled by the caller" err "--deadline is not the caller's cancel"
expect_in "cfx: the run stood at $T/spin.cfx:" err "--deadline says where the run stood"
run_cfx run "$T/spin.cfx" --in x=0 --deadline 0
expect_rc 1 "--deadline 0"
expect_in "--deadline wants seconds, a number above 0 and at most 1e6, got '0'" err "--deadline 0 is outside the range"
# no loop, but two products of 1024^3 multiply-adds (seconds each on the cpu executor's f64
# reference kernels; a CBLAS may take less than the deadline): the deadline stops the run inside
# the first one, at its line
printf 'graph big(x: f32) -> (y: f32) {\n  a = full([1024, 1024], x)\n  b = a @ a\n  c = b @ b\n  y = sum(c)\n}\n' >"$T/big.cfx"
run_cfx run "$T/big.cfx" --in x=0.001 --deadline 0.2 --backend cpu --accumulate f64
expect_rc 3 "--deadline in a graph with no loop"
expect_in "$T/big.cfx:3:3: run stopped: cancelled: the deadline of 0.2 s passed" err "--deadline inside a product"
expect_out "" "a run stopped by its deadline prints no results"
# a profile that cannot be written (stderr a full disk) is a failure, not exit 0
if [ -e /dev/full ]; then
    checks=$((checks + 1))
    timeout 60 "$CFX" run "$T/iw.cfx" --in x=0 --in y=1 --in i=0 --profile --backend cpu >/dev/null 2>/dev/full
    prc=$?
    [ "$prc" = 1 ] || fail "--profile to a full stderr: exit $prc, expected 1"
fi

# ---- what a new user's files hold (issue 36) -----------------------------------------------------
# a UTF-8 byte-order mark, a backslash continuation and a literal cast to i64 that i32 cannot hold:
# 3000000000 + 5 = 3000000005, and (2 + 3) * 4 = 20, by hand
printf '\xef\xbb\xbfgraph g(x: i64) -> (y: i64, z: i32) {\n  y = cast(3000000000, i64) + x\n  z = (2 + 3) \\\n      * 4\n}\n' >"$T/newuser.cfx"
run_cfx run "$T/newuser.cfx" --in x=5
expect_rc 0 "a byte-order mark, a backslash continuation, cast(3000000000, i64)"
expect_out "y = 3000000005
z = 20" "a byte-order mark, a backslash continuation, cast(3000000000, i64)"

# numpy's methods and x.T, as the ops they are; by hand for x = [[1, 5, 3], [4, 2, 6]]
cat >"$T/methods.cfx" <<'G'
graph g(x: f32[2, 3]) -> (s: f32, m: f32[3], t: f32[3, 2], c: f64[2, 3], k: f32[2, 3], a: i32[2]) {
  s = x.sum()
  m = x.max(0)
  t = x.T
  c = x.astype(f64)
  k = x.copy()
  a = x.argmax(axis=1)
}
G
run_cfx run "$T/methods.cfx" --in "x=[[1,5,3],[4,2,6]]"
expect_rc 0 "numpy's methods"
expect_out "s = 21
m = [4, 5, 6]
t = [[1, 4], [5, 2], [3, 6]]
c = [[1, 5, 3], [4, 2, 6]]
k = [[1, 5, 3], [4, 2, 6]]
a = [1, 2]" "numpy's methods: x.sum(), x.max(0), x.T, x.astype(f64), x.copy(), x.argmax(axis=1)"

# sum of bools counts the true ones: x > 2 holds for 3, 5 and 2.5
printf 'graph g(x: f32[5]) -> (n: i32) {\n  n = sum(x > 2.0)\n}\n' >"$T/count.cfx"
run_cfx run "$T/count.cfx" --in "x=[1,3,5,-1,2.5]"
expect_rc 0 "sum of bools"
expect_out "n = 3" "sum of bools counts the true ones"

# enumerate(x, 1) and start=: by hand for x = [1, 2, 3], s = 1*1 + 2*2 + 3*3 = 14 and
# t = (1 + 2 + 3) + (10 + 12) = 28 (the continue skips 11)
cat >"$T/enumerate.cfx" <<'G'
graph g(x: f32[3]) -> (s: f32, t: i32) {
  s = 0.0
  t = 0
  for i, v in enumerate(x, 1) {
    s = s + cast(i, f32) * v
    t = t + i
  }
  for k, w in enumerate(x, start=10) {
    if k == 11 {
      continue
    }
    t = t + k
  }
}
G
run_cfx run "$T/enumerate.cfx" --in "x=[1,2,3]"
expect_rc 0 "enumerate with a start"
expect_out "s = 14
t = 28" "enumerate(x, 1) and enumerate(x, start=10)"

# numpy's minimum, maximum, clip and isnan, as cfx's ops; by hand for x = [nan, 2, -1] (NaN
# propagates through minimum, maximum and clip, as numpy's do)
printf 'graph g(x: f32[3]) -> (a: bool[3], b: f32[3], c: f32[3], d: f32[3]) {\n  a = isnan(x)\n  b = clip(x, 0.0, 1.0)\n  c = maximum(x, 0.0)\n  d = minimum(x, 0.0)\n}\n' >"$T/numpy_names.cfx"
run_cfx run "$T/numpy_names.cfx" --in "x=[nan,2,-1]"
expect_rc 0 "numpy's function names"
expect_out "a = [true, false, false]
b = [nan, 1, 0]
c = [nan, 2, 0]
d = [nan, 0, -1]" "isnan, clip, maximum, minimum"

# ---- trace -------------------------------------------------------------------------------------
run_cfx run "$T/iw.cfx" --in x=0 --in y=1 --in i=0 --trace "$T/t.json"
expect_rc 0 "--trace"
checks=$((checks + 1))
grep -q traceEvents "$T/t.json" 2>/dev/null || fail "--trace wrote no trace events"

# every event leads to its source: args line and col, the position cfx dump prints for the
# record ("; LINE:COL"); the process and its thread have names (Perfetto shows them)
if command -v python3 >/dev/null; then
    run_cfx dump "$T/iw.cfx"
    printf '%s\n' "$out" >"$T/dump.txt"
    checks=$((checks + 1))
    python3 - "$T/t.json" "$T/dump.txt" <<'PY' || fail "--trace events do not lead to their source (above)"
import json, re, sys
doc = json.load(open(sys.argv[1]))
events = doc["traceEvents"]
# the dump's records: "     12  KIND  OPERANDS  ; LINE:COL"
pos = {}
for line in open(sys.argv[2]):
    m = re.match(r"\s*(\d+)\s+[A-Z_]+\b.*; (\d+):(\d+)\s*$", line)
    if m:
        pos[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
bad = []
spans = [e for e in events if e["ph"] == "X"]
if not spans or not pos:
    bad.append("no spans (%d) or no positions in the dump (%d)" % (len(spans), len(pos)))
for e in spans:
    a = e.get("args", {})
    if pos.get(a.get("record")) != (a.get("line"), a.get("col")):
        bad.append("%s: args %s, dump says %s" % (e["name"], a, pos.get(a.get("record"))))
meta = {(e["name"], e.get("tid")): e["args"]["name"] for e in events if e["ph"] == "M"}
if not meta.get(("process_name", 0), "").startswith("cfx cpu: graph if_in_while ("):
    bad.append("process name: %r" % meta.get(("process_name", 0)))
if meta.get(("thread_name", 0)) != "host":
    bad.append("thread name: %r" % meta.get(("thread_name", 0)))
for b in bad[:5]:
    print("FAIL:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
fi

# ---- output that cannot be written: a message and exit 1, never exit 0 with the output cut ------
printf 'graph big(n: i32) -> (x: f32[1000]) {\n  x = full(f32[1000], 1.5)\n}\n' >"$T/big.cfx"
printf 'graph loop(n: i32) -> (s: i32) {\n  s = 0\n  for i in range(0, n) {\n    s = s + i\n  }\n}\n' >"$T/loop.cfx"
if [ -w /dev/full ]; then
    for args in "run $T/big.cfx --in n=1" "--help" "--version" "dump $T/big.cfx" "run --help" "run $T/big.cfx --help"; do
        # shellcheck disable=SC2086
        timeout 60 "$CFX" $args >/dev/full 2>"$T/err"
        rc=$?
        err=$(cat "$T/err")
        expect_rc 1 "cfx $args >/dev/full"
        expect_in "cfx: cannot write the output: No space left on device" err "cfx $args >/dev/full"
    done
    run_cfx run "$T/loop.cfx" --in n=100 --trace /dev/full
    expect_rc 1 "--trace /dev/full"
    expect_err "cfx: cannot write the trace to /dev/full: No space left on device" "--trace /dev/full"
    expect_out "" "--trace /dev/full prints no results"
fi
# past a file size limit (SIGXFSZ ignored, as Python and many shells pass it on): the write
# fails with EFBIG instead of killing the process
(
    trap '' XFSZ
    ulimit -f 1 # 1024 bytes
    timeout 60 "$CFX" run "$T/big.cfx" --in n=1 >"$T/cut.txt" 2>"$T/err"
    echo $? >"$T/rc"
    timeout 60 "$CFX" run "$T/loop.cfx" --in n=1000 --trace "$T/cut.json" >"$T/out" 2>"$T/err2"
    echo $? >"$T/rc2"
)
rc=$(cat "$T/rc")
err=$(cat "$T/err")
expect_rc 1 "output past ulimit -f"
expect_err "cfx: cannot write the output: File too large" "output past ulimit -f"
rc=$(cat "$T/rc2")
err=$(cat "$T/err2")
expect_rc 1 "--trace past ulimit -f"
expect_err "cfx: cannot write the trace to $T/cut.json: File too large" "--trace past ulimit -f"

# ---- a run that needs more memory than there is says how much -----------------------------------
# (where cfx starts at all in 120 MB of address space: a sanitizer build reserves far more)
printf 'graph big() -> (s: f32) {\n  x = zeros(f32[50000000])\n  s = sum(x)\n}\n' >"$T/oom.cfx"
if { (ulimit -v 120000 && "$CFX" check "$T/oom.cfx") >/dev/null 2>&1; } 2>/dev/null; then
    (
        ulimit -v 120000 # 120 MB of address space; the run needs 200 MB
        timeout 60 "$CFX" run "$T/oom.cfx" --backend cpu >"$T/out" 2>"$T/err"
        echo $? >"$T/rc"
    )
    rc=$(cat "$T/rc")
    err=$(cat "$T/err")
    expect_rc 1 "a run past ulimit -v"
    expect_err "cfx: out of memory: a run of graph 'big' needs 200000128 bytes (191 MiB) at once, 200000032 of them for its values" \
        "a run past ulimit -v says what it needs (4 x 5e7 bytes of x, 32 of s, and the records)"
fi

# ---- the CUDA executors: a module that only a CUDA backend loads -------------------------------
IW="$T/iw.cfx --in x=0 --in y=1 --in i=0"
run_cfx --version
cuda_build=0
case "$out" in
*"CUDA executors: built (\`cfx backends\` says whether they load and find a device here)"*) cuda_build=1 ;;
*"CUDA executors: not built (cfx was built without CUDA)"*) ;;
*) fail "--version should say whether the CUDA executors were built: [$out]" ;;
esac
run_cfx backends
case "$out" in
*"CUDA executors: built"*) [ "$cuda_build" = 1 ] || fail "backends and --version disagree: [$out]" ;;
*"CUDA executors: not built (cfx was built without CUDA)"*) [ "$cuda_build" = 0 ] || fail "backends and --version disagree: [$out]" ;;
*) fail "backends should say whether the CUDA executors were built: [$out]" ;;
esac
# A machine with no CUDA driver at all (the CUDA runtime calls that an insufficient driver) is told
# so plainly, where the runtime loads
if [ "$cuda_build" = 1 ] && ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    run_cfx run $IW --backend cuda-persistent
    case "$err" in
    *"the CUDA executors cannot be loaded"*) ;; # no runtime either: that is the reason given
    *) expect_in "no CUDA driver is installed (libcuda.so.1 cannot be loaded)" err \
           "a machine without a CUDA driver says there is none" ;;
    esac
fi
# The dynamic loader's own account of what it maps (LD_DEBUG=files names every object):
# check, dump, --help, --version and a cpu run map nothing of CUDA.
maps_cuda() { grep -qE 'file=[^ ]*(libcudart|libcublas|libnvrtc|libcfx_cuda)' "$T/err"; }
for args in "check $T/iw.cfx" "dump $T/iw.cfx" "--help" "--version" "run $IW --backend cpu"; do
    # shellcheck disable=SC2086
    LD_DEBUG=files "$CFX" $args >"$T/out" 2>"$T/err"
    rc=$?
    expect_rc 0 "cfx $args under LD_DEBUG"
    checks=$((checks + 1))
    if maps_cuda; then fail "cfx $args loads CUDA: $(grep -E 'file=.*(cuda|cublas|nvrtc)' "$T/err" | head -3)"; fi
done
if [ "$cuda_build" = 1 ]; then
    # the control: backends loads the module, and the check above would have seen it
    LD_DEBUG=files "$CFX" backends >"$T/out" 2>"$T/err"
    checks=$((checks + 1))
    maps_cuda || fail "LD_DEBUG=files shows no CUDA module even for backends; the check above proves nothing"

    # nothing that links libcfx depends on CUDA or the C++ runtime; the module does
    lib=$(dirname "$CFX")/libcfx.so
    module=$(cd "$(dirname "$CFX")" && pwd -P)/libcfx_cuda.so
    if command -v readelf >/dev/null; then
        for f in "$CFX" "$lib"; do
            checks=$((checks + 1))
            needs=$(readelf -d "$f" | grep NEEDED)
            case "$needs" in
            *libcudart* | *libcublas* | *libnvrtc* | *libstdc++*) fail "$f depends on [$needs]" ;;
            esac
        done
        checks=$((checks + 1))
        readelf -d "$module" | grep NEEDED | grep -q libcublas || fail "$module does not depend on cuBLAS"
    fi

    # CUDA libraries that cannot be loaded (a file of garbage under each name the module
    # needs): everything but a CUDA backend works, and auto and backends say why
    mkdir "$T/broken"
    for so in $(readelf -d "$module" | sed -n 's/.*NEEDED.*\[\(libcu[^]]*\)\]/\1/p'); do
        echo garbage >"$T/broken/$so"
    done
    LD_LIBRARY_PATH="$T/broken" run_cfx check "$T/iw.cfx"
    expect_rc 0 "check with broken CUDA libraries"
    expect_err "" "check with broken CUDA libraries"
    LD_LIBRARY_PATH="$T/broken" run_cfx run $IW --backend cpu
    expect_rc 0 "cpu run with broken CUDA libraries"
    expect_out "out = 5" "cpu run with broken CUDA libraries"
    LD_LIBRARY_PATH="$T/broken" run_cfx run $IW
    expect_rc 0 "auto with broken CUDA libraries"
    expect_out "out = 5" "auto with broken CUDA libraries"
    LD_LIBRARY_PATH="$T/broken" run_cfx run $IW --backend auto
    expect_in "cfx: backend cpu (the CUDA executors cannot be loaded: $T/broken/" err "auto with broken CUDA libraries"
    expect_in "(libcfx_cuda.so, or a library it needs, is broken or of another CUDA version)" err "auto with broken CUDA libraries"
    LD_LIBRARY_PATH="$T/broken" run_cfx run $IW --backend cuda-host
    expect_rc 1 "cuda-host with broken CUDA libraries"
    expect_in "cfx: backend cuda-host is not available: the CUDA executors cannot be loaded: " err "cuda-host with broken CUDA libraries"
    LD_LIBRARY_PATH="$T/broken" run_cfx backends
    expect_rc 0 "backends with broken CUDA libraries"
    expect_in "CUDA executors: built, but they cannot be loaded: $T/broken/" out "backends with broken CUDA libraries"
    expect_in "  cuda-host        cannot be loaded (above)" out "backends with broken CUDA libraries"
    LD_LIBRARY_PATH="$T/broken" run_cfx --version
    expect_rc 0 "--version with broken CUDA libraries (it loads nothing)"

    # A stand-in runtime that reports one device (tests/fake_cudart.c), so the loader goes on
    # to the module as it would on a machine with a GPU: a missing module, one from another
    # build, a library that is no module, and the real module against a runtime it does not
    # match are each refused with their reason, and auto runs on the cpu.
    fake="$BIN/fake_cuda"
    CFX_CUDA_MODULE="$T/nothere.so" LD_LIBRARY_PATH="$fake" run_cfx run $IW --backend auto
    expect_rc 0 "auto without the module"
    expect_out "out = 5" "auto without the module"
    expect_in "cfx: backend cpu (the CUDA executors cannot be loaded: $T/nothere.so: cannot open shared object file" err "auto without the module"
    expect_in "CFX_CUDA_MODULE may name another path" err "auto without the module"
    CFX_CUDA_MODULE="$T/nothere.so" LD_LIBRARY_PATH="$fake" run_cfx run $IW --backend cuda-persistent
    expect_rc 1 "cuda-persistent without the module"
    expect_in "cfx: backend cuda-persistent is not available: the CUDA executors cannot be loaded: $T/nothere.so: " err "cuda-persistent without the module"
    CFX_CUDA_MODULE="$T/nothere.so" run_cfx backends
    expect_rc 0 "backends without the module"
    expect_in "CUDA executors: built, but they cannot be loaded: $T/nothere.so: cannot open shared object file" out "backends without the module"
    CFX_CUDA_MODULE="$BIN/libfake_module.so" LD_LIBRARY_PATH="$fake" run_cfx run $IW --backend auto
    expect_out "out = 5" "auto with a module of another build"
    expect_in "libfake_module.so belongs to another build of cfx (1.0, module interface " err "auto with a module of another build"
    CFX_CUDA_MODULE="$BIN/libfake_module.so" run_cfx backends
    expect_in "libfake_module.so belongs to another build of cfx" out "backends with a module of another build"
    CFX_CUDA_MODULE="$lib" LD_LIBRARY_PATH="$fake" run_cfx run $IW --backend cuda-graph
    expect_rc 1 "cuda-graph with a library that is no module"
    expect_in "libcfx.so is not a cfx CUDA module (it has no cfx_cuda_module)" err "a library that is no module"
    LD_LIBRARY_PATH="$fake" run_cfx run $IW --backend auto
    expect_out "out = 5" "auto with a runtime the module does not match"
    expect_in "cfx: backend cpu (the CUDA executors cannot be loaded: $module: undefined symbol: " err "auto with a runtime the module does not match"
    expect_in "is broken or of another CUDA version)" err "auto with a runtime the module does not match"
fi

finish
