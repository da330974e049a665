#!/bin/bash
# test_configure.sh: with the CUDA toolkit where CUDA installs it (/usr/local/cuda) but nvcc
# on no directory of PATH, configuring finds the toolkit and says so, rather than building
# the cpu executor alone in silence. Skipped (77) where /usr/local/cuda/bin/nvcc is absent.
# Usage: bash test_configure.sh CFX_BINARY SOURCE_DIR BINARY_DIR
SRC=$2
BIN=$3
[ -x /usr/local/cuda/bin/nvcc ] || { echo "test_configure: no /usr/local/cuda/bin/nvcc, skipped"; exit 77; }
# scratch in the build tree, emptied first: a run killed at its timeout leaves nothing behind
# in the system's temporary folder, and the next run removes what it left
T=${BIN:+$BIN/work/test_configure}
T=${T:-$(mktemp -d)}
rm -rf "$T" && mkdir -p "$T" || exit 1
trap 'rm -rf "$T"' EXIT
die() { echo "FAIL: $*" >&2; exit 1; }

cmake=$(command -v cmake) || die "cmake is not on PATH"
path=""
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
    [ -n "$d" ] && [ ! -e "$d/nvcc" ] && path="$path${path:+:}$d"
done
env -u CUDACXX -u CUDA_PATH -u CUDA_HOME PATH="$path" "$cmake" -S "$SRC" -B "$T/b" -DCFX_TESTS=OFF \
    >"$T/log" 2>&1 || die "configuring failed: $(tail -20 "$T/log")"
grep -q "cfx: nvcc is not on PATH; using /usr/local/cuda/bin/nvcc" "$T/log" ||
    die "configuring without nvcc on PATH did not say where it found nvcc: $(grep cfx: "$T/log")"
grep -q "cfx: building the CUDA executors" "$T/log" ||
    die "configuring without nvcc on PATH did not build the CUDA executors: $(grep cfx: "$T/log")"
echo "test_configure: found /usr/local/cuda/bin/nvcc with PATH=$path"
