"""bench_plan_onnx.py: how importing, compiling and planning an ONNX model grows with its size.

    python3 profiling/bench_plan_onnx.py [--cfx build/cfx] [--sizes 1000,4000,16000,64000]
                                         [--max-s 20] [--long-names] [--out FILE.md]

Builds with onnx.helper (no downloads) straight-line models of about N nodes shaped as
bench_plan's `branches` programs (an imported model's graph: every node a new value): Mul/Add
over an f32[8192] tensor, a 64-element vector reduced into a scalar, scalar arithmetic, and an
If every 50 nodes whose branches read outer-scope values. Times, on the CPU clock of the child
process (the machine may be shared), each of:

- check: `cfx check MODEL.onnx` (import, compile);
- cost: `cfx dump --cost MODEL.onnx` (import, compile, the plans of both modes of
  cuda-persistent and the CUDA code generator);
- run cpu: `cfx run MODEL.onnx --in ...` on the cpu executor (import, compile, one run).

--long-names puts the same 64 characters in front of every value's name, as an exported
model's hierarchical names ("model.layers.0.self_attn....") share theirs: the importer makes
its identifiers of the first 48 characters of a name, so every one of them is numbered (a
search from 2 up for each made this quadratic: 3.8 s for the 3,663 identifiers of one LpPool).

Prints one Markdown table with, per row, the growth over the size four times smaller (4: linear).
A stage that took more than --max-s seconds at one size is not run at the larger ones. Needs the
onnx package and numpy, and a cfx built with the ONNX importer.
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F32, BOOL = TensorProto.FLOAT, TensorProto.BOOL


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def build(n, prefix=""):
    """A model of about n nodes (an If and each node of its branches count one), each value
    named with prefix in front; returns the model and its node count."""
    nodes, inits, count = [], [], 0
    inits += [numpy_helper.from_array(np.float32(v), name) for name, v in
              (("two", 2.0), ("one", 1.0), ("half", 0.5))]
    y, z = "x", "c"
    k = 0
    while count < n:
        if k % 50 == 49:
            thr = prefix + "thr%d" % k
            inits.append(numpy_helper.from_array(np.float32(k % 7), thr))
            then_g = helper.make_graph([helper.make_node("Mul", [y, "half"], [prefix + "ty%d" % k])],
                                       prefix + "then%d" % k, [], [vi(prefix + "ty%d" % k, F32, [8192])])
            else_g = helper.make_graph([helper.make_node("Add", [y, "x"], [prefix + "ey%d" % k])],
                                       prefix + "else%d" % k, [], [vi(prefix + "ey%d" % k, F32, [8192])])
            nodes += [helper.make_node("Greater", [z, thr], [prefix + "p%d" % k]),
                      helper.make_node("If", [prefix + "p%d" % k], [prefix + "iy%d" % k], name=prefix + "if%d" % k,
                                       then_branch=then_g, else_branch=else_g)]
            y = prefix + "iy%d" % k
            count += 4
        elif k % 3 == 0:
            nodes += [helper.make_node("Mul", [y, "c"], [prefix + "ta%d" % k]),
                      helper.make_node("Add", [prefix + "ta%d" % k, "x"], [prefix + "ya%d" % k])]
            y = prefix + "ya%d" % k
            count += 2
        elif k % 3 == 1:
            nodes += [helper.make_node("Mul", ["v", z], [prefix + "ub%d" % k]),
                      helper.make_node("Add", [prefix + "ub%d" % k, "v"], [prefix + "uc%d" % k]),
                      helper.make_node("ReduceSum", [prefix + "uc%d" % k], [prefix + "us%d" % k], keepdims=0),
                      helper.make_node("Add", [z, prefix + "us%d" % k], [prefix + "zb%d" % k])]
            z = prefix + "zb%d" % k
            count += 4
        else:
            nodes += [helper.make_node("Mul", [z, "two"], [prefix + "wc%d" % k]),
                      helper.make_node("Sub", [prefix + "wc%d" % k, "one"], [prefix + "zc%d" % k])]
            z = prefix + "zc%d" % k
            count += 2
        k += 1
    nodes += [helper.make_node("Identity", [y], ["y"]), helper.make_node("Identity", [z], ["z"])]
    g = helper.make_graph(nodes, "bench", [vi("x", F32, [8192]), vi("v", F32, [64]), vi("c", F32, [])],
                          [vi("y", F32, [8192]), vi("z", F32, [])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="cfx profiling/bench_plan_onnx.py")
    m.ir_version = 8
    return m, count + 2


def cpu_of(cmd):
    """CPU seconds (user + system) of the child running cmd; None when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        print("bench_plan_onnx: %s failed: %s" % (" ".join(cmd), r.stderr.strip()[:300]), file=sys.stderr)
        return None
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cfx", default="build/cfx")
    ap.add_argument("--sizes", default="1000,4000,16000,64000")
    ap.add_argument("--max-s", type=float, default=20.0)
    ap.add_argument("--long-names", action="store_true",
                    help="the same 64 characters in front of every value's name")
    ap.add_argument("--out")
    a = ap.parse_args()
    prefix = "model.layers.0.self_attn.rotary_emb.inv_freq.expand.to.matmul.__" if a.long_names else ""
    assert not prefix or len(prefix) == 64
    sizes = [int(s) for s in a.sizes.split(",")]
    stages = ["check", "cost", "run cpu"]
    skip = {s: False for s in stages}
    rows = []
    with tempfile.TemporaryDirectory() as d:
        np.save(os.path.join(d, "x.npy"), np.linspace(-1, 1, 8192, dtype=np.float32))
        np.save(os.path.join(d, "v.npy"), np.linspace(0, 0.01, 64, dtype=np.float32))
        prev = None
        for n in sizes:
            m, count = build(n, prefix)
            path = os.path.join(d, "m%d.onnx" % n)
            with open(path, "wb") as f:
                f.write(m.SerializeToString())
            cmds = {"check": [a.cfx, "check", path],
                    "cost": [a.cfx, "dump", "--cost", path],
                    "run cpu": [a.cfx, "run", path, "--in", "x=" + os.path.join(d, "x.npy"),
                                "--in", "v=" + os.path.join(d, "v.npy"), "--in", "c=0.5"]}
            row = {"n": count}
            for s in stages:
                row[s] = None if skip[s] else cpu_of(cmds[s])
                if row[s] is None or row[s] > a.max_s:
                    skip[s] = True
            rows.append(row)
            prev = row
            print("nodes %d: %s" % (count, ", ".join("%s %s" % (s, "-" if row[s] is None else "%.3f s" % row[s])
                                                      for s in stages)), file=sys.stderr)
    lines = ["Import, compile and plan an ONNX model against its size, %s%s: CPU seconds of the child "
             "process, one run each; x4: the growth over the size four times smaller (4: linear)."
             % (time.strftime("%Y-%m-%d"), ", every name behind the same 64 characters" if prefix else ""), "",
             "| nodes | " + " | ".join("%s s | x4" % s for s in stages) + " |",
             "| ---: | " + " | ".join("---: | ---:" for _ in stages) + " |"]
    for i, r in enumerate(rows):
        cells = []
        for s in stages:
            v = r[s]
            p = rows[i - 1][s] if i > 0 and sizes[i] == 4 * sizes[i - 1] else None
            cells.append("skipped" if v is None else "%.3f" % v)
            cells.append("%.1f" % (v / p) if v is not None and p else "")
        lines.append("| %d | " % r["n"] + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
