"""Expected results of graphs/rank5.cfx with numpy: a vector reshaped to rank 5, broadcast
against a rank-3 bias from both sides, read through indices, slices and a run-time window,
reduced along an axis, walked over its first dimension into a list of rank-4 items, written
through a subscript and reshaped back. Every value is a multiple of 0.5 below 2^10, so float32
holds each sum exactly. A window start out of range stops the run with status index."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import F, arr, fmt, fmt_vec, fmt_int_vec, arg, arg_mat, fsum  # noqa: E402

FILE = "graphs/rank5.cfx"
LINE = 36  # the line of `win = b[i, j:j + 2, 1, 0, :]`


def nested(a, f=fmt):
    if a.ndim == 1:
        return "[" + ", ".join(f(e) for e in a) + "]"
    return "[" + ", ".join(nested(r, f) for r in a) + "]"


def program(v, bias, i, j):
    x = v.reshape(2, 3, 1, 2, 2)
    b = x * F(0.5) + bias  # (2, 3, 2, 2, 2)
    if not -2 <= i < 2:
        return "%s:%d:3: run stopped: index: 'b' has 2 rows, index was %d" % (FILE, LINE, i)
    if not 0 <= j <= 1:
        return "%s:%d:3: run stopped: index: the slice of 'b' starts at %d, outside 0 to 1" % (FILE, LINE, j)
    out = [("e", fmt(b[1, -1, 0, 1, 0])), ("part", nested(b[:, 1, :, 0, 1])), ("win", nested(b[i, j:j + 2, 1, 0, :]))]
    red = np.sum(b.astype(np.float64), axis=2).astype(np.float32).reshape(6, 4)
    top = np.argmax(b, axis=1).reshape(16)
    tot = np.zeros((3, 2, 2, 2), np.float32)
    xs = []
    for t in b:
        tot = tot + t * t
        xs.append(t - F(1))
    sq = np.sum(tot.astype(np.float64), axis=0).astype(np.float32)
    st = np.stack(xs)[-1, 0, :, 1, :]
    b = b.copy()
    b[i, j, 1] = np.zeros((2, 2), np.float32)
    b[:, :, 0, 1, 1] += F(100)
    pos = fsum(np.where(b > 0, b, F(0)))
    back = b.reshape(2, 24)[1]
    out += [("red", nested(red)), ("top", fmt_int_vec(top)), ("sq", nested(sq)), ("st", nested(st)),
            ("pos", fmt(pos)), ("back", fmt_vec(back))]
    return out


v = arr([(k * 7) % 24 - 10 for k in range(24)])
bias = arr([[[1, -1]], [[0.5, 2]]])
for i, j in [(1, 1), (-2, 0), (2, 0), (0, 2)]:
    print("# run: v=%s bias=[%s,%s] i=%d j=%d" % (arg(v), arg_mat(bias[0]), arg_mat(bias[1]), i, j))
    out = program(v, bias, i, j)
    if isinstance(out, str):
        print("# stop: " + out)
    else:
        for name, value in out:
            print("# expect: %s = %s" % (name, value))
