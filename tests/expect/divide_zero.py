"""Expected results of graphs/divide_zero.cfx: integer //, %, C's truncdiv and fmod, and `/` of
integers as float32 true division, with numpy (np.floor_divide, np.mod, np.fmod, and a trunc of
the exact quotient, as PyTorch's rounding_mode='trunc' gives it); the countdown loop in Python."""
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import F, fmt  # noqa: E402

warnings.simplefilter("ignore")  # numpy warns on INT_MIN // -1 and on 1 / 0
I = np.int32
for a, b in [(7, 2), (-7, 2), (7, -2), (-7, -2), (-2147483648, -1)]:
    x, y = I(a), I(b)
    t = -(abs(a) // abs(b)) if (a < 0) != (b < 0) else abs(a) // abs(b)
    trunc = np.array([t], dtype=np.int64).astype(np.int32)[0]  # wraps: INT_MIN / -1 is INT_MIN
    print("# run: a=%d b=%d" % (a, b))
    print("# expect: q = %d" % np.floor_divide(x, y))
    print("# expect: r = %d" % np.mod(x, y))
    print("# expect: t = %d" % trunc)
    print("# expect: f = %d" % np.fmod(x, y))
    print("# expect: x = " + fmt(F(x) / F(y)))
for a, b in [(5, 0), (0, 0)]:
    print("# run: a=%d b=%d --graph true_divide" % (a, b))
    print("# expect: x = " + fmt(F(a) / F(b)))
acc, d = 0, 5
while d >= 1:
    acc, d = acc + 100 // d, d - 1
print("# run: n=5 --graph countdown_to_one")
print("# expect: acc = %d" % acc)
