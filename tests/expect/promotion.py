"""Expected results of graphs/promotion.cfx, with numpy under PyTorch's promotion rule: numpy's
own rule agrees for every operation here but i64 with f32, which numpy makes f64 and PyTorch
(and cfx) f32; that one is computed in f32 explicitly. A Python scalar keeps the array's dtype,
as np.float32(x) + 7.0 does; a real scalar beside an integer array gives f32 (PyTorch's default
real), written out with F()."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import F, arr, fmt, fmt64, fmt_vec, arg  # noqa: E402


def run(n, big, x, d, flag, v, w, m):
    n, big, x, d = np.int32(n), np.int64(big), F(x), np.float64(d)
    v, w, m = np.array(v, np.int32), arr(w), np.array(m, np.int32)
    print("# run: n=%d big=%d x=%s d=%s flag=%s v=%s w=%s m=%s" % (
        n, big, fmt(x), fmt64(d), "true" if flag else "false",
        "[" + ",".join(str(e) for e in v) + "]", arg(w),
        "[" + ",".join("[" + ",".join(str(e) for e in r) + "]" for r in m) + "]"))
    print("# expect: wide = %d" % (n + big))                           # i32 + i64 -> i64
    print("# expect: real = " + fmt(n * x))                            # i32 * f32 -> f32
    print("# expect: real64 = " + fmt64(np.float64(x) + d))            # f32 + f64 -> f64
    print("# expect: count = %d" % (n + np.int32(flag) + np.int32(n > 6)))  # bool counts 1
    print("# expect: mixed = " + fmt_vec(v.astype(np.float32) * w + F(1)))
    print("# expect: below = %s" % ("true" if F(n) < x + F(7) else "false"))
    print("# expect: pick = " + fmt(F(n) if flag else x))
    print("# expect: dotp = " + fmt(F(np.dot(v.astype(np.float64), w.astype(np.float64)))))
    print("# expect: mv = " + fmt_vec((m.astype(np.float64) @ (w[0:2] * F(0.5)).astype(np.float64)).astype(np.float32)))
    print("# expect: big_real = " + fmt(F(big) * x))                   # i64 * f32 -> f32 (PyTorch)
    print("# expect: half = " + fmt(F(n) + F(0.5)))
    print("# expect: steps = %d" % len(range(int(n), int(n) + 3)))


run(7, 3000000000, 0.5, 0.1, True, [1, 2, 3], [0.5, 1, 2], [[1, 2], [3, 4]])
run(-2, 10, -0.25, 2, False, [4, 0, -1], [1, 1, 1], [[0, 1], [1, 0]])
