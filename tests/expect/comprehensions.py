"""Expected results of graphs/comprehensions.cfx with numpy: list comprehensions (sums of f32
accumulated in float64, as cfx does), shapes as values."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import F, arr, arg, arg_mat, fmt, fmt_vec, fsum  # noqa: E402


def fmt_mat(a):
    return "[" + ", ".join(fmt_vec(r) for r in a) + "]"


def run(x, m):
    x, m = arr(x), arr(m)
    print("# run: x=%s m=%s" % (arg(x), arg_mat(m)))
    print("# expect: doubled = " + fmt_vec([F(2) * v for v in x]))
    print("# expect: pairs = " + fmt_vec([F(x[i] + x[i + 1]) for i in range(len(x) - 1)]))
    print("# expect: dots = " + fmt_vec([fsum(r * x) for r in m]))
    pos = [v for v in x if v > 0]
    print("# expect: positive = %d" % len(pos))
    s = F(0)
    for p in pos:
        s = F(s + p)
    print("# expect: pos_sum = " + fmt(s))
    print("# expect: flat = " + fmt_mat(np.reshape(np.array([F(v + 1) for r in m for v in r]), m.shape)))
    print("# expect: padded = " + fmt_mat(np.zeros(m.shape, np.float32) + x))
    print("# expect: col = " + fmt_mat(np.ones((m.shape[0], 1), np.float32) * F(3)))
    print("# expect: same = " + ("true" if m.shape[1:] == x.shape else "false"))
    n, k = m.shape
    print("# expect: dims = %d" % (n * 10 + k))


run([1, -2, 3.5, 0.25], [[1, 2, 3, 4], [-1, 0.5, 0, 2]])
run([-1, -2, -3, -4], [[0, 0, 0, 0], [1, 1, 1, 1]])
