#!/usr/bin/env bash
# device_deps.sh: protobuf-c for a lent GPU machine, which has the CUDA toolkit, PyTorch, onnx
# and onnxruntime but no protobuf-c and no way to install it (nothing there reaches a registry).
# Without protobuf-c the build there leaves out the ONNX importer, and the device checks of
# issue 30 (ONNX's control-flow node tests on every executor, onnx_bench.py) cannot run.
#
#   bash profiling/device_deps.sh fetch          here: Debian's packages into .devdeps/ (ignored
#                                                by git; about 2 MB); then name .devdeps in the
#                                                device call's carry
#   bash profiling/device_deps.sh unpack DIR     there: unpacks .devdeps/*.deb into DIR (never
#                                                into /) when protoc-c or protobuf-c.h is missing,
#                                                and prints the lines to eval: PATH,
#                                                LD_LIBRARY_PATH and CMAKE_PREFIX_PATH, which
#                                                CMake's find_program/find_path/find_library read
#
# tensor_check.sh, gpu_check.sh and gpu_round.sh call `unpack` themselves when .devdeps/ holds
# packages. The onnx.proto comes from the onnx wheel there (CMakeLists.txt looks for it).
# Exit status: 0 done (or nothing needed), 1 a step failed, 2 a bad command line.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps="$root/.devdeps"
# protoc-c and its libraries (libprotoc, libprotobuf), the C runtime library and its header
packages="protobuf-c-compiler libprotobuf-c-dev libprotobuf-c1 libprotoc32 libprotobuf32"

case "${1:-}" in
fetch)
    command -v apt-get >/dev/null || { echo "device_deps: fetch needs apt-get (Debian, Ubuntu)" >&2; exit 1; }
    mkdir -p "$deps"
    # apt-get download writes into the current folder
    (cd "$deps" && rm -f ./*.deb && apt-get download $packages 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
    n=$(ls "$deps"/*.deb 2>/dev/null | wc -l)
    [ "$n" -eq 5 ] || { echo "device_deps: fetched $n of 5 packages into $deps" >&2; exit 1; }
    echo "device_deps: $(du -sh "$deps" | cut -f1) in $deps; name .devdeps in the device call's carry"
    ;;
unpack)
    dir="${2:-}"
    [ -n "$dir" ] || { echo "usage: device_deps.sh unpack DIR" >&2; exit 2; }
    if command -v protoc-c >/dev/null 2>&1 && [ -f /usr/include/protobuf-c/protobuf-c.h ]; then
        echo "# device_deps: protobuf-c is installed here; nothing to unpack"
        exit 0
    fi
    ls "$deps"/*.deb >/dev/null 2>&1 || {
        echo "device_deps: no protobuf-c here and no packages in $deps (run 'device_deps.sh fetch' before the call and carry .devdeps)" >&2
        exit 1
    }
    mkdir -p "$dir"
    for f in "$deps"/*.deb; do dpkg-deb -x "$f" "$dir"; done
    lib="$dir/usr/lib/x86_64-linux-gnu"
    LD_LIBRARY_PATH="$lib" "$dir/usr/bin/protoc-c" --version >/dev/null ||
        { echo "device_deps: the unpacked protoc-c does not run here" >&2; exit 1; }
    echo "export PATH=\"$dir/usr/bin:\$PATH\""
    echo "export LD_LIBRARY_PATH=\"$lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\""
    echo "export CMAKE_PREFIX_PATH=\"$dir/usr\${CMAKE_PREFIX_PATH:+:\$CMAKE_PREFIX_PATH}\""
    ;;
-h|--help|'')
    sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
    [ -n "${1:-}" ] || exit 2
    ;;
*)
    echo "device_deps: unknown command '$1' (fetch, unpack DIR)" >&2
    exit 2
    ;;
esac
