"""Expected results of graphs/numpy_forms.cfx with numpy: @ of a vector, reductions along an
axis (float32, sums accumulated in float64 as cfx does; mean is that sum as float32 divided by
the count in float32), keepdims, and Python's casts."""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import F, arr, arg, arg_mat, fmt, fmt_vec, fmt_int_vec  # noqa: E402


def bools(v):
    return "[" + ", ".join("true" if e else "false" for e in np.ravel(v)) + "]"


def run(x, m, b, n):
    x, m, b = arr(x), arr(m), np.array(b, dtype=bool)
    print("# run: x=%s m=%s b=%s n=%d" % (arg(x), arg_mat(m),
          "[" + ",".join("[" + ",".join("true" if e else "false" for e in r) + "]" for r in b) + "]", n))
    m64 = m.astype(np.float64)
    print("# expect: row = " + fmt_vec((x.astype(np.float64) @ m64).astype(np.float32)))
    print("# expect: inner = " + fmt(F(np.dot(x.astype(np.float64), x.astype(np.float64)))))
    cols = m64.sum(axis=0).astype(np.float32)
    print("# expect: cols = " + fmt_vec(cols))
    print("# expect: rows = " + fmt_vec(m64.sum(axis=1).astype(np.float32)))
    print("# expect: top = " + fmt_vec(m.max(axis=-1)))
    print("# expect: where_top = " + fmt_int_vec(m.argmax(axis=0)))
    kept = m.max(axis=1, keepdims=True)
    print("# expect: kept = [" + ", ".join(fmt_vec(r) for r in kept) + "]")
    print("# expect: lowest = " + fmt_vec(m.min(axis=0)))
    print("# expect: col_mean = " + fmt_vec(cols / F(m.shape[0])))
    print("# expect: all_cols = " + bools(b.all(axis=0)))
    print("# expect: any_row = " + bools(b.any(axis=-1)))
    print("# expect: capped = " + fmt_vec(np.minimum(m[0], np.inf)))
    print("# expect: sq = %d" % (n ** 2))
    print("# expect: casts = " + fmt_vec(arr([float(n), float(int(-2.7)), float(bool(x[0]))])))
    print("# expect: flags = " + bools([True, False, bool(n)]))


run([1, 2], [[1, 5, 3], [4, 2, 6]], [[True, False, True], [True, True, True]], 7)
run([0, -0.5], [[0.1, -5, 2.5], [0.2, 7, -1]], [[False, False, True], [False, False, False]], 0)
