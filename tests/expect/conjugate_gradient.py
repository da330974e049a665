"""Expected results of graphs/conjugate_gradient.cfx, in float32 as cfx computes them.

Runs the same conjugate-gradient iteration as the graph and prints the `# expect:` lines of each
run. Checks that no stopping test was a close call (so rounding differences between backends
cannot change the iteration count) and that x solves a x = b to 1e-3 in float64. With
--write-data it also (re)writes the 32x32 and 96x96 systems in graphs/data/ (np.save, float32).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import F, arr, dot, matmul, fmt, fmt_vec, arg, arg_mat  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def close_call(lhs, rhs, what):
    if abs(float(lhs) - float(rhs)) < 0.05 * abs(float(rhs)):
        raise SystemExit("%s: stopping test too close to call (%g vs %g)" % (what, lhs, rhs))


def cg(a, b, tol, max_steps):
    a, b, tol = arr(a), arr(b), F(tol)
    x = np.zeros(len(b), np.float32)
    r = b.copy()
    p = b.copy()
    rs = dot(r, r)
    steps = 0
    while True:
        close_call(np.sqrt(rs), tol, "step %d" % steps)
        if not (np.sqrt(rs) > tol and steps < max_steps):
            break
        ap = matmul(a, p)
        alpha = rs / dot(p, ap)
        x = x + alpha * p
        r = r - alpha * ap
        rs_new = dot(r, r)
        p = r + (rs_new / rs) * p
        rs = rs_new
        steps += 1
    converged = bool(np.sqrt(rs) <= tol)
    if converged:
        err = np.abs(np.asarray(a, np.float64) @ x - b).max()
        assert err < 1e-3, err
    return x, steps, converged


def system(n):
    a = np.zeros((n, n), np.float32)
    for i in range(n):
        a[i, i] = 4 + i % 3
        if i + 1 < n:
            a[i, i + 1] = a[i + 1, i] = -1
        if i + 4 < n:
            a[i, i + 4] = a[i + 4, i] = 0.5
    b = np.array([np.sin(i + 1) for i in range(n)], np.float32)
    return a, b


def show(run_line, x, steps, converged):
    print("# run: " + run_line)
    print("# expect: x = %s" % fmt_vec(x))
    print("# expect: iters = %d" % steps)
    print("# expect: converged = %s" % ("true" if converged else "false"))


A4 = [[4, 1, 0, 0], [1, 4, 1, 0], [0, 1, 4, 1], [0, 0, 1, 4]]
for b, tol, max_steps in (([1, 2, 3, 4], 1e-4, 20), ([1, 0, 0, 0], 1e-4, 20), ([1, 2, 3, 4], 1e-4, 2)):
    x, steps, converged = cg(A4, b, tol, max_steps)
    show("a=%s b=%s tol=%s max_steps=%d" % (arg_mat(A4), arg(b), fmt(tol), max_steps),
         x, steps, converged)

# 32 x 32, and 96 x 96: more than a persistent kernel's one-block loop takes, so its blocks
# share the work
for n in (32, 96):
    a, b = system(n)
    if "--write-data" in sys.argv:
        np.save(os.path.join(ROOT, "graphs/data/cg%d_a.npy" % n), a)
        np.save(os.path.join(ROOT, "graphs/data/cg%d_b.npy" % n), b)
    x, steps, converged = cg(a, b, 1e-4, 100)
    show("a=graphs/data/cg%d_a.npy b=graphs/data/cg%d_b.npy tol=0.0001 max_steps=100 "
         "--graph conjugate_gradient_%d" % (n, n, n), x, steps, converged)
