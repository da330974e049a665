"""Expected results of graphs/tuple_values.cfx with plain Python tuples and float32 arithmetic."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import F, arr, arg, fmt  # noqa: E402


def width(b):
    return F(b[1] - b[0])


def shift(b, d):
    return (F(b[0] + d), F(b[1] + d))


def run(x, k):
    x = arr(x)
    print("# run: x=%s k=%d" % (arg(x), k))
    bounds = (x[0], x[0])
    for v in x:
        low, high = bounds
        bounds = (min(low, v), max(high, v))
    lo, hi = bounds
    shifted = shift(bounds, F(1.5))
    pick = (x[1], x[2]) if k > 0 else (x[3], x[4])
    print("# expect: lo = " + fmt(lo))
    print("# expect: hi = " + fmt(hi))
    print("# expect: span = " + fmt(width(bounds)))
    print("# expect: moved = " + fmt(F(shifted[1] - shifted[-2])))
    print("# expect: first = " + fmt(pick[0]))
    print("# expect: same = " + ("true" if pick == bounds else "false"))
    print("# expect: count = %d" % len(bounds + pick))


run([3, -1.5, 4, 1, 5.25], 1)
run([2, 2, 2, 2, 2], 0)
