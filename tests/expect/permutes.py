"""Expected results of graphs/permutes.cfx with numpy: transpose(x, axes), permute and swapaxes of
ranks 3, 4 and 5, several permutations (a rotation, a swap of the last two, the reversal of
transpose(x), one that keeps the last axis, one that moves only an axis of length 1), every dtype
(f32, f64, i32, i64, bool), and a permutation inside a loop (a cube rotated and added to n times).
Each result is numpy's np.transpose of the inputs; the loop's additions are of small halves, exact
in float32."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import fmt, fmt64, nested, arg_nd as arg  # noqa: E402


def inputs(seed):
    rng = np.random.RandomState(seed)
    x = (rng.randint(-20, 21, size=(2, 3, 4)) * 0.5).astype(np.float32)
    y = rng.randint(-30, 31, size=(2, 3, 2, 2)).astype(np.float64) / 8
    k = rng.randint(-99, 100, size=(2, 1, 3, 2, 2)).astype(np.int32)
    k[0, 0, 0, 0, 0] = 2147483647
    q = rng.randint(-9, 10, size=(3, 2, 4)).astype(np.int64) * 1000000000000
    b = rng.randint(0, 2, size=(2, 3, 2, 2)) != 0
    c = (rng.randint(-8, 9, size=(3, 3, 3)) * 0.25).astype(np.float32)
    n = np.int32(seed + 1)
    return dict(x=x, y=y, k=k, q=q, b=b, c=c, n=n)


def program(x, y, k, q, b, c, n):
    lp = c.copy()
    for i in range(int(n)):
        lp = (np.transpose(lp, (2, 0, 1)) + np.float32(i + 1)).astype(np.float32)
    return [
        ("p1", np.transpose(x, (2, 0, 1)), fmt),
        ("p2", np.swapaxes(x, 0, 2), fmt),
        ("p3", np.transpose(x, (1, 0, 2)), fmt),
        ("y1", np.transpose(y, (0, 2, 1, 3)), fmt64),
        ("y2", np.swapaxes(y, -1, -2), fmt64),
        ("y3", np.transpose(y), fmt64),
        ("k1", np.transpose(k, (4, 2, 0, 3, 1)), fmt),
        ("k2", np.transpose(k, (1, 0, 2, 3, 4)), fmt),
        ("k3", np.transpose(k, (0, 1, 2, 4, 3)), fmt),
        ("q1", np.transpose(q, (1, 2, 0)), fmt),
        ("b1", np.transpose(b, (3, 1, 0, 2)), fmt),
        ("lp", lp, fmt),
    ]


names = ("x", "y", "k", "q", "b", "c", "n")
for seed in (1, 2):
    ins = inputs(seed)
    print("# run: " + " ".join("%s=%s" % (m, arg(ins[m], fmt64 if m == "y" else fmt)) for m in names))
    for name, value, f in program(**ins):
        print("# expect: %s = %s" % (name, nested(value, f)))
