"""f32.py: float32 arithmetic as cfx defines it, for the expectation scripts.

Elementwise operations round each result to float32 (numpy's float32 arithmetic does the same).
Reductions over f32 (sum, mean, dot, norm, and each element of a matrix product) accumulate in
float64 and round once at the end (kernels/kernels.h), so these helpers do exactly that.
Formatting follows the cfx command: the shortest text that reads back to the same float32.
"""
import numpy as np

F = np.float32


def arr(x):
    return np.asarray(x, dtype=np.float32)


def dot(a, b):
    return F(np.dot(np.asarray(a, np.float64), np.asarray(b, np.float64)))


def rounded(fn, *xs):
    """The correctly rounded float32 result of a math function (numpy's, fn) of float32
    arguments: computed in float64 and rounded once (a tie between two float32s is as rare as
    2^-29 a value). The headers hold these, the same on every machine: numpy's own float32
    functions differ from them in the last bit here and there, and from one processor's SIMD
    extensions to another's (AVX2 against AVX-512), and C's float functions, which cfx calls,
    are a bit off now and then too (cfx's tests compare transcendentals within a few ulps)."""
    return np.asarray(fn(*(np.asarray(x, np.float64) for x in xs)), np.float64).astype(np.float32)


def norm(a):
    a = np.asarray(a, np.float64)
    return F(np.sqrt(np.dot(a, a)))


def fsum(a):
    return F(np.sum(np.asarray(a, np.float64)))


def matmul(a, b):
    return (np.asarray(a, np.float64) @ np.asarray(b, np.float64)).astype(np.float32)


def fmt(v):
    """A float32 as cfx prints it: the shortest repr that reads back (Python's repr style)."""
    v = F(v)
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    for digits in range(1, 10):
        text = "%.*g" % (digits, float(v))
        if F(float(text)) == v:
            break
    # lay out as Python's repr does: plain for 1e-4 <= |v| < 1e16, no trailing .0
    r = repr(float(text))
    return r[:-2] if r.endswith(".0") else r


def fmt_vec(v):
    return "[" + ", ".join(fmt(e) for e in v) + "]"


def fmt_int_vec(v):
    return "[" + ", ".join(str(int(e)) for e in v) + "]"


def arg(v):
    """A vector as a `# run:` value: no spaces, shortest floats."""
    return "[" + ",".join(fmt(e + F(0)) for e in v) + "]"  # + 0: no -0 in inputs


def arg_mat(m):
    return "[" + ",".join(arg(r) for r in m) + "]"


def fmt64(v):
    """A float64 as cfx prints it: Python's repr without a trailing .0."""
    v = float(v)
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    r = repr(v)
    return r[:-2] if r.endswith(".0") else r


def nested(a, f=fmt):
    """A value of any rank as cfx prints it: integers as such, bools as true and false, reals by f
    (fmt: float32's shortest text; fmt64 for float64)."""
    a = np.asarray(a)
    if a.ndim == 0:
        if a.dtype == np.bool_:
            return "true" if a else "false"
        return str(int(a)) if a.dtype.kind in "iu" else f(a)
    return "[" + ", ".join(nested(r, f) for r in a) + "]"


def arg_nd(a, f=fmt):
    """A value of any rank as a `# run:` value: nested, without spaces."""
    return nested(a, f).replace(" ", "")
