#!/bin/bash
# test_diagnostics.sh: `cfx check` on every tests/diag/*.cfx prints exactly the errors the
# file's `# error: ` comment lines give, in order, each followed by its source line and a caret
# under its column (the spec's format), and nothing else, and exits 1.
# Usage: bash test_diagnostics.sh CFX_BINARY SOURCE_DIR BINARY_DIR
CFX=$1
SRC=$2
BIN=$3
[ -x "$CFX" ] || { echo "no cfx binary at $CFX: skipped"; exit 77; }
# scratch in the build tree, emptied first: a run killed at its timeout leaves nothing behind
# in the system's temporary folder, and the next run removes what it left
T=${BIN:+$BIN/work/test_diagnostics}
T=${T:-$(mktemp -d)}
rm -rf "$T" && mkdir -p "$T" || exit 1
trap 'rm -rf "$T"' EXIT
cd "$SRC" || exit 1
fails=0
checks=0
for f in tests/diag/*.cfx; do
    checks=$((checks + 1))
    # The expected stderr: each `# error: FILE:LINE:COL: ...` line, then source line LINE,
    # then spaces up to COL and a caret.
    : >"$T/want"
    grep '^# error: ' "$f" | sed 's/^# error: //' | while IFS= read -r msg; do
        line=$(printf '%s\n' "$msg" | cut -d: -f2)
        col=$(printf '%s\n' "$msg" | cut -d: -f3)
        src=$(sed -n "${line}p" "$f")
        printf '%s\n%s\n%*s^\n' "$msg" "$src" $((col - 1)) "" >>"$T/want"
    done
    timeout 60 "$CFX" check "$f" >"$T/out" 2>"$T/err"
    rc=$?
    if [ "$rc" != 1 ]; then
        echo "FAIL: $f: exit $rc, expected 1" >&2
        fails=$((fails + 1))
    elif [ -s "$T/out" ]; then
        echo "FAIL: $f: printed on stdout: $(cat "$T/out")" >&2
        fails=$((fails + 1))
    elif ! cmp -s "$T/want" "$T/err"; then
        echo "FAIL: $f: stderr differs (expected, then got):" >&2
        diff "$T/want" "$T/err" >&2
        fails=$((fails + 1))
    fi
done
echo "test_diagnostics: $((checks - fails)) passed, $fails failed"
[ "$fails" = 0 ]
