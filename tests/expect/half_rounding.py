"""Expected results of graphs/half_rounding.cfx: numpy's float16 and ml_dtypes' bfloat16 (a
dependency of the onnx package), step by step, beside float32. Without ml_dtypes the bfloat16
figures come from rounding by hand: keep the float32's top 16 bits, halves to even."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import F, arr, fmt, fmt_vec, arg  # noqa: E402


def bf16(v):
    """float32 values rounded to bfloat16 (as float32): by ml_dtypes, or by the bits."""
    v = arr(v)
    try:
        import ml_dtypes
        return v.astype(ml_dtypes.bfloat16).astype(np.float32)
    except ImportError:
        u = v.view(np.uint32).astype(np.uint64)
        u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
        return u.astype(np.uint32).view(np.float32)


n = 3000
x = arr([1.0009765625 + 2.0 ** -11, -0.3, 65519.0, 65520.0, 1e-8, 3.0e38, 1.0 + 2.0 ** -11])
print("# run: n=%d x=%s" % (n, arg(x)))
h = np.float16(0)
b = F(0)
f = F(0)
step = F(0.1)
for _ in range(n):
    h = np.float16(h + np.float16(step))
    b = bf16(b + bf16(step)[()])[()]
    f = F(f + step)
print("# expect: h = " + fmt(F(h)))
print("# expect: b = " + fmt(b))
print("# expect: f = " + fmt(f))
with np.errstate(over="ignore"):
    print("# expect: hx = " + fmt_vec(x.astype(np.float16).astype(np.float32)))
print("# expect: bx = " + fmt_vec(bf16(x)))
