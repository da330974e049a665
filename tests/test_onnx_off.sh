#!/bin/bash
# test_onnx_off.sh: a build without protobuf-c still has the importer's entry point, which says
# what is missing and how to get it (one line, the model named) instead of failing to link or
# crashing. host/front/onnx.c is compiled here on its own without CFX_HAVE_ONNX, as such a build does.
# Skipped (77) where there is no C compiler. Usage: bash test_onnx_off.sh CFX_BINARY SOURCE_DIR BINARY_DIR
SRC=$2
BIN=$3
cc=$(command -v cc || command -v gcc || command -v clang) || { echo "test_onnx_off: no C compiler, skipped"; exit 77; }
T=${BIN:+$BIN/work/test_onnx_off}
T=${T:-$(mktemp -d)}
rm -rf "$T" && mkdir -p "$T" || exit 1
trap 'rm -rf "$T"' EXIT
die() { echo "FAIL: $*" >&2; exit 1; }

cat >"$T/main.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "host/front/onnx.h"
int main(void)
{
    onnx_import im;
    char *err = NULL;
    int rc = onnx_import_model("m.onnx", NULL, 0, NULL, 0, NULL, NULL, &im, &err);
    if (err)
        fputs(err, stdout);
    free(err);
    return rc == -1 ? 0 : 1;
}
C
"$cc" -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Werror -I"$SRC/host" -I"$SRC" \
    "$SRC/host/front/onnx.c" "$T/main.c" -o "$T/off" 2>"$T/log" || die "onnx.c without protobuf-c does not build: $(cat "$T/log")"
out=$("$T/off") || die "the importer without protobuf-c did not refuse"
case "$out" in
"m.onnx: cannot import ONNX models: cfx was built without protobuf-c; install it (apt-get install protobuf-c-compiler libprotobuf-c-dev libonnx-dev) and configure the build again")
    ;;
*) die "unexpected message: $out" ;;
esac
echo "test_onnx_off: ok"
