# cli_lib.sh: what the command-line tests share (test_cli.sh, test_malformed.sh,
# test_threads_cli.sh). Each sources it first, with its name and its own arguments:
#   . "$(dirname "$0")/cli_lib.sh" NAME "$@"     (CFX_BINARY SOURCE_DIR BINARY_DIR)
# and gets CFX, SRC, BIN; T, a scratch folder; the counters checks and fails; fail; run_cfx;
# and finish, its last command. (Not named test_*.sh: tests/CMakeLists.txt runs those.)
CLI_NAME=$1
CFX=$2
SRC=$3
BIN=$4
# scratch in the build tree, emptied first: a run killed at its timeout leaves nothing behind
# in the system's temporary folder, and the next run removes what it left
T=${BIN:+$BIN/work/$CLI_NAME}
T=${T:-$(mktemp -d)}
rm -rf "$T" && mkdir -p "$T" || exit 1
trap 'rm -rf "$T"' EXIT
fails=0
checks=0

fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# run_cfx ARGS...: runs cfx (with a timeout) and sets rc, out, err
run_cfx() {
    timeout 60 "$CFX" "$@" >"$T/out" 2>"$T/err"
    rc=$?
    out=$(cat "$T/out")
    err=$(cat "$T/err")
}

# finish: the count of checks passed and failed; exits 0 only when none failed
finish() {
    echo "$CLI_NAME: $((checks - fails)) passed, $fails failed"
    [ "$fails" = 0 ]
}
