"""Expected results of graphs/axis_reduce.cfx (f32) and graphs/axis_reduce_types.cfx (f64, i32,
i64, bool; two graphs, since the stand-in sweeps take graphs of at most 32 results) with numpy: sum, mean, max, min, argmax, argmin,
all and any along the first, a middle and the last axis, keepdims, f32, f64, i32, i64 and bool,
NaN (max, min, sum propagate it; argmax and argmin give the first NaN's position, as numpy's),
ties (the first position, as numpy's argmax), a reduction of more results than cfx used to unroll
one at a time, and few results over a long axis. Sums and means of f32 accumulate in float64 and
round once (tests/expect/f32.py); integers wrap; maxima, minima and positions are exact."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import fmt, fmt64, nested, arg_nd as arg  # noqa: E402


def inputs(seed):
    rng = np.random.RandomState(seed)
    # few distinct values: ties along every axis
    x = (rng.randint(-6, 7, size=(3, 4, 5)) * 0.5).astype(np.float32)
    d = rng.randint(-9, 10, size=(2, 3, 4)).astype(np.float64) / 8
    k = rng.randint(-4, 5, size=(3, 4, 5)).astype(np.int32)
    k[0, 0, 0] = 2147483647  # a sum that wraps
    k[0, 1, 0] = 1
    q = rng.randint(-3, 4, size=(4, 3)).astype(np.int64) * 1000000000000
    b = rng.randint(0, 4, size=(3, 4, 5)) != 0
    return dict(x=x, d=d, k=k, q=q, b=b)


def s32(a, axis, keepdims=False):
    return np.sum(a.astype(np.float64), axis=axis, keepdims=keepdims).astype(np.float32)


def m32(a, axis, keepdims=False):
    return (np.sum(a.astype(np.float64), axis=axis, keepdims=keepdims) / a.shape[axis]).astype(np.float32)


def program(x):
    xn = x.copy()
    xn[1, 2, 3] = np.nan
    xn[2, 1, 4] = np.nan
    xn[2, 3, 4] = np.nan
    g = (np.arange(2 * 5000, dtype=np.int32).reshape(2, 5000) % 97).astype(np.float32)
    h = (np.arange(5000, dtype=np.int32).reshape(1, 5000) % 89).astype(np.float32)
    w = (np.arange(5000 * 3, dtype=np.int32).reshape(5000, 3) % 7).astype(np.float32)
    hm = (np.arange(16 * 5000, dtype=np.int32).reshape(16, 5000) * 7 % 10007 - 5000).astype(np.float32)
    return [
        ("s0", s32(x, 0), fmt),
        ("s1", s32(x, 1), fmt),
        ("s2", s32(x, 2), fmt),
        ("m1", m32(x, 1, True), fmt),
        ("m2k", m32(x, 2, True), fmt),
        ("mx0", np.max(x, axis=0), fmt),
        ("mx1", np.max(x, axis=1), fmt),
        ("mn2", np.min(x, axis=2), fmt),
        ("am0", np.argmax(x, axis=0), fmt),
        ("am1", np.argmax(x, axis=1), fmt),
        ("am2", np.argmax(x, axis=2), fmt),
        ("an1k", np.expand_dims(np.argmin(x, axis=1), 1), fmt),
        ("nmx1", np.max(xn, axis=1), fmt),
        ("nmn2", np.min(xn, axis=2), fmt),
        ("nam1", np.argmax(xn, axis=1), fmt),
        ("nan2", np.argmin(xn, axis=2), fmt),
        ("ns1", s32(xn, 1), fmt),
        ("lsum", s32(g, 1), fmt),
        ("lmax", np.max(g, axis=1), fmt),
        ("larg", np.argmax(g, axis=1), fmt),
        ("lcol", s32(g, 0)[95:100], fmt),
        ("lone", np.argmax(h, axis=1), fmt),
        ("wide", np.sum(np.argmax(w, axis=1)), fmt),
        ("widem", np.sum(np.max(w, axis=1).astype(np.float64)).astype(np.float32), fmt),
        ("hmax", np.max(hm, axis=1), fmt),
    ]


def program_types(d, k, q, b):
    with np.errstate(over="ignore"):
        ks0 = np.sum(k, axis=0, dtype=np.int32)
        ks1 = np.sum(k, axis=1, dtype=np.int32)
    return [
        ("ds1", np.sum(d, axis=1), fmt64),
        ("dm1", np.mean(d, axis=1), fmt64),
        ("dx1", np.max(d, axis=1), fmt64),
        ("da1", np.argmin(d, axis=1), fmt64),
        ("ks0", ks0, fmt),
        ("ks1", ks1, fmt),
        ("kx1", np.max(k, axis=1), fmt),
        ("ka1", np.argmax(k, axis=1), fmt),
        ("kn2", np.argmin(k, axis=2), fmt),
        ("qs0", np.sum(q, axis=0), fmt),
        ("qs1", np.sum(q, axis=1), fmt),
        ("qn1", np.min(q, axis=1), fmt),
        ("qa0", np.argmax(q, axis=0), fmt),
        ("qa1", np.argmin(q, axis=1), fmt),
        ("all0", np.all(b, axis=0), fmt),
        ("all1", np.all(b, axis=1), fmt),
        ("any1", np.any(b, axis=1), fmt),
        ("all2k", np.all(b, axis=2, keepdims=True), fmt),
    ]


def show(names, results):
    for seed in (1, 2):
        ins = inputs(seed)
        print("# run: " + " ".join("%s=%s" % (n, arg(ins[n], fmt64 if n == "d" else fmt)) for n in names))
        for name, value, f in results(**{n: ins[n] for n in names}):
            print("# expect: %s = %s" % (name, nested(value, f)))


show(("x",), program)
show(("d", "k", "q", "b"), program_types)
