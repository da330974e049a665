#!/bin/bash
# test_malformed.sh: no input, however malformed, crashes or hangs cfx. Truncated files,
# random bytes, deep nesting, huge literals and shapes, broken .npy inputs and bad values:
# each must end with a message on stderr and exit 1 (0 is allowed only where the input may
# happen to be valid, as for a prefix of a good file). A crash is exit >= 128, a hang is the
# timeout's 124.
# Usage: bash test_malformed.sh CFX_BINARY SOURCE_DIR BINARY_DIR
. "$(dirname "$0")/cli_lib.sh" test_malformed "$@"

# must_refuse DESCRIPTION ARGS...: exit 1 with a message
must_refuse() {
    local what=$1
    shift
    checks=$((checks + 1))
    timeout 20 "$CFX" "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    if [ $rc -ne 1 ]; then
        fail "$what: exit $rc (want 1; 124 is a hang, >= 128 a crash): $(head -c 300 "$T/err")"
    elif [ ! -s "$T/err" ]; then
        fail "$what: exit 1 without a message"
    fi
}
# may_pass DESCRIPTION ARGS...: exit 0, or exit 1 with a message
may_pass() {
    local what=$1
    shift
    checks=$((checks + 1))
    timeout 20 "$CFX" "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
        fail "$what: exit $rc (124 is a hang, >= 128 a crash): $(head -c 300 "$T/err")"
    elif [ $rc -eq 1 ] && [ ! -s "$T/err" ]; then
        fail "$what: exit 1 without a message"
    fi
}

cat >"$T/good.cfx" <<'G'
# a file that uses most of the syntax, cut at every byte below
graph g(x: f32[4], n: i32) -> (s: f32, k: i32) {
  s = 0.0
  k = 0
  for i in range(0, n) {
    if i % 2 == 0 and i < 4 { s = s + x[i] } elif i == 3 { continue } else { s = s - 1.5e-1 }
    switch k { case 0 { k = 1 } case 1 { k = 2 } default { break } }
  }
  while s > 100.0 { s = s / 2.0 }
  assert(k >= 0, "k \"is\" negative")
  print(s, "s")
}
G

# ---- every prefix of a valid file ----------------------------------------------------------------
len=$(wc -c <"$T/good.cfx")
for ((cut = 0; cut < len; cut++)); do
    head -c $cut "$T/good.cfx" >"$T/cut.cfx"
    may_pass "good.cfx cut at byte $cut" check "$T/cut.cfx"
done
may_pass "the whole file" check "$T/good.cfx"
checks=$((checks + 1))
timeout 20 "$CFX" check "$T/good.cfx" 2>"$T/err" || fail "good.cfx must compile: $(cat "$T/err")"

# ---- random bytes (deterministic: an LCG in awk), and bytes mixed into the good file ----------------
for seed in $(seq 1 60); do
    awk -v seed=$seed 'BEGIN { s = seed; n = 50 + (seed * 37) % 400;
        for (i = 0; i < n; i++) { s = (s * 1103515245 + 12345) % 2147483648;
            printf "%c", 1 + int(s / 65536) % 255 } }' >"$T/rand.cfx"
    must_refuse "random bytes, seed $seed" check "$T/rand.cfx"
done
for seed in $(seq 1 40); do
    # replace one byte of the good file by a random one: often still valid, never a crash
    pos=$(( (seed * 7919) % len ))
    byte=$(( (seed * 104729) % 94 + 33 ))
    { head -c $pos "$T/good.cfx"; printf "\\$(printf %03o $byte)"; tail -c +$((pos + 2)) "$T/good.cfx"; } >"$T/mut.cfx"
    may_pass "good.cfx with byte $pos changed" run "$T/mut.cfx" --in "x=[1,2,3,4]" --in n=6
done
printf '\0\0\0\0graph' >"$T/nul.cfx"
must_refuse "NUL bytes" check "$T/nul.cfx"
: >"$T/empty.cfx"
must_refuse "an empty file" check "$T/empty.cfx"
must_refuse "a directory" check "$T"
must_refuse "a missing file" check "$T/none.cfx"

# ---- deep nesting ------------------------------------------------------------------------------
{
    echo "graph f(x: i32) -> (y: i32) {"
    echo "  y = x"
    for ((i = 0; i < 10000; i++)); do echo "if x < $i {"; done
    for ((i = 0; i < 10000; i++)); do echo "}"; done
    echo "}"
} >"$T/nest.cfx"
must_refuse "10,000 nested ifs" check "$T/nest.cfx"
{
    echo "graph f(x: i32) -> (y: i32) {"
    printf '  y = '
    for ((i = 0; i < 10000; i++)); do printf '('; done
    printf 'x'
    for ((i = 0; i < 10000; i++)); do printf ')'; done
    echo
    echo "}"
} >"$T/paren.cfx"
must_refuse "10,000 nested parentheses" check "$T/paren.cfx"
{
    echo "graph f(x: i32) -> (y: i32) {"
    for ((i = 0; i < 10000; i++)); do printf '{'; done
    echo
    echo "}"
} >"$T/brace.cfx"
must_refuse "10,000 open braces" check "$T/brace.cfx"

# ---- huge literals and shapes --------------------------------------------------------------------
digits=$(printf '9%.0s' $(seq 1 10000))
printf 'graph f() -> (y: i64) {\n  y = %s\n}\n' "$digits" >"$T/bigint.cfx"
must_refuse "a 10,000-digit integer" check "$T/bigint.cfx"
printf 'graph f() -> (y: f64) {\n  y = cast(1e999, f64)\n}\n' >"$T/bigreal.cfx"
must_refuse "a real that overflows" check "$T/bigreal.cfx"
printf 'graph f(x: f32[100000, 100000, 100000]) -> (y: f32) {\n  y = sum(x)\n}\n' >"$T/bigshape.cfx"
must_refuse "a huge shape" check "$T/bigshape.cfx"
printf 'graph f() -> (y: f32[65536, 65536]) {\n  y = zeros(f32[65536, 65536])\n}\n' >"$T/bigzeros.cfx"
must_refuse "a huge zeros" check "$T/bigzeros.cfx"
printf 'graph f(x: f32[1, 1, 1, 1, 1, 1]) -> (y: f32) {\n  y = sum(x)\n}\n' >"$T/rank6.cfx"
must_refuse "rank 6" check "$T/rank6.cfx"

# ---- hostile text: what reaches the terminal stays small and printable ---------------------------
# two errors on a 10 MB line: each echoes a window of the line, not the line
{ printf 'graph f(x: i32) -> (y: i32) {\n  y = x + $'; head -c 10000000 /dev/zero | tr '\0' 'a'; printf ' $\n}\n'; } >"$T/longline.cfx"
must_refuse "errors on a 10 MB line" check "$T/longline.cfx"
checks=$((checks + 1))
[ "$(wc -c <"$T/err")" -lt 2000 ] || fail "errors on a 10 MB line: $(wc -c <"$T/err") bytes on stderr"
# binary input: every byte of the messages prints (or is a tab or a newline)
for seed in 3 7 11; do
    awk -v seed=$seed 'BEGIN { s = seed; printf "graph f() -> (y: i32) {\n  y = 1 ";
        for (i = 0; i < 3000; i++) { s = (s * 1103515245 + 12345) % 2147483648;
            printf "%c", 1 + int(s / 65536) % 255 } printf "\n}\n" }' >"$T/bin.cfx"
    must_refuse "binary input, seed $seed" check "$T/bin.cfx"
    checks=$((checks + 1))
    if LC_ALL=C grep -q '[^[:print:][:space:]]' "$T/err" || LC_ALL=C grep -q $'[\r\v\f]' "$T/err"; then
        fail "binary input, seed $seed: a byte that does not print reached stderr"
    fi
done

# ---- bad values on the command line --------------------------------------------------------------
printf 'graph v(x: i32[2, 2], f: f32) -> (s: i32) {\n  s = sum(x)\n}\n' >"$T/v.cfx"
must_refuse "--in digits" run "$T/v.cfx" --in "x=[[1,2],[3,$digits]]" --in f=1
must_refuse "--in a huge real" run "$T/v.cfx" --in "x=[[1,2],[3,4]]" --in f=1e999
deep=$(printf '[%.0s' $(seq 1 10000))
must_refuse "--in 10,000 brackets" run "$T/v.cfx" --in "x=$deep" --in f=1
must_refuse "--in unclosed" run "$T/v.cfx" --in "x=[[1,2],[3,4]" --in f=1
must_refuse "--in garbage" run "$T/v.cfx" --in "x=][" --in f=1
must_refuse "--in empty" run "$T/v.cfx" --in "x=" --in f=1

# ---- malformed .npy inputs -----------------------------------------------------------------------
npy() { # npy FILE DICT DATA-BYTES(printf escapes): a 1.0 file with a 64-byte-aligned header
    local dict=$2 pad
    pad=$(( (64 - (10 + ${#dict} + 1) % 64) % 64 ))
    { printf '\223NUMPY\001\000'; printf "\\$(printf %03o $(( (${#dict} + 1 + pad) % 256 )))\\$(printf %03o $(( (${#dict} + 1 + pad) / 256 )))";
      printf '%s' "$dict"; printf "%${pad}s" ''; printf '\n'; printf "$3"; } >"$1"
}
ok_dict="{'descr': '<f4', 'fortran_order': False, 'shape': (), }"
npy "$T/ok.npy" "$ok_dict" '\000\000\200\077'
checks=$((checks + 1))
timeout 20 "$CFX" run "$T/v.cfx" --in "x=[[1,2],[3,4]]" --in "f=$T/ok.npy" >"$T/out" 2>"$T/err" ||
    fail "a valid hand-made .npy is refused: $(cat "$T/err")"
npy "$T/magic.npy" "$ok_dict" '\000\000\200\077'
printf 'X' | dd of="$T/magic.npy" bs=1 seek=1 conv=notrunc 2>/dev/null
must_refuse ".npy with bad magic" run "$T/v.cfx" --in "x=[[1,2],[3,4]]" --in "f=$T/magic.npy"
size=$(wc -c <"$T/ok.npy")
for ((cut = 0; cut < size; cut++)); do
    head -c $cut "$T/ok.npy" >"$T/cut.npy"
    must_refuse ".npy cut at byte $cut" run "$T/v.cfx" --in "x=[[1,2],[3,4]]" --in "f=$T/cut.npy"
done
npy "$T/f8.npy" "{'descr': '<f8', 'fortran_order': False, 'shape': (), }" '\000\000\000\000\000\000\360\077'
must_refuse ".npy of another dtype" run "$T/v.cfx" --in "x=[[1,2],[3,4]]" --in "f=$T/f8.npy"
npy "$T/fo.npy" "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 2), }" '\001\000\000\000\002\000\000\000\003\000\000\000\004\000\000\000'
must_refuse ".npy in fortran order" run "$T/v.cfx" --in "x=$T/fo.npy" --in f=1
npy "$T/shape.npy" "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }" '\001\000\000\000\002\000\000\000\003\000\000\000\004\000\000\000'
must_refuse ".npy of another shape" run "$T/v.cfx" --in "x=$T/shape.npy" --in f=1
npy "$T/huge.npy" "{'descr': '<i4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }" ''
must_refuse ".npy with a huge declared shape" run "$T/v.cfx" --in "x=$T/huge.npy" --in f=1
npy "$T/dict.npy" "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), 'extra': 1}" ''
must_refuse ".npy with an unknown key" run "$T/v.cfx" --in "x=$T/dict.npy" --in f=1
npy "$T/dict2.npy" "not a dict at all" ''
must_refuse ".npy with a broken header" run "$T/v.cfx" --in "x=$T/dict2.npy" --in f=1
awk 'BEGIN { s = 99; printf "\223NUMPY\001\000"; for (i = 0; i < 300; i++) {
    s = (s * 1103515245 + 12345) % 2147483648; printf "%c", 1 + int(s / 65536) % 255 } }' >"$T/rand.npy"
must_refuse ".npy of random bytes" run "$T/v.cfx" --in "x=$T/rand.npy" --in f=1
must_refuse ".npy that is a directory" run "$T/v.cfx" --in "x=$T/dir.npy" --in f=1
mkdir -p "$T/d.npy"
must_refuse ".npy that is a directory" run "$T/v.cfx" --in "x=$T/d.npy" --in f=1

finish
