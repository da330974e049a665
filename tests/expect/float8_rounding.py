"""Expected results of graphs/float8_rounding.cfx: ml_dtypes' casts of float32 to the float8
types and float4e2m1 (its conversion without saturation, float4e2m1's saturating), and to
float8e8m0 (the nearest power of two, halfway up), step by step in the loops. ml_dtypes is a
dependency of the onnx package."""
import os
import sys

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import F, arr, fmt, fmt_vec, arg  # noqa: E402


def to(v, t):
    with np.errstate(over="ignore", invalid="ignore"):
        return arr(v).astype(t).astype(np.float32)


n = 40
x = arr([1.0625, 100.0, 464.0, 465.0, -0.3, 61440.0, 5.0, 1.5, 0.0029296875, 3e-39])
print("# run: n=%d x=%s" % (n, arg(x)))
s4 = F(0)
s5 = F(0)
for _ in range(n):
    s4 = to(s4 + F(1), ml_dtypes.float8_e4m3fn)[()]
    s5 = to(s5 + F(0.3), ml_dtypes.float8_e5m2)[()]
print("# expect: s4 = " + fmt(s4))
print("# expect: s5 = " + fmt(s5))
for name, t in (("e4", ml_dtypes.float8_e4m3fn), ("e4u", ml_dtypes.float8_e4m3fnuz),
                ("e5", ml_dtypes.float8_e5m2), ("e5u", ml_dtypes.float8_e5m2fnuz),
                ("f4", ml_dtypes.float4_e2m1fn)):
    print("# expect: %s = %s" % (name, fmt_vec(to(x, t))))
# float8e8m0 of the positive ones (ml_dtypes gives NaN for a negative value, as cfx)
print("# expect: e8 = " + fmt_vec(to(x, ml_dtypes.float8_e8m0fnu)))
