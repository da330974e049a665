#!/usr/bin/env bash
# tensor_check_dry.sh BUILD_DIR SOURCE_DIR (ctest: test_tensor_check_dry): profiling/tensor_check.sh
# on a machine without a GPU, with a stand-in nvidia-smi and the build as it is: the steps that
# cannot measure here run and fail or find nothing, and the script still writes summary.md with
# every step's status, the predictions' records, and exits by whether every step passed.
set -u
build="$1"
src="$2"
command -v python3 >/dev/null 2>&1 || { echo "test_tensor_check_dry: no python3 (skipped)"; exit 77; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_tensor_check_dry: FAIL: $*"; exit 1; }
mkdir -p "$tmp/bin"
cat > "$tmp/bin/nvidia-smi" <<'SMI'
#!/bin/sh
case "$*" in -L) echo "GPU 0: stand-in";; *query*) echo "stand-in GPU, 0.0, 1 MiB, 1 MHz";; *) echo "CUDA Version: 13.0";; esac
SMI
chmod +x "$tmp/bin/nvidia-smi"
# --short --no-peers --no-tests: predict and bench only (bench finds no device and says so)
PATH="$tmp/bin:$PATH" CFX_COMMIT=test123 bash "$src/profiling/tensor_check.sh" "$tmp/out" --no-build \
    --build-dir "$build" --short --no-peers --no-tests --budget 120 > "$tmp/stdout" 2>&1
rc=$?
[ "$rc" = 0 ] || { cat "$tmp/stdout"; fail "exit status $rc, expected 0 (predict and bench both end 0 here)"; }
grep -q '^| predict | rc 0 |' "$tmp/out/summary.md" || { cat "$tmp/out/summary.md"; fail "no predict step in summary.md"; }
grep -q '^| bench | rc 0 |' "$tmp/out/summary.md" || fail "no bench step in summary.md"
grep -q 'no CUDA device is present' "$tmp/out/log.txt" || fail "bench_gpu's 'no device' not in log.txt"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = d["records"]
assert d["format"] == "cfx-round/1" and len(r) >= 14, len(r)
assert all(x["commit"] == "test123" and x["source"] == "cost sheet" for x in r)
' "$tmp/out/predictions.json" || fail "predictions.json"
# a budget already spent: every step is skipped, summary.md says so, the status is 1
PATH="$tmp/bin:$PATH" bash "$src/profiling/tensor_check.sh" "$tmp/out2" --no-build --build-dir "$build" \
    --short --no-peers --no-tests --budget 5 > "$tmp/stdout2" 2>&1
rc=$?
[ "$rc" = 1 ] || { cat "$tmp/stdout2"; fail "a spent budget: exit status $rc, expected 1"; }
grep -q '^| predict | skipped: the budget is spent' "$tmp/out2/summary.md" || fail "skipped steps not in summary.md"
n=$(ls "$tmp/out" | wc -l)
[ "$n" -le 8 ] || fail "$n files in OUT, the device returns 8"
echo "test_tensor_check_dry: passed"
