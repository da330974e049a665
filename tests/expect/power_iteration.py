"""Expected results of graphs/power_iteration.cfx, in float32 as cfx computes them.

Runs the same iteration as the graph (normalize, multiply, Rayleigh quotient, stop when two
successive estimates agree to tol relative) and prints the `# expect:` lines of each run. Also
checks that no stopping test was close to flipping (so float rounding on another backend
cannot change the step count), and that the estimate agrees with numpy's eigvalsh.
"""
import sys
import os

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import F, arr, dot, norm, matmul, fmt, fmt_vec, arg, arg_mat  # noqa: E402


def power_iteration(a, v0, tol, max_steps):
    a, v0, tol = arr(a), arr(v0), F(tol)
    v = v0 / norm(v0)
    eig = dot(v, matmul(a, v))
    steps = 0
    while steps < max_steps:
        w = matmul(a, v)
        v = w / norm(w)
        nxt = dot(v, matmul(a, v))
        steps += 1
        lhs, rhs = abs(nxt - eig), tol * abs(nxt)
        # f32 noise in nxt - eig is a few ulps of eig; the test must clear it with room
        if abs(lhs - rhs) < max(0.05 * rhs, 16 * np.finfo(np.float32).eps * abs(nxt)):
            raise SystemExit("stopping test too close to call at step %d" % steps)
        if lhs <= rhs:
            eig = nxt
            break
        eig = nxt
    return eig, v, steps


RUNS = [
    ([[2, 1, 0], [1, 3, 1], [0, 1, 4]], [1, 1, 1], 1e-5, 100),
    ([[6, 2, 1], [2, 3, 1], [1, 1, 1]], [1, 0, 0], 3e-6, 100),
    ([[2, 1, 0], [1, 3, 1], [0, 1, 4]], [1, 1, 1], 1e-5, 3),
]
for a, v0, tol, max_steps in RUNS:
    eig, v, steps = power_iteration(a, v0, tol, max_steps)
    if steps < max_steps:
        true = np.linalg.eigvalsh(np.asarray(a, np.float64))[-1]
        assert abs(eig - true) < 1e-4 * true, (eig, true)
    print("# run: a=%s v0=%s tol=%s max_steps=%d" % (arg_mat(a), arg(v0), fmt(tol), max_steps))
    print("# expect: eigenvalue = %s" % fmt(eig))
    print("# expect: v = %s" % fmt_vec(v))
    print("# expect: steps = %d" % steps)


def power_iteration_bench(a, v0, tol, max_steps):
    """The loop of profiling/bench/power_iteration.cfx: the estimate v.(a v) before v is
    renormalized, stopping when it moves by at most tol (absolute)."""
    a, v0, tol = arr(a), arr(v0), F(tol)
    v = v0 / norm(v0)
    eig, delta, steps = F(0), F(1), 0
    while steps < max_steps:
        if abs(delta - tol) < 0.05 * tol:
            raise SystemExit("stopping test too close to call at step %d" % steps)
        if not delta > tol:
            break
        w = matmul(a, v)
        nxt = dot(v, w)
        delta = abs(nxt - eig)
        eig = nxt
        v = w / norm(w)
        steps += 1
    return eig, v, steps


# 96 x 96 (graphs/data/cg96_a.npy, written by conjugate_gradient.py, from v0 = cg96_b.npy), with
# the benchmark's loop: more than a persistent kernel's one-block loop takes, so its blocks
# share the work
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
a96 = np.load(os.path.join(ROOT, "graphs/data/cg96_a.npy"))
b96 = np.load(os.path.join(ROOT, "graphs/data/cg96_b.npy"))
eig, v, steps = power_iteration_bench(a96, b96, 5e-3, 100)
print("# run: a=graphs/data/cg96_a.npy v0=graphs/data/cg96_b.npy tol=0.005 max_steps=100 "
      "--graph power_iteration_96")
print("# expect: eigenvalue = %s" % fmt(eig))
print("# expect: v = %s" % fmt_vec(v))
print("# expect: steps = %d" % steps)
