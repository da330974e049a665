"""Expected results of graphs/ops_tour.cfx: every built-in op once, computed with numpy in
float32 (reductions, dot, norm and matrix products accumulated in float64 and rounded once, as
cfx does). Prints the `# run:` line and the `# expect:` lines in the graph's result order."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import F, arr, dot, norm, fsum, matmul, fmt, fmt64, fmt_vec, arg, arg_mat, rounded  # noqa: E402

x = arr([[0.5, -1, 2], [3, -4, 0.25]])
y = arr([1.5, -2, 0.5])


def vec(v):
    return fmt_vec(v)


def mat(m):
    return "[" + ", ".join(vec(r) for r in m) + "]"


def bools(v):
    return "[" + ", ".join("true" if b else "false" for b in v) + "]"


def ints(v):
    return "[" + ", ".join(str(int(e)) for e in v) + "]"


results = [
    ("e", vec(rounded(np.exp, x[0]))),
    ("l", vec(rounded(np.log, np.abs(y) + F(1)))),
    ("s", vec(np.sqrt(np.abs(x[1])))),
    ("th", vec(rounded(np.tanh, y))),
    ("sg", vec(F(1) / (F(1) + rounded(np.exp, -y)))),
    ("rl", vec(np.maximum(x[1], F(0)))),
    ("pw", vec(rounded(np.power, np.abs(y), F(1.5)))),
    ("mn", vec(np.minimum(x[0], y))),
    ("mx", vec(np.maximum(x[0], y))),
    ("q", vec(x[0] / y)),
    ("xt", mat(x.T)),
    ("gram", mat(matmul(x, x.T))),
    ("xy", vec(matmul(x, y))),
    ("total", fmt(fsum(x))),
    ("avg", fmt(F(np.sum(x.astype(np.float64)) / x.size))),
    ("big", fmt(x.max())),
    ("small", fmt(x.min())),
    ("amax", str(int(np.argmax(y)))),
    ("amin", str(int(np.argmin(x[1])))),
    ("d", fmt(dot(y, y))),
    ("n", fmt(norm(x[0]))),
    ("every", "true" if np.all(y > -10) else "false"),
    ("some", "true" if np.any(y < 0) else "false"),
    ("kept", vec(np.where(y > 0, y, F(0)))),
    ("io", vec(np.arange(3, dtype=np.float32) * F(2) + F(1))),
    ("rows", str(len(x))),
    ("third", "[" + ", ".join(fmt64(v) for v in y.astype(np.float64) / 3.0) + "]"),
    ("wide", ints(np.trunc(x[1]).astype(np.int64) * 3)),
    ("flip", bools(~(y > 0))),
    ("cmp", bools(x[0] <= y)),
    ("filled", ints(np.full(2, 7))),
]
print("# run: x=%s y=%s" % (arg_mat(x), arg(y)))
for name, text in results:
    print("# expect: %s = %s" % (name, text))
