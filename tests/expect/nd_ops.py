"""Expected results of graphs/nd_ops.cfx with numpy: concatenate along each axis (dtypes
promoting as a binary op's), matmul over leading batch dimensions (numpy's broadcasting of the
batch, vectors on either side) and transpose with axes, N-D. Every input is a small integer, so
float32 holds every product and sum exactly."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import fmt, nested, arg_nd as arg  # noqa: E402


def inputs(seed):
    rng = np.random.RandomState(seed)

    def f(*shape):
        return rng.randint(-4, 5, size=shape).astype(np.float32)
    return dict(a=f(2, 3), b=f(2, 2), n=rng.randint(-9, 10, size=(2, 3)).astype(np.int32), x=f(2, 3, 4),
                w=f(4, 2), v=f(4), y=f(2, 3, 5), y2=f(2, 4, 3), z=f(2, 1, 3, 4), y3=f(3, 4, 2))


def program(a, b, n, x, w, v, y, y2, z, y3):
    mm = np.matmul  # exact on these small integers in float32
    k12 = np.arange(12, dtype=np.int32)
    r5 = np.arange(120, dtype=np.float32).reshape(2, 3, 1, 4, 5)
    zz = np.arange(24, dtype=np.float32).reshape(2, 1, 3, 4) - np.float32(11)
    return [
        ("c1", np.concatenate((a, b), axis=1)),
        ("c0", np.concatenate([a, n.astype(np.float32), a], 0)),
        ("cm", np.concatenate((x, x[:, 0:1, :] * np.float32(2), x), axis=-2)),
        ("ci", np.concatenate((n, n), 1)),
        ("bw", mm(x, w)),
        ("xv", mm(x, v)),
        ("ab", mm(a, y)),
        ("bb", mm(x, y2)),
        ("vy", mm(v, y2)),
        ("zb", mm(z, y3)),
        ("ia", mm(k12.reshape(2, 2, 3), n.T)),
        ("ib", mm(n, k12.reshape(2, 3, 2))),
        ("p", np.transpose(x, (2, 0, 1))),
        ("q", np.transpose(x, [1, 0, 2])),
        ("t", np.transpose(x)),
        ("r", np.transpose(x, (0, 2, 1))),
        ("s", np.transpose(z, (-1, 1, 0, 2))),
        ("u", np.transpose(a, (1, 0))),
        ("e", np.transpose(x, (0, 1, 2))),
        ("f", np.transpose(r5, (4, 1, 3, 0, 2))),
        ("bz", mm(zz, np.arange(16, dtype=np.float32).reshape(1, 2, 4, 2))),
        ("g", np.transpose(zz, (3, 1, 0, 2))),
        ("cb", np.concatenate((a > 0, n > 0), axis=0)),
    ]


ORDER = ["a", "b", "n", "x", "w", "v", "y", "y2", "z", "y3"]
for seed in (1, 2):
    ins = inputs(seed)
    print("# run: " + " ".join("%s=%s" % (k, arg(ins[k])) for k in ORDER))
    for name, value in program(**ins):
        print("# expect: %s = %s" % (name, nested(value)))
