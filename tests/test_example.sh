#!/bin/bash
# test_example.sh: installs the build tree into a temporary prefix, then builds the example
# application in tests/example/ against it twice, with CMake's find_package(cfx) and with
# pkg-config's flags, and runs both.
# Usage: bash test_example.sh CFX_BINARY SOURCE_DIR BINARY_DIR (BINARY_DIR is build/tests)
CFX=$1
SRC=$2
BIN=$3
ROOT=$(cd "$BIN/.." && pwd)
T=$(mktemp -d "${BIN:-/tmp}/test_example.XXXXXX")
trap 'rm -rf "$T"' EXIT

die() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$ROOT" --prefix "$T/prefix" >"$T/install.log" 2>&1 ||
    die "cmake --install failed (is the whole build tree built?): $(tail -5 "$T/install.log")"
[ -f "$T/prefix/include/cfx.h" ] || die "cfx.h was not installed"
[ -x "$T/prefix/bin/cfx" ] || die "the cfx command was not installed"

# A library built with sanitizers needs the application built with the same runtime.
san=""
grep -q '^CFX_SANITIZE:BOOL=ON' "$ROOT/CMakeCache.txt" 2>/dev/null && san="-fsanitize=address,undefined"
grep -q '^CFX_TSAN:BOOL=ON' "$ROOT/CMakeCache.txt" 2>/dev/null && san="-fsanitize=thread"

# 1. CMake: find_package(cfx REQUIRED)
cmake -S "$SRC/tests/example" -B "$T/build" -DCMAKE_PREFIX_PATH="$T/prefix" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san" \
    >"$T/configure.log" 2>&1 ||
    die "configuring the example failed: $(tail -20 "$T/configure.log")"
cmake --build "$T/build" >"$T/build.log" 2>&1 || die "building the example failed: $(tail -20 "$T/build.log")"
"$T/build/example" >"$T/run.log" 2>&1 || die "the example (CMake build) failed: $(cat "$T/run.log")"
grep -q "example: out = 5, w = \[6, 11, 3.5\]" "$T/run.log" || die "unexpected output: $(cat "$T/run.log")"
grep -q "run stopped: limit: iteration budget of 2 spent" "$T/run.log" ||
    die "the budget line is missing: $(cat "$T/run.log")"
grep -q "^example: ok$" "$T/run.log" || die "the example did not say ok: $(cat "$T/run.log")"

# 2. pkg-config
if ! command -v pkg-config >/dev/null; then
    echo "test_example: CMake build ok; pkg-config is not installed, that part is skipped"
    exit 0
fi
pc=$(find "$T/prefix" -name cfx.pc | head -1)
[ -n "$pc" ] || die "cfx.pc was not installed"
# cfx.pc finds its prefix from where it lies, so an install with --prefix needs nothing more
pkgconf() { PKG_CONFIG_PATH=$(dirname "$pc") pkg-config "$@"; }
flags=$(pkgconf --cflags --libs cfx) || die "pkg-config cfx failed"
libdir=$(pkgconf --variable=libdir cfx)
# shellcheck disable=SC2086
cc -std=c11 -Wall -Werror $san "$SRC/tests/example/example.c" $flags -o "$T/example-pc" 2>"$T/cc.log" ||
    die "compiling with pkg-config flags ($flags) failed: $(cat "$T/cc.log")"
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$T/example-pc" >"$T/run2.log" 2>&1 ||
    die "the example (pkg-config build) failed: $(cat "$T/run2.log")"
grep -q "^example: ok$" "$T/run2.log" || die "the pkg-config build did not say ok: $(cat "$T/run2.log")"
echo "test_example: CMake and pkg-config builds of the example both ok"
