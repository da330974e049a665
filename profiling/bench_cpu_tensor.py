#!/usr/bin/env python3
"""bench_cpu_tensor.py: the cpu executor against numpy and PyTorch on tensor loops, in one run (issue 35).

Each workload is a cfx graph whose loop runs N times; the graph is timed (the package's
Graph.benchmark: medians of wall times after warm-ups) at N and at 1 iterations, and the
time per iteration is (T(N) - T(1)) / (N - 1), which takes out what a run costs once
(binding, the arena, copying the inputs in). numpy runs the same loop written in numpy, N
iterations timed as a whole, median over repeats, and so does PyTorch on the CPU (the same
loop in torch, on the same data). The scalar loop is the counter graph against the same loop
in plain Python (numpy and torch have none to offer). The numpy, torch and cfx sides run in
three processes one after the other (this script again, --part), so that none's BLAS threads,
still spinning after a call, take the cores from another's; each in its library's default
threading. The torch side runs under --torch-python (default: this Python); without torch
there its column says "not installed".

Usage (from the repository root, with a build of libcfx):
  CFX_LIBRARY=build/libcfx.so PYTHONPATH=python python3 profiling/bench_cpu_tensor.py
      [--quick] [--no-8192] [--accumulate fast|f64] [--torch-python PYTHON] [--markdown FILE]
The accumulation mode is the cpu executor's (CFX_ACCUMULATE; default fast). Each side's BLAS
and its kernels are noted (OpenBLAS's corename, read from the library the process loaded: the
cfx side's after its products, so that cfx's own choice of kernels is what is read).
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
    ap.add_argument("--torch-python", metavar="PYTHON", default=sys.executable,
                    help="the Python with torch (and numpy) for the torch side")
    ap.add_argument("--part", choices=["numpy", "torch", "cfx"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.part:
        parts = {}
        for part in ("numpy", "torch", "cfx"):
            python = args.torch_python if part == "torch" else sys.executable
            cmd = [python, os.path.abspath(__file__), "--part", part]
            cmd += ["--quick"] if args.quick else []
            cmd += ["--no-8192"] if args.no_8192 else []
            cmd += ["--accumulate", args.accumulate] if args.accumulate else []
            env = dict(os.environ)
            if part == "cfx" and args.cfx_coretype:
                env["OPENBLAS_CORETYPE"] = args.cfx_coretype
            done = subprocess.run(cmd, check=part != "torch", stdout=subprocess.PIPE, text=True, env=env)
            if done.returncode != 0: # the torch side only
                parts[part] = {"_missing": "failed (%s exited %d)" % (python, done.returncode)}
                continue
            parts[part] = json.loads(done.stdout.strip().splitlines()[-1])
        report(args, parts)
        return
    json_out = {"_load": [os.getloadavg()[0]]}
    if args.part == "torch":
        try:
            import torch
        except ImportError:
            print(json.dumps({"_missing": "not installed"}))
            return
        torch.set_grad_enabled(False)
        json_out["_info"] = "torch %s, %d threads, mkl %s, mkldnn %s" % (
            torch.__version__, torch.get_num_threads(), torch.backends.mkl.is_available(),
            torch.backends.mkldnn.is_available())
    if args.accumulate:
        os.environ["CFX_ACCUMULATE"] = args.accumulate
    if args.part == "cfx":
        sys.path.insert(0, os.path.join(ROOT, "python"))
        import cfx
    rep = 3 if args.quick else 5
    rng = np.random.default_rng(0)
    is_np = args.part == "numpy"
    is_torch = args.part == "torch"
    if is_torch:
        # the same loops on the same data (from numpy's generator), in torch
        xp = Torch()
    else:
        xp = Numpy()

    def row(name, t, goal, info=None):
        json_out[name] = [t, goal, info]
        print("%-34s %-5s %9.4g ms %s" % (name, args.part, t, info or ""), file=sys.stderr, flush=True)

    # 1. a 1024^3 product
    size = 1024
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    n = 6
    if is_np or is_torch:
        ta, tb = xp.array(a), xp.array(b)
        row("matmul 1024^3 (f32)", median_time(lambda: [ta @ tb for _ in range(n)], rep) / n * 1e3, 1.2)
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

    def np_power(A=xp.array(A) if (is_np or is_torch) else None, v0=xp.array(v0)):
        v = v0 / xp.norm(v0)
        eig = xp.scalar(0)
        for _ in range(n):
            w = A @ v
            nxt = xp.dot(v, w)
            abs(nxt - eig)
            eig = nxt
            v = w / xp.norm(w)
    if is_np or is_torch:
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
        # 16 iterations at 8192 too: a cfx run of it costs about 300 ms once (its 256 MB input
        # copied into a fresh arena), and at 8 iterations that cost's noise between T(N) and
        # T(1) swung the time per iteration by 1.5x from one run to the next
        n = 16
        name = "CG %d (per iter)" % size

        def np_cg(A=xp.array(A) if (is_np or is_torch) else None, bvec=xp.array(bvec), size=size, n=n):
            x = xp.zeros(size)
            r = xp.copy(bvec)
            p = xp.copy(bvec)
            rr = xp.dot(r, r)
            for _ in range(n):
                Ap = A @ p
                alpha = rr / xp.dot(p, Ap)
                x = x + alpha * p
                r = r - alpha * Ap
                rr_next = xp.dot(r, r)
                beta = rr_next / rr
                p = r + beta * p
                rr = rr_next
        if is_np or is_torch:
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

    def np_decode(W=xp.array(W), M=xp.array(M), E=xp.array(E), h0=xp.array(h0)):
        h = h0
        tok = 1
        toks = []
        for _ in range(n):
            h = xp.tanh(M @ h + E[tok])
            tok = int(xp.argmax(W @ h))
            toks.append(tok)
        return toks
    if is_np or is_torch:
        row("greedy decoding (per token)", median_time(np_decode, rep) / n * 1e3, 1.5)
    else:
        g = cfx.compile(os.path.join(ROOT, "profiling/bench/greedy_decode.cfx")).graph("greedy_decode")
        t, res = cfx_per_iter(g, dict(W=W, M=M, E=E, h0=h0, start=np.int32(1), eos=np.int32(-1)),
                              "max_len", n, rep)
        toks = np_decode(W, M, E, h0)
        same = sum(int(x == y) for x, y in zip(toks, res["tokens"][:n]))
        row("greedy decoding (per token)", t, 1.5, "%d of %d tokens as numpy's" % (same, n))

    # 5. the scalar loop: the counter against plain Python
    if is_np:
        def py_count(n=1_000_000):
            c = 0
            while c < n:
                c = c + 1
        row("scalar loop (per iter; vs Python)", median_time(py_count, rep) / 1_000_000 * 1e3, None)
    elif not is_torch:
        g = cfx.compile(os.path.join(ROOT, "profiling/bench/counter.cfx")).graph("counter")
        t, _ = cfx_per_iter(g, {}, "n", 10_000_000, rep)
        row("scalar loop (per iter; vs Python)", t, None)
    if not is_torch:
        json_out["_info"] = openblas_kernels()
    json_out["_load"].append(os.getloadavg()[0])
    print(json.dumps(json_out))


def openblas_kernels():
    """Which OpenBLAS this process loaded and the kernels it runs (corename), read from the
    library itself, as threadpoolctl does: numpy's bundled one (scipy_openblas, 64-bit ints)
    or the system's that cfx opened (already loaded: RTLD_NOLOAD opens nothing new)."""
    import ctypes
    found = []
    paths = sorted({line.split()[-1] for line in open("/proc/self/maps") if "openblas" in line.lower()
                    and line.split()[-1].startswith("/")})
    for path in paths:
        try:
            lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        except OSError:
            continue
        for prefix, suffix in (("scipy_", "64_"), ("", "64_"), ("", "")):
            try:
                core = getattr(lib, "%sopenblas_get_corename%s" % (prefix, suffix))
                config = getattr(lib, "%sopenblas_get_config%s" % (prefix, suffix))
                threads = getattr(lib, "%sopenblas_get_num_threads%s" % (prefix, suffix))
            except AttributeError:
                continue
            core.restype = config.restype = ctypes.c_char_p
            found.append("%s (%s): %s kernels, %d threads" % (" ".join(config().decode().split()[:2]),
                                                              os.path.basename(path), core().decode(),
                                                              threads()))
            break
    return "; ".join(found) or "no OpenBLAS loaded"


class Numpy:
    array = staticmethod(lambda a: a)
    norm = staticmethod(np.linalg.norm)
    dot = staticmethod(np.dot)
    scalar = staticmethod(np.float32)
    zeros = staticmethod(lambda n: np.zeros(n, np.float32))
    copy = staticmethod(np.copy)
    tanh = staticmethod(np.tanh)
    argmax = staticmethod(np.argmax)


class Torch:
    def __init__(self):
        import torch
        self.array = lambda a: torch.from_numpy(np.ascontiguousarray(a))
        self.norm = torch.linalg.vector_norm
        self.dot = torch.dot
        self.scalar = lambda v: torch.tensor(v, dtype=torch.float32)
        self.zeros = lambda n: torch.zeros(n, dtype=torch.float32)
        self.copy = torch.clone
        self.tanh = torch.tanh
        self.argmax = torch.argmax


def report(args, parts):
    mode = os.environ.get("CFX_ACCUMULATE", "fast") or "fast"
    tp = parts["torch"]
    lines = ["| workload | numpy ms | torch ms | cfx cpu ms | cfx / numpy | cfx / torch | goal (vs numpy) | note |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for name, value in parts["numpy"].items():
        if name.startswith("_"):
            continue
        t_np, goal, _ = value
        t_cfx, _, info = parts["cfx"][name]
        t_torch = tp[name][0] if name in tp else None
        torch_cell = ("%.4g" % t_torch if t_torch else
                      tp.get("_missing", "-") if goal else "-")
        lines.append("| %s | %.4g | %s | %.4g | %.2f | %s | %s | %s |"
                     % (name, t_np, torch_cell, t_cfx, t_cfx / t_np,
                        "%.2f" % (t_cfx / t_torch) if t_torch else "-",
                        "<= %.1fx" % goal if goal else "-", info or ""))
    import numpy
    note = ("cfx accumulate %s; numpy %s (%s); %s; cfx: %s; OPENBLAS_CORETYPE=%s (cfx side: %s); "
            "OPENBLAS_NUM_THREADS=%s; %d cores; load average (1 min) at the start and end of each side: "
            "numpy %s, torch %s, cfx %s"
            % (mode, numpy.__version__, parts["numpy"].get("_info", "?"),
               tp.get("_info", "torch " + tp.get("_missing", "?")), parts["cfx"].get("_info", "?"),
               os.environ.get("OPENBLAS_CORETYPE", "(unset)"), args.cfx_coretype or "the same",
               os.environ.get("OPENBLAS_NUM_THREADS", "(unset)"), os.cpu_count(),
               *("/".join("%.2f" % v for v in parts[p].get("_load", [])) or "-"
                 for p in ("numpy", "torch", "cfx"))))
    print("\n".join(lines))
    print(note)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n\n" + note + "\n")


if __name__ == "__main__":
    main()
