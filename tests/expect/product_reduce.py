"""Expected results of graphs/product_reduce.cfx: matrix-vector products whose results
reductions read right after them (a dot product, an argmax, and a sum and a max in one batch).
Every value is a small integer, so float32 holds each exactly whatever the order of the sums,
and numpy in float64 gives cfx's results exactly. argmax takes the first of equal values, as
cfx (and numpy) do.

The matrix (entries -1, 0, 1) and the vector (integers -3 .. 3) were drawn once with numpy's
default_rng(7); with --write-data the script (re)writes graphs/data/pr_a.npy. It prints the
graph's `# run:` and `# expect:` lines."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import arg, fmt, fmt_vec  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
N = 96

rng = np.random.default_rng(7)
a = rng.integers(-1, 2, (N, N)).astype(np.float32)
v = rng.integers(-3, 4, N).astype(np.float32)
if "--write-data" in sys.argv:
    np.save(os.path.join(ROOT, "graphs/data/pr_a.npy"), a)


def pymod(x, m):  # Python's % (the divisor's sign), as cfx's % on reals
    return x - np.floor(x / m) * m


def run(n):
    a64 = a.astype(np.float64)
    x = v.astype(np.float64)
    d, best, s, m = 0.0, 0, 0.0, 0.0
    for _ in range(n):
        w = a64 @ x
        d = d + float(np.dot(w, x))
        u = a64 @ w
        best = (best * 7 + int(np.argmax(u))) % 1000
        t = a64 @ pymod(w, 5.0)
        s = s + float(np.sum(t))
        m = m + float(np.max(t))
        x = pymod(w, 7.0) - 3.0
    for value in (d, s, m) + tuple(x):
        assert abs(value) < 2 ** 24 and value == int(value), "not exact in float32"
    return d, best, s, m, x


for n in (0, 1, 4):
    d, best, s, m, x = run(n)
    print("# run: a=graphs/data/pr_a.npy v=%s n=%d" % (arg(v), n))
    print("# expect: d = %s" % fmt(d))
    print("# expect: best = %d" % best)
    print("# expect: s = %s" % fmt(s))
    print("# expect: m = %s" % fmt(m))
    print("# expect: x = %s" % fmt_vec(np.asarray(x, np.float32)))
