"""Expected results of graphs/unary_math.cfx: sin cos tan floor ceil round erf sign in float32
(numpy; sin cos tan correctly rounded, in float64 rounded once: f32.rounded; erf, which numpy
lacks, from Python's math.erf in double, rounded once), and sign of i32. The rotation loop runs
in float32 step by step, as cfx does."""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import F, arr, fmt, fmt_vec, fmt_int_vec, arg, rounded  # noqa: E402

x = arr([-2.5, -0.5, 0, 0.5, 1.5, 2.5])
k = np.array([-7, 0, 3], dtype=np.int32)
print("# run: x=%s k=[-7,0,3] steps=8" % arg(x))
print("# expect: s = " + fmt_vec(rounded(np.sin, x)))
print("# expect: c = " + fmt_vec(rounded(np.cos, x)))
print("# expect: t = " + fmt_vec(rounded(np.tan, x)))
print("# expect: fl = " + fmt_vec(np.floor(x)))
print("# expect: ce = " + fmt_vec(np.ceil(x)))
print("# expect: ro = " + fmt_vec(np.round(x)))  # halves to even
print("# expect: er = " + fmt_vec(arr([math.erf(float(v)) for v in x])))
print("# expect: sg = " + fmt_vec(np.sign(x)))
print("# expect: si = " + fmt_int_vec(np.sign(k)))
# rotate (1, 0) by pi/4 eight times: back near (1, 0)
a = F(math.pi) / F(4)
ca, sa = rounded(np.cos, a), rounded(np.sin, a)
p, q = F(1), F(0)
for _ in range(8):
    p, q = F(F(p * ca) - F(q * sa)), F(F(p * sa) + F(q * ca))
print("# expect: back = " + fmt_vec(arr([p, q])))
