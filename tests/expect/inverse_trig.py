"""Expected results of graphs/inverse_trig.cfx: atan asin acos asinh acosh atanh and atan2 in
float32, correctly rounded (numpy's arctan arcsin arccos arcsinh arccosh arctanh arctan2 in
float64, rounded once: f32.rounded; NaN past the domains, atanh(+-1) = +-inf), atan2's four
quadrants, its axes and signed zeros (C99: atan2(+0, -x) = pi, atan2(-0, -x) = -pi, the same
with x = -0), and the same functions in float64."""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import F, arr, fmt_vec, arg, rounded  # noqa: E402

u = arr([-1.5, -1, -0.5, 0, 0.5, 1])
y = arr([1, 1, -1, -1, 0, 0, 2, -3])
x = arr([1, -1, -1, 1, -1, 1, 0, 0.25])
zr = arr([0, 0, 0])
o = arr([1, 0, 2])
w = np.array([-0.75, 0.25, 0.5, 0.9])


def fmt64(v):
    return "[" + ", ".join(repr(float(e)) for e in v) + "]"


with np.errstate(invalid="ignore", divide="ignore"):
    print("# run: u=%s y=%s x=%s zr=%s o=%s w=%s" % (arg(u), arg(y), arg(x), arg(zr), arg(o),
                                                    "[" + ",".join(repr(float(e)) for e in w) + "]"))
    print("# expect: at = " + fmt_vec(rounded(np.arctan, u)))
    print("# expect: sn = " + fmt_vec(rounded(np.arcsin, u)))
    print("# expect: cs = " + fmt_vec(rounded(np.arccos, u)))
    print("# expect: sh = " + fmt_vec(rounded(np.arcsinh, u)))
    print("# expect: ch = " + fmt_vec(rounded(np.arccosh, u + F(1.5))))
    print("# expect: th = " + fmt_vec(rounded(np.arctanh, u)))
    print("# expect: a2 = " + fmt_vec(rounded(np.arctan2, y, x)))
    print("# expect: pz = " + fmt_vec(rounded(np.arctan2, zr, -o)))   # +0 over -1, -0, -2: pi
    print("# expect: nz = " + fmt_vec(rounded(np.arctan2, -zr, -o)))  # -0 over them: -pi
    print("# expect: nzp = " + fmt_vec(rounded(np.arctan2, -zr, o)))  # -0 over 1, +0, 2: -0
    # in double by C's math library (Python's math), the same on every x86-64 machine, where
    # numpy's float64 functions take other SIMD code on AVX-512 than on AVX2
    print("# expect: w64 = " + fmt64([math.atan(v) + math.asin(v) * math.acos(v) - math.asinh(v) + math.atanh(v)
                                      + math.acosh(v + 2.0) + math.atan2(v, v - 0.5) for v in map(float, w)]))
