"""What a call of a @cfx.jit function costs beside a call of the same graph.

For each function, the jitted call (signature lookup, then the graph's run) is timed against
calling the graph it runs, compiled from the same text with cfx.compile(...).graph(...), on
the same arguments on the cpu executor: microseconds per call, the median of REPEAT batches
of BATCH calls each, the two interleaved batch by batch. The issue's bound: the jitted call
costs at most twice the graph's. Also times the first call (translation and compiles) and
says how many times a signature was translated (once).

    CFX_LIBRARY=build/libcfx.so PYTHONPATH=python python3 profiling/jit_call_cost.py [--quick]

Prints a table; writes no file (profiling/results/ keeps the figures of a run by hand).
"""
import math
import statistics
import sys
import time

import numpy as np

import cfx
from cfx import _jit


def tiny(x):
    return x + 1


def count_up(x, limit):
    s = 0.0
    i = 0
    while s < limit:
        s += x[i % len(x)]
        i += 1
    return s, i


def greedy_decode(emb, u, w, start, end_token):
    tokens = np.zeros(8, dtype=np.int32)
    h = np.zeros(u.shape[0], dtype=np.float32)
    tok = start
    n = 0
    while n < 8:
        h = np.tanh(emb[tok] + h @ u)
        tok = np.argmax(h @ w)
        tokens[n] = tok
        n += 1
        if tok == end_token:
            break
    return tokens, n


def cg(A, b, tol=1e-8, max_steps=50):
    x = np.zeros_like(b)
    r = b - A @ x
    p = r.copy()
    rs = r @ r
    k = 0
    while k < max_steps and math.sqrt(rs) > tol:
        Ap = A @ p
        alpha = rs / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = r @ r
        p = r + (rs_new / rs) * p
        rs = rs_new
        k += 1
    return x, k


def cases():
    rng = np.random.RandomState(0)
    emb = rng.standard_normal((16, 8)).astype(np.float32)
    u = (rng.standard_normal((8, 8)) * 0.5).astype(np.float32)
    w = rng.standard_normal((8, 16)).astype(np.float32)
    m = rng.standard_normal((8, 8))
    A = m @ m.T + 8 * np.eye(8)
    b = rng.standard_normal(8)
    return [
        ("tiny (x + 1)", tiny, (np.ones(4, np.float32),)),
        ("count_up", count_up, (np.array([0.5, 1.5], np.float32), 20.0)),
        ("greedy_decode", greedy_decode, (emb, u, w, 3, 0)),
        ("cg 8x8", cg, (A, b)),
    ]


def per_call_us(fn, batch):
    t0 = time.perf_counter()
    for _ in range(batch):
        fn()
    return (time.perf_counter() - t0) / batch * 1e6


def main():
    quick = "--quick" in sys.argv
    repeat, batch = (7, 50) if quick else (21, 200)
    print("cfx.jit call cost, cpu executor: median of %d batches of %d calls" % (repeat, batch))
    print("| function | first call ms | graph call us | jit call us | ratio | translations |")
    print("| --- | --- | --- | --- | --- | --- |")
    worst = 0.0
    for name, fn, args in cases():
        count = [0]
        real = _jit._specialize

        def counting(*a, **k):
            if not a[2:] or not a[2]:
                count[0] += 1
            return real(*a, **k)
        _jit._specialize = counting
        try:
            j = cfx.jit(fn, backend="cpu")
            t0 = time.perf_counter()
            j(*args)
            first_ms = (time.perf_counter() - t0) * 1e3
            spec = j._specs[next(iter(j._specs))]
            g = cfx.compile(spec.text).graph(spec.name)
            values = j._values(args, {})
            inputs = {n: values[i] for n, i in spec.inputs}
            graph_call = lambda: g(**inputs, backend="cpu")
            jit_call = lambda: j(*args)
            for _ in range(20):
                graph_call()
                jit_call()
            gs, js = [], []
            for _ in range(repeat):
                gs.append(per_call_us(graph_call, batch))
                js.append(per_call_us(jit_call, batch))
        finally:
            _jit._specialize = real
        gm, jm = statistics.median(gs), statistics.median(js)
        worst = max(worst, jm / gm)
        print("| %s | %.1f | %.1f | %.1f | %.2f | %d |" % (name, first_ms, gm, jm, jm / gm, count[0]))
    print("worst ratio %.2f (bound 2.00): %s" % (worst, "ok" if worst <= 2.0 else "OVER"))
    return 0 if worst <= 2.0 else 1


if __name__ == "__main__":
    sys.exit(main())
