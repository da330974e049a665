"""Expected results of graphs/broadcasting.cfx, computed with numpy's broadcasting in float32:
a bias row added in a loop of dense steps, an outer product of a column and a row, a mask
of rows against a row of thresholds, and where() choosing between a matrix and a row. Matrix
products accumulate in float64 and round once, as cfx does (f32.matmul)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import F, arr, fmt_vec, matmul, arg, arg_mat  # noqa: E402


def mat(m):
    return "[" + ", ".join(fmt_vec(r) for r in m) + "]"


def bools(m):
    return "[" + ", ".join("[" + ", ".join("true" if b else "false" for b in r) + "]" for r in m) + "]"


x = arr([[1, -2, 0.5], [0, 3, -1]])           # f32[2, 3]
w = arr([[0.5, -1, 0], [1, 0.25, 2], [-0.5, 1, 1]])  # f32[3, 3]
bias = arr([0.1, -0.2, 0.3])                  # f32[3]
col = arr([[1], [-2]])                        # f32[2, 1]
row = arr([[3, 0.5, -1]])                     # f32[1, 3]
h = x
for _ in range(3):
    h = np.maximum(matmul(h, w) + bias, F(0))  # relu(h @ w + bias)
print("# run: x=%s w=%s bias=%s col=%s row=%s" % (arg_mat(x), arg_mat(w), arg(bias), arg_mat(col), arg_mat(row)))
print("# expect: h = " + mat(h))
print("# expect: outer = " + mat(col * row))
print("# expect: mask = " + bools(x > bias))
print("# expect: pick = " + mat(np.where(x > bias, x, bias)))
print("# expect: centered = " + mat(x - (x[0] + x[1]) / F(2)))
