"""Expected results of graphs/nested_graphs.cfx with Python's nested functions and lambdas
(float32 arithmetic; the sum accumulated in float64, as cfx does)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import F, arr, arg, fmt, fmt_vec, fsum  # noqa: E402


def run(x, k):
    x = arr(x)
    print("# run: x=%s k=%d" % (arg(x), k))
    alpha = F(0.5)

    def blend(a, b):
        return F(F(alpha * a) + F(F(F(1) - alpha) * b))

    smoothed = x.copy()
    for i in range(1, len(x)):
        smoothed[i] = blend(x[i], smoothed[i - 1])
    alpha = F(0.25)
    total = blend(fsum(x), F(0))
    sq = lambda v: F(v * v)  # noqa: E731
    pick = lambda c, a, b: a if c else b  # noqa: E731
    picked = pick(k > 0, sq(x[0]), sq(x[1]))

    def limit():
        return F(F(8) * alpha)

    def clipped(v):
        return min(v, limit())

    print("# expect: smoothed = " + fmt_vec(smoothed))
    print("# expect: total = " + fmt(total))
    print("# expect: picked = " + fmt(picked))
    print("# expect: clipped_last = " + fmt(clipped(x[3])))


run([1, 3, -2, 5], 1)
run([0.5, 2, 4, 1.5], 0)
