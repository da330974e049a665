"""Expected results of graphs/axis_extremes.cfx with numpy: max and min along each axis of
tensors of odd and even lengths, keepdims, i32 and f64, a NaN in one slice, and a reduction of
more results than cfx unrolls one at a time. Maxima and minima are exact, so every value is
numpy's own."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import fmt, fmt64, nested, arg_nd as arg  # noqa: E402


def inputs(seed):
    rng = np.random.RandomState(seed)
    # few distinct values: ties along every axis
    x = (rng.randint(-6, 7, size=(3, 5, 7)) * 0.5).astype(np.float32)
    k = rng.randint(-50, 51, size=(4, 6)).astype(np.int32)
    v = rng.randint(-9, 10, size=(2, 3)).astype(np.float64) / 4
    w = rng.randint(-9, 10, size=(6, 33)).astype(np.float32)
    return dict(x=x, k=k, v=v, w=w)


def program(x, k, v, w):
    xn = x.copy()
    xn[1, 2, 3] = np.nan
    g = (np.arange(4100 * 3, dtype=np.int32).reshape(4100, 3) % 11).astype(np.float32)
    return [
        ("a0", np.max(x, axis=0), fmt),
        ("a1", np.max(x, axis=1, keepdims=True), fmt),
        ("a2", np.min(x, axis=-1), fmt),
        ("lo1", np.min(x, axis=1), fmt),
        ("nan1", np.max(xn, axis=1), fmt),
        ("ik", np.max(k, axis=0), fmt),
        ("ikk", np.min(k, axis=1, keepdims=True), fmt),
        ("vd", np.max(v, axis=1), fmt64),
        ("vd0", np.min(v, axis=0), fmt64),
        ("wr", np.max(w, axis=1), fmt),
        ("wc", np.min(w, axis=0), fmt),
        ("big", np.float32(np.sum(np.max(g, axis=1).astype(np.float64))), fmt),
        ("bigmin", np.float32(np.sum(np.min(g, axis=1).astype(np.float64))), fmt),
    ]


for seed in (1, 2):
    ins = inputs(seed)
    print("# run: x=%s k=%s v=%s w=%s" % (arg(ins["x"]), arg(ins["k"]), arg(ins["v"], fmt64), arg(ins["w"])))
    for name, value, f in program(**ins):
        print("# expect: %s = %s" % (name, nested(value, f)))
