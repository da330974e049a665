#!/usr/bin/env bash
# round_json.sh BENCH_GPU SOURCE_DIR (ctest: test_round_json, registered in profiling/CMakeLists.txt
# since it runs bench_gpu): the round's machine-readable files, on the CPU.
#   bench_gpu --fake-device --json   (a made-up device and floors, the cpu executor's real rows
#                                     and a made-up cuda-persistent row)
#   bench_gpu --predict --json       (the cost sheet's predictions)
#   peers.py --json                  (on the CPU, where torch and jax may be missing)
#   compare_rounds.py                (the two bench_gpu files side by side)
# Each file must be valid JSON in the records format of profiling/rounds.py, every record with
# its fields; the figures that can be known by hand are checked against them.
set -u
bench="$1"
src="$2"
command -v python3 >/dev/null 2>&1 || { echo "test_round_json: no python3 (skipped)"; exit 77; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_round_json: FAIL: $*"; exit 1; }

"$bench" --fake-device --quick --graphs counter,cg_1024 --bench-dir "$src/profiling/bench" \
    --json "$tmp/fake.json" --export "$tmp/data" > "$tmp/fake.log" 2>&1 || { cat "$tmp/fake.log"; fail "bench_gpu --fake-device"; }
"$bench" --predict --blocks 264 --graphs counter,if_in_while,cg_1024 --bench-dir "$src/profiling/bench" \
    --json "$tmp/pred.json" > "$tmp/pred.log" 2>&1 || { cat "$tmp/pred.log"; fail "bench_gpu --predict"; }
python3 "$src/profiling/peers.py" --device cpu --quick --data "$tmp/data" --graphs counter \
    --json "$tmp/peers.json" > "$tmp/peers.log" 2>&1 || { cat "$tmp/peers.log"; fail "peers.py"; }
# onnx_bench.py --json where onnx and onnxruntime are installed and cfx imports ONNX
build="$(cd "$(dirname "$bench")/.." && pwd)"
onnx=0
if python3 -c 'import onnx, onnxruntime' 2>/dev/null && [ -x "$build/cfx" ]; then
    onnx=1
    python3 "$src/profiling/onnx_bench.py" "$build" --small --repeats 1 --json "$tmp/onnx.json" \
        > "$tmp/onnx.log" 2>&1 || { cat "$tmp/onnx.log"; fail "onnx_bench.py"; }
else
    echo "test_round_json: onnx_bench.py not checked (onnx, onnxruntime or $build/cfx missing)"
fi
python3 "$src/profiling/compare_rounds.py" "$tmp/pred.json" "$tmp/fake.json" --json "$tmp/cmp.json" \
    > "$tmp/cmp.log" 2>&1 || { cat "$tmp/cmp.log"; fail "compare_rounds.py"; }

python3 - "$tmp" "$onnx" <<'EOF' || exit 1
import json, sys
tmp = sys.argv[1]
errors = []
def check(cond, what):
    if not cond:
        errors.append(what)

HEAD = ["kind", "source", "commit", "gpu", "driver", "cuda_runtime", "graph", "backend", "mode", "state"]
def load(name):
    with open("%s/%s" % (tmp, name)) as f:
        doc = json.load(f)  # must be valid JSON
    check(doc.get("format") == "cfx-round/1", "%s: format %r" % (name, doc.get("format")))
    for r in doc["records"]:
        for k in HEAD:
            check(k in r and isinstance(r[k], str) and r[k], "%s: record without %s: %r" % (name, k, r))
        check(("value" if r.get("kind") == "floor" else "us_per_iter") in r, "%s: no figure in %r" % (name, r))
    return doc["records"]

fake = load("fake.json")
floors = {r["backend"]: r for r in fake if r["kind"] == "floor"}
# the made-up floors bench_gpu --fake-device gives (bench_gpu.c, fake_device)
check(floors.get("grid_barrier_us", {}).get("value") == 1.21, "grid barrier floor %r" % floors.get("grid_barrier_us"))
check(floors.get("bandwidth_gbs", {}).get("mode") == "GB/s", "bandwidth's unit")
check(floors.get("tail_self_us", {}).get("value", 0) is None, "a floor not measured must have value null")
rows = {(r["graph"], r["backend"], r["mode"]): r for r in fake if r["kind"] == "row"}
check(set(rows) == {("counter", "cpu", "-"), ("counter", "cuda-persistent", "compiled"),
                    ("cg_1024", "cpu", "-"), ("cg_1024", "cuda-persistent", "compiled")}, "rows %r" % sorted(rows))
for r in fake:
    check(r["gpu"].startswith("fake") and r.get("fake") is True and r["driver"] == "13.0", "meta of %r" % r)
    check(r["blocks"] == 264 and r["sms"] == 132, "grid of %r" % r)
cpu = rows.get(("counter", "cpu", "-"), {})
check(cpu.get("state") == "ok" and cpu.get("us_per_iter", 0) > 0 and cpu.get("iterations") == 2000,
      "the cpu row of counter (quick: n = 2000) %r" % cpu)
check(cpu.get("predicted_us_per_iter", 0) is None, "a cpu row has no prediction")
cg = rows.get(("cg_1024", "cuda-persistent", "compiled"), {})
# cg_1024's bandwidth floor: at least A (1024 x 1024 f32, 4194304 bytes) per iteration at the
# fake 2959 GB/s, 1.4175 us, plus a few vectors of 4 KiB
fl = cg.get("floor_us_per_iter") or 0
check(cg.get("floor") == "bandwidth" and 1.4175 <= fl < 1.45, "cg_1024's floor %r" % fl)
check(abs(cg.get("fraction_of_floor", 0) - fl / 1.5) < 1e-4, "fraction of floor against the made-up 1.5 us")
check(isinstance(cg.get("predicted_us_per_iter"), float) and cg["predicted_us_per_iter"] > fl,
      "cg_1024's prediction must be a number above its floor: %r" % cg.get("predicted_us_per_iter"))
check(cg.get("predicted_us_per_iter_run_floors") == cg.get("predicted_us_per_iter"),
      "the fake floors are the sheet's defaults: both predictions agree")
check(rows.get(("counter", "cpu", "-"), {}).get("floor") is None, "counter has no floor")

pred = load("pred.json")
check(len(pred) == 6 and all(r["source"] == "cost sheet" and r["kind"] == "row" for r in pred), "predictions %r" % pred)
check({(r["graph"], r["mode"]) for r in pred} == {(g, m) for g in ("counter", "if_in_while", "cg_1024")
                                                  for m in ("compiled", "interp")}, "prediction keys")
for r in pred:
    check(r["us_per_iter"] == r["predicted_us_per_iter"] and r["us_per_iter"] > 0, "prediction %r" % r)
    check(r["gpu"] == "none", "a prediction names no GPU")
    check(r.get("floors", "").startswith("default 1.21,"), "the sheet's default floors named: %r" % r.get("floors"))

peers = load("peers.json")
check(len(peers) >= 1 and all(r["source"] == "peers" for r in peers), "peers' records %r" % peers)

with open(tmp + "/cmp.json") as f:
    cmp = json.load(f)
# pred.json (A) has both modes of three graphs, fake.json (B) cuda-persistent compiled of two:
# exactly those two compare, B / A the made-up 1.5 over the prediction
got = {(r["graph"], r["backend"], r["mode"]): r for r in cmp["rows"]}
check(set(got) == {("counter", "cuda-persistent", "compiled"), ("cg_1024", "cuda-persistent", "compiled")},
      "compared rows %r" % sorted(got))
for k, r in got.items():
    check(r["b"] == 1.5 and abs(r["ratio"] - 1.5 / r["a"]) < 1e-9, "ratio of %r" % (r,))
if sys.argv[2] == "1":
    onnx = load("onnx.json")
    keys = {(r["graph"], r["backend"], r["mode"]) for r in onnx}
    # --small: CG of 64 unknowns, greedy decoding at a small size; ONNX Runtime's CPU provider
    # always, its CUDA provider a row with or without a figure
    for g in ("cg_64", "greedy_decode_small"):
        check((g, "onnxruntime", "CPUExecutionProvider") in keys, "onnx: no CPU row for %s in %r" % (g, sorted(keys)))
        check((g, "onnxruntime", "CUDAExecutionProvider") in keys, "onnx: no CUDA row for %s" % g)
        check((g, "cpu", "onnx import") in keys, "onnx: no cfx row for %s" % g)
if errors:
    print("test_round_json: FAIL:\n  " + "\n  ".join(errors))
    sys.exit(1)
print("test_round_json: %d + %d + %d records checked, %d compared" % (len(fake), len(pred), len(peers), len(got)))
EOF
