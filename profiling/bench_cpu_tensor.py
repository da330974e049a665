#!/usr/bin/env python3
"""bench_cpu_tensor.py: the cpu executor against numpy on tensor loops, in one run (issue 35).

Each workload is a cfx graph whose loop runs N times; the graph is timed (the package's
Graph.benchmark: medians of wall times after warm-ups) at N and at 1 iterations, and the
time per iteration is (T(N) - T(1)) / (N - 1), which takes out what a run costs once
(binding, the arena, copying the inputs in). numpy runs the same loop written in numpy, N
iterations timed as a whole, median over repeats. The scalar loop is the counter graph
against the same loop in plain Python (numpy has none to offer). The numpy side and the cfx
side run in two processes one after the other (this script again, --part), so that neither's
BLAS threads, still spinning after a call, take the cores from the other's.

Usage (from the repository root, with a build of libcfx):
  CFX_LIBRARY=build/libcfx.so PYTHONPATH=python python3 profiling/bench_cpu_tensor.py
      [--quick] [--no-8192] [--accumulate fast|f64] [--markdown FILE]
The accumulation mode is the cpu executor's (CFX_ACCUMULATE; default fast). PyTorch is timed
too where it is installed.
"""
import argparse
import json
import os
import subprocess
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def median_time(fn, repeat, warmup=1):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def cfx_per_iter(graph, kwargs, iter_name, n, repeat, check=None):
    """ms per loop iteration: (T(n) - T(1)) / (n - 1) with T the benchmark's median."""
    def positional(count):  # positional: an input may be named max_iters, a keyword of the call
        values = dict(kwargs, **{iter_name: np.int32(count)})
        return [values[p.name] for p in graph.inputs]
    t1 = graph.benchmark(*positional(1), backend="cpu", warmup=1, repeat=repeat)
    tn = graph.benchmark(*positional(n), backend="cpu", warmup=1, repeat=repeat)
    if check:
        check(tn.results)
    return (tn.median_ms - t1.median_ms) / (n - 1), tn.results


SRC_MATMUL = """
graph matmul_loop(a: f32[SIZE, SIZE], b: f32[SIZE, SIZE], n: i32) -> (c: f32[SIZE, SIZE]) {
  c = zeros(f32[SIZE, SIZE])
  i = 0
  while i < n {
    c = a @ b
    i = i + 1
  }
}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--no-8192", action="store_true", help="leave out CG at 8192")
    ap.add_argument("--accumulate", choices=["fast", "f64"], help="sets CFX_ACCUMULATE")
    ap.add_argument("--markdown", help="also write the table to this file")
    ap.add_argument("--cfx-coretype", metavar="NAME",
                    help="OPENBLAS_CORETYPE for the cfx side alone (an OpenBLAS older than the "
                         "processor runs its generic kernels: SkylakeX, Haswell, ...)")
    ap.add_argument("--part", choices=["numpy", "cfx"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.part:
        parts = {}
        for part in ("numpy", "cfx"):
            cmd = [sys.executable, os.path.abspath(__file__), "--part", part]
            cmd += ["--quick"] if args.quick else []
            cmd += ["--no-8192"] if args.no_8192 else []
            cmd += ["--accumulate", args.accumulate] if args.accumulate else []
            env = dict(os.environ)
            if part == "cfx" and args.cfx_coretype:
                env["OPENBLAS_CORETYPE"] = args.cfx_coretype
            out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, env=env).stdout
            parts[part] = json.loads(out.strip().splitlines()[-1])
        report(args, parts)
        return
    json_out = {}
    if args.part == "cfx":  # which kernels the cfx side's OpenBLAS runs (where it is one)
        import ctypes
        try:
            ob = ctypes.CDLL("libopenblas.so.0")
            ob.openblas_get_corename.restype = ctypes.c_char_p
            json_out["_corename"] = ob.openblas_get_corename().decode()
        except (OSError, AttributeError):
            pass
    if args.accumulate:
        os.environ["CFX_ACCUMULATE"] = args.accumulate
    if args.part == "cfx":
        sys.path.insert(0, os.path.join(ROOT, "python"))
        import cfx
    rep = 3 if args.quick else 5
    rng = np.random.default_rng(0)
    is_np = args.part == "numpy"

    def row(name, t, goal, info=None):
        json_out[name] = [t, goal, info]
        print("%-34s %-5s %9.4g ms %s" % (name, args.part, t, info or ""), file=sys.stderr, flush=True)

    # 1. a 1024^3 product
    size = 1024
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    n = 6
    if is_np:
        row("matmul 1024^3 (f32)", median_time(lambda: [a @ b for _ in range(n)], rep) / n * 1e3, 1.2)
    else:
        g = cfx.compile(SRC_MATMUL.replace("SIZE", str(size))).graph("matmul_loop")
        t, res = cfx_per_iter(g, dict(a=a, b=b), "n", n, rep)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        err = float(np.max(np.abs(res["c"] - ref)) / np.max(np.abs(ref)))
        row("matmul 1024^3 (f32)", t, 1.2, "max error %.1e of the largest element" % err)

    # 2. power iteration at 4096: a matrix-vector product, a dot and a norm per iteration
    size = 4096
    A = rng.standard_normal((size, size), dtype=np.float32)
    A = (A + A.T) * np.float32(0.5)
    v0 = rng.standard_normal(size, dtype=np.float32)
    n = 20

    def np_power():
        v = v0 / np.linalg.norm(v0)
        eig = np.float32(0)
        for _ in range(n):
            w = A @ v
            nxt = np.dot(v, w)
            abs(nxt - eig)
            eig = nxt
            v = w / np.linalg.norm(w)
    if is_np:
        row("power iteration 4096 (per iter)", median_time(np_power, rep) / n * 1e3, 1.5)
    else:
        g = cfx.compile(os.path.join(ROOT, "profiling/bench/power_iteration.cfx")).graph("power_iteration")
        t, _ = cfx_per_iter(g, dict(A=A, v0=v0, tol=np.float32(-1)), "max_iters", n, rep)
        row("power iteration 4096 (per iter)", t, 1.5)
    del A

    # 3. CG at 1024 and 8192 (a symmetric, diagonally dominant matrix: rr stays positive)
    sizes = [1024] if args.no_8192 else [1024, 8192]
    for size in sizes:
        R = rng.standard_normal((size, size), dtype=np.float32) * np.float32(1.0 / np.sqrt(size))
        A = (R + R.T) * np.float32(0.5)
        del R
        A[np.diag_indices(size)] += np.float32(4.0)
        bvec = rng.standard_normal(size, dtype=np.float32)
        n = 16 if size == 1024 else 8
        name = "CG %d (per iter)" % size

        def np_cg():
            x = np.zeros(size, np.float32)
            r = bvec.copy()
            p = bvec.copy()
            rr = np.dot(r, r)
            for _ in range(n):
                Ap = A @ p
                alpha = rr / np.dot(p, Ap)
                x = x + alpha * p
                r = r - alpha * Ap
                rr_next = np.dot(r, r)
                beta = rr_next / rr
                p = r + beta * p
                rr = rr_next
        if is_np:
            row(name, median_time(np_cg, rep) / n * 1e3, 1.5)
        else:
            g = cfx.compile(os.path.join(ROOT, "profiling/bench/cg_%d.cfx" % size)).graph("cg_%d" % size)

            def check(res, n=n, size=size):
                if int(res["iters"]) != n:
                    raise SystemExit("cg_%d ran %d iterations, not %d" % (size, int(res["iters"]), n))
            t, _ = cfx_per_iter(g, dict(A=A, b=bvec, tol=np.float32(0)), "max_iters", n, rep, check)
            row(name, t, 1.5)
        del A

    # 4. greedy decoding (profiling/bench/greedy_decode.cfx; eos = -1: max_len steps)
    W = rng.standard_normal((32768, 256), dtype=np.float32) * np.float32(1 / 16)
    M = rng.standard_normal((256, 256), dtype=np.float32) * np.float32(1 / 16)
    E = rng.standard_normal((32768, 256), dtype=np.float32)
    h0 = rng.standard_normal(256, dtype=np.float32)
    n = 64

    def np_decode():
        h = h0
        tok = 1
        toks = []
        for _ in range(n):
            h = np.tanh(M @ h + E[tok])
            tok = int(np.argmax(W @ h))
            toks.append(tok)
        return toks
    if is_np:
        row("greedy decoding (per token)", median_time(np_decode, rep) / n * 1e3, 1.5)
    else:
        g = cfx.compile(os.path.join(ROOT, "profiling/bench/greedy_decode.cfx")).graph("greedy_decode")
        t, res = cfx_per_iter(g, dict(W=W, M=M, E=E, h0=h0, start=np.int32(1), eos=np.int32(-1)),
                              "max_len", n, rep)
        toks = np_decode()
        same = sum(int(x == y) for x, y in zip(toks, res["tokens"][:n]))
        row("greedy decoding (per token)", t, 1.5, "%d of %d tokens as numpy's" % (same, n))

    # 5. the scalar loop: the counter against plain Python
    if is_np:
        def py_count(n=1_000_000):
            c = 0
            while c < n:
                c = c + 1
        row("scalar loop (per iter; vs Python)", median_time(py_count, rep) / 1_000_000 * 1e3, None)
    else:
        g = cfx.compile(os.path.join(ROOT, "profiling/bench/counter.cfx")).graph("counter")
        t, _ = cfx_per_iter(g, {}, "n", 10_000_000, rep)
        row("scalar loop (per iter; vs Python)", t, None)
    print(json.dumps(json_out))


def report(args, parts):
    mode = os.environ.get("CFX_ACCUMULATE", "fast") or "fast"
    lines = ["| workload | numpy ms | cfx cpu ms | cfx / numpy | goal | note |",
             "|---|---:|---:|---:|---:|---|"]
    for name, (t_np, goal, _) in parts["numpy"].items():
        if name.startswith("_"):
            continue
        t_cfx, _, info = parts["cfx"][name]
        lines.append("| %s | %.4g | %.4g | %.2f | %s | %s |"
                     % (name, t_np, t_cfx, t_cfx / t_np, "<= %.1fx" % goal if goal else "-", info or ""))
    try:
        import torch  # noqa: F401
        torch_note = "torch installed but not timed"
    except ImportError:
        torch_note = "torch not installed"
    import numpy
    note = ("cfx accumulate %s; numpy %s; OPENBLAS_CORETYPE=%s (cfx side: %s); OPENBLAS_NUM_THREADS=%s; "
            "%d cores; %s"
            % (mode, numpy.__version__, os.environ.get("OPENBLAS_CORETYPE", "(unset)"),
               args.cfx_coretype or "the same", os.environ.get("OPENBLAS_NUM_THREADS", "(unset)"),
               os.cpu_count(), torch_note))
    if "_corename" in parts["cfx"]:
        note += "; the cfx side's OpenBLAS runs its %s kernels" % parts["cfx"]["_corename"]
    print("\n".join(lines))
    print(note)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n\n" + note + "\n")


if __name__ == "__main__":
    main()
