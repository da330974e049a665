#!/bin/bash
# test_example.sh: installs the build tree into a temporary prefix, then builds the example
# application in tests/example/ against it three times, with CMake's find_package(cfx), with
# pkg-config's flags and the rpath the README gives, and statically with pkg-config --static,
# and runs each. In a build with CUDA it also checks that the CUDA module is installed beside
# the library, that the installed library and command find it there, and that no build of
# the example depends on a CUDA library.
# Usage: bash test_example.sh CFX_BINARY SOURCE_DIR BINARY_DIR (BINARY_DIR is build/tests)
CFX=$1
SRC=$2
BIN=$3
ROOT=$(cd "$BIN/.." && pwd)
# scratch in the build tree, emptied first: a run killed at its timeout leaves nothing behind
# in the system's temporary folder, and the next run removes what it left
T=${BIN:+$BIN/work/test_example}
T=${T:-$(mktemp -d)}
rm -rf "$T" && mkdir -p "$T" || exit 1
trap 'rm -rf "$T"' EXIT

die() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$ROOT" --prefix "$T/prefix" >"$T/install.log" 2>&1 ||
    die "cmake --install failed (is the whole build tree built?): $(tail -5 "$T/install.log")"
[ -f "$T/prefix/include/cfx.h" ] || die "cfx.h was not installed"
[ -x "$T/prefix/bin/cfx" ] || die "the cfx command was not installed"

T=$(cd "$T" && pwd -P)
P=$T/prefix
lib=$(dirname "$(find "$P" -name 'libcfx.so' | head -1)")
[ -n "$lib" ] || die "libcfx.so was not installed"
cuda=0
case "$("$CFX" --version)" in *"CUDA executors: built"*) cuda=1 ;; esac
fake="$BIN/fake_cuda" # a CUDA runtime that reports one device and has nothing else
# no_cuda_deps FILE: FILE names no CUDA library and no C++ runtime among what it needs
no_cuda_deps() {
    command -v readelf >/dev/null || return 0
    local needs
    needs=$(readelf -d "$1" | grep NEEDED)
    case "$needs" in
    *libcudart* | *libcublas* | *libnvrtc* | *libstdc++*) die "$1 depends on [$needs]" ;;
    esac
}
# finds_module PROGRAM: with a runtime that reports a device, PROGRAM goes on to load the
# installed module (which then refuses that runtime): proof that it looked beside libcfx
finds_module() {
    [ "$cuda" = 1 ] || return 0
    LD_LIBRARY_PATH="$fake" "$@" >"$T/fake.log" 2>&1
    grep -q "cannot be loaded: $P/.*libcfx_cuda.so: undefined symbol: " \
        "$T/fake.log" || die "$* did not load the installed module $lib/libcfx_cuda.so: $(cat "$T/fake.log")"
}
if [ "$cuda" = 1 ]; then
    [ -f "$lib/libcfx_cuda.so" ] || die "the CUDA module was not installed beside libcfx.so in $lib"
    "$P/bin/cfx" backends >"$T/version.log" 2>&1 || die "the installed cfx backends failed"
    grep -q "CUDA executors: built with CUDA .*, loaded from $lib/libcfx_cuda.so" "$T/version.log" ||
        die "the installed cfx does not load the installed module: $(cat "$T/version.log")"
fi
no_cuda_deps "$P/bin/cfx"
no_cuda_deps "$lib/libcfx.so"

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
no_cuda_deps "$T/build/example"
finds_module "$T/build/example"

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
[ "$(cd "$libdir" && pwd -P)" = "$lib" ] || die "pkg-config's libdir $libdir is not $lib"
# the README's recipe for a prefix outside the system's library path: the rpath, no
# LD_LIBRARY_PATH
# shellcheck disable=SC2086
cc -std=c11 -Wall -Werror $san "$SRC/tests/example/example.c" $flags -Wl,-rpath,"$libdir" \
    -o "$T/example-pc" 2>"$T/cc.log" ||
    die "compiling with pkg-config flags ($flags) failed: $(cat "$T/cc.log")"
"$T/example-pc" >"$T/run2.log" 2>&1 || die "the example (pkg-config build) failed: $(cat "$T/run2.log")"
grep -q "^example: ok$" "$T/run2.log" || die "the pkg-config build did not say ok: $(cat "$T/run2.log")"
no_cuda_deps "$T/example-pc"
finds_module "$T/example-pc"

# static: libcfx.a with what pkg-config --static adds (-l:libcfx.a picks the archive)
static=$(pkgconf --static --libs cfx) || die "pkg-config --static cfx failed"
# shellcheck disable=SC2086
cc -std=c11 -Wall -Werror $san "$SRC/tests/example/example.c" $(pkgconf --cflags cfx) \
    ${static/-lcfx/-l:libcfx.a} -Wl,-rpath,"$libdir" -o "$T/example-static" 2>"$T/cc2.log" ||
    die "a static link with pkg-config --static ($static) failed: $(cat "$T/cc2.log")"
"$T/example-static" >"$T/run3.log" 2>&1 || die "the example (static build) failed: $(cat "$T/run3.log")"
grep -q "^example: ok$" "$T/run3.log" || die "the static build did not say ok: $(cat "$T/run3.log")"
no_cuda_deps "$T/example-static"
# a static program finds the module by its RUNPATH, which the sanitizers' dlopen wrapper hides
[ -n "$san" ] || finds_module "$T/example-static"
echo "test_example: CMake, pkg-config and static builds of the example all ok"
