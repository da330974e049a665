#!/bin/bash
# test_layers.sh: includes go down the layers only (kernels/, then host/, then device/).
# 1. Every quoted include in kernels/, host/ and device/ names a header beside the file, or one
#    in the file's own layer or a lower one by its folder ("host/program/program.h"); none
#    climbs with "..".
# 2. The build enforces it: each layer compiles against a view of the tree with only its own
#    folder and those below (CMakeLists.txt, build/layers/), so a probe that climbs from host/
#    to device/ does not compile there, and the same include from device/ does.
# Usage: bash test_layers.sh CFX_BINARY SOURCE_DIR BINARY_DIR
SRC=$2
BIN=$3
LAYERS=$BIN/../layers
die() { echo "FAIL: $*" >&2; exit 1; }

below() { # the folders a layer may include
    case $1 in
    kernels) echo "kernels" ;;
    host) echo "kernels host" ;;
    device) echo "kernels host device" ;;
    esac
}

bad=0
cd "$SRC" || die "no source dir $SRC"
for f in $(git ls-files kernels host device 2>/dev/null || find kernels host device -type f); do
    case $f in *.c | *.h | *.cu | *.cuh) ;; *) continue ;; esac
    layer=${f%%/*}
    dir=$(dirname "$f")
    while IFS= read -r name; do
        [ -z "$name" ] && continue
        case $name in
        *..*) echo "$f: #include \"$name\" climbs with .." >&2; bad=1; continue ;;
        onnx.pb-c.h) continue ;; # generated into the build tree by protoc-c
        esac
        if [ -f "$dir/$name" ]; then
            continue
        fi
        top=${name%%/*}
        if [ "$top" = "$name" ]; then
            echo "$f: #include \"$name\" is neither beside it nor named by its folder" >&2
            bad=1
        elif ! [[ " $(below "$layer") " == *" $top "* ]]; then
            echo "$f: #include \"$name\" climbs from $layer/ to $top/" >&2
            bad=1
        elif ! [ -f "$name" ]; then
            echo "$f: #include \"$name\" names no file" >&2
            bad=1
        fi
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done
[ $bad = 0 ] || die "includes that do not go down the layers (above)"

# the build's views: the probe climbs from host/ and must fail; from device/ it is fine
[ -d "$LAYERS/host" ] || die "no layer views in $LAYERS (CMakeLists.txt makes them)"
cc=$(command -v cc || command -v gcc || command -v clang) || { echo "test_layers: no C compiler, the probe skipped"; exit 0; }
T=$BIN/work/test_layers
rm -rf "$T" && mkdir -p "$T" || exit 1
printf '#include "host/runtime/exec.h"\nint main(void) { return 0; }\n' >"$T/down.c"
printf '#include "device/dev.h"\nint main(void) { return 0; }\n' >"$T/up.c"
"$cc" -fsyntax-only -I"$LAYERS/host" "$T/down.c" 2>"$T/log" || die "host/ cannot include its own layer: $(head -3 "$T/log")"
if "$cc" -fsyntax-only -I"$LAYERS/host" "$T/up.c" 2>"$T/log"; then
    die "an include from host/ that climbs to device/ compiled"
fi
grep -q "device/dev.h" "$T/log" || die "the climbing probe failed for another reason: $(head -3 "$T/log")"
if "$cc" -fsyntax-only -I"$LAYERS/kernels" "$T/down.c" 2>/dev/null; then
    die "an include from kernels/ that climbs to host/ compiled"
fi
rm -rf "$T"
echo "test_layers: ok"
