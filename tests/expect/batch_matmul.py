"""Expected results of graphs/batch_matmul.cfx by numpy's matmul (np.matmul broadcasts the batch
dimensions; a vector on the right is a column, on the left a row). Every input is made from
np.arange as the graph makes it from iota; every value is a small integer, so exact in f32.
Prints the header lines."""
import numpy as np


def fmt(a):
    a = np.asarray(a)
    if a.ndim == 0:
        v = a.item()
        return ("%g" % v) if isinstance(v, float) else str(v)
    return "[" + ", ".join(fmt(e) for e in a) + "]"


def io(n, dt=np.int32):
    return np.arange(n, dtype=dt)


for s, n in [(1, 3), (-2, 1)]:
    a4 = ((io(480) % 7 - 3) * s + io(480) % 3).reshape(2, 3, 20, 4).astype(np.float32)
    b4 = (io(432) % 5 - 2).reshape(2, 3, 4, 18).astype(np.float32)
    p1 = a4 @ b4
    c1 = np.sum(p1 * (io(2160) % 5 - 2).reshape(2, 3, 20, 18).astype(np.float32))
    a3 = (io(1683) % 9 - 4).reshape(3, 17, 33).astype(np.float64)
    b3 = (io(1881) % 4 - s).reshape(3, 33, 19).astype(np.float64)
    c2 = np.sum((a3 @ b3) * (io(969) % 3 - 1).reshape(3, 17, 19).astype(np.float64))
    l2 = (io(15) % 4 - 1).reshape(5, 3).astype(np.float64)
    sl = l2 @ (io(24) % 5 - 2 + s).reshape(4, 3, 2).astype(np.float64)
    sr = (io(24) % 7 - 3).reshape(3, 2, 4).astype(np.int64) @ (io(12) % 5 - s).reshape(1, 4, 3).astype(np.int64)
    mv = (io(24) % 5 - 2).reshape(2, 3, 4) @ (io(4) * 2 - 3 + s)
    vm = (io(4) - s).astype(np.float32) @ (io(24) % 7 - 3).reshape(2, 4, 3).astype(np.float32)
    fb = (io(12) % 4 - 1).reshape(2, 1, 2, 3).astype(np.float32) @ ((io(18) % 4 - 1).reshape(3, 3, 2) * s).astype(np.float32)
    q = (io(12) % 5 - 2).reshape(2, 2, 1, 3).astype(np.float32)
    kt = (io(12) % 3 - 1 + s).reshape(2, 2, 3, 1).astype(np.float32)
    v = (io(12) % 4 - 2).reshape(2, 2, 1, 3).astype(np.float32)
    h = q
    for i in range(n):
        h = np.mod((h @ kt) @ v, np.float32(7)) - np.float32(3)
    at = np.sum(h * ((q @ kt) @ v))
    print("# run: s=%d n=%d" % (s, n))
    print("# expect: c1 = " + fmt(np.float32(c1)))
    print("# expect: e1 = " + fmt(p1[1, 2, 19, 17]))
    print("# expect: c2 = " + fmt(c2))
    print("# expect: sl = " + fmt(sl))
    print("# expect: sr = " + fmt(sr))
    print("# expect: mv = " + fmt(mv))
    print("# expect: vm = " + fmt(vm))
    print("# expect: fb = " + fmt(fb))
    print("# expect: at = " + fmt(np.float32(at)))
