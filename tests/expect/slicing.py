"""Expected results of graphs/slicing.cfx with numpy's indexing: x[i, j], columns x[:, j],
row ranges x[a:b], windows x[i, j:j+2] and x[k:k+2] with run-time starts, negative bounds, and
writes through them (an element, a column with +=, a block). A start that leaves no room for
the window stops the run with status index, as the header's `# stop:` lines say."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import F, arr, fmt, fmt_vec, arg_mat  # noqa: E402

FILE = "graphs/slicing.cfx"


def mat(m):
    return "[" + ", ".join(fmt_vec(r) for r in m) + "]"


def program(x, i, j):
    n, m = x.shape
    if not -n <= i < n:
        return "%s:32:3: run stopped: index: 'x' has %d rows, index was %d" % (FILE, n, i)
    if not 0 <= j <= m - 2:
        return "%s:32:3: run stopped: index: the slice of 'x' starts at %d, outside 0 to %d" % (FILE, j, m - 2)
    win = x[i, j:j + 2]
    sums = F(0)
    for k in range(n - 1):  # sums over the sliding pairs of column 0
        sums = F(sums + F(np.sum(x[k:k + 2, 0].astype(np.float64))))
    y = x.copy()
    y[i, j] = F(-1)
    y[:, m - 1] += F(10)
    y[0:2, 0:2] = np.zeros((2, 2), np.float32)
    return [("corner", fmt(x[-1, -1])), ("col", fmt_vec(x[:, 1])), ("mid", mat(x[1:3])), ("win", fmt_vec(win)),
            ("last2", mat(x[-2:])), ("sums", fmt(sums)), ("y", mat(y))]


x = arr([[1, 2, 3], [4, 5, 6], [7, 8, 9.5], [10, -11, 12]])
for i, j in [(1, 1), (-1, 0), (4, 0), (0, 2)]:
    print("# run: x=%s i=%d j=%d" % (arg_mat(x), i, j))
    out = program(x, i, j)
    if isinstance(out, str):
        print("# stop: " + out)
    else:
        for name, value in out:
            print("# expect: %s = %s" % (name, value))
