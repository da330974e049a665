"""What one Python call of a cfx graph costs, beside numpy's x + 1.0 measured in the same run.

The graph is one line on four floats (y = x + 1.0), run on the cpu executor, so the call's cost
is the crossing from Python into libcfx and back rather than any work. Each row is the median
of REPEAT batches of BATCH calls, in microseconds per call; the batches of the rows are
interleaved, so a machine that other work slows slows every row alike, and the ratio against
numpy's x + 1.0 (same array, same run) is the figure to compare between machines.

Rows: numpy's x + 1.0; the graph called with a numpy array, results made by cfx (g(x), the
quick call); the same writing into an out= array (g(x, out={"y": y})); the input given by name
(g(x=x): the general path, which checks and converts any kind of array); and the bare C call
the quick call makes (cfx_run_bound on the bound pointers: the floor under the Python layer).
Batches are short (100 calls, well under a time slice), so that on a loaded machine most
batches run uninterrupted and the median is theirs; the min is printed beside it.

    CFX_LIBRARY=build/libcfx.so PYTHONPATH=python python3 profiling/python_call_cost.py [--quick]

Prints a table; writes no file (profiling/results/ keeps the figures of a run by hand).
"""
import ctypes
import statistics
import sys
import time

import numpy as np

import cfx
from cfx import _lib

SOURCE = """graph add_one(x: f32[4]) -> (y: f32[4]) {
  y = x + 1.0
}
"""


def batch_us(fn, batch):
    t = time.perf_counter()
    for _ in range(batch):
        fn()
    return (time.perf_counter() - t) / batch * 1e6


def main():
    quick = "--quick" in sys.argv
    batch, repeat = (50, 31) if quick else (100, 301)
    g = cfx.compile(SOURCE).entry
    x = np.arange(4, dtype=np.float32)
    y = np.empty(4, dtype=np.float32)
    want = x + np.float32(1.0)
    got = g(x, backend="cpu")["y"]
    if not np.array_equal(got, want) or type(got) is not np.ndarray:
        raise SystemExit("g(x) gave %r, numpy %r" % (got, want))
    g(x, backend="cpu", out={"y": y})
    if not np.array_equal(y, want):
        raise SystemExit("g(x, out=...) wrote %r, numpy %r" % (y, want))

    rows = [("numpy x + 1.0", lambda: x + 1.0),
            ("g(x) (cpu)", lambda: g(x, backend="cpu")),
            ("g(x, out=) (cpu)", lambda: g(x, backend="cpu", out={"y": y})),
            ("g(x=x) (cpu, general)", lambda: g(x=x, backend="cpu"))]
    if "cfx_run_bound" in _lib._PROTOTYPES: # a package of before it (for a figure to compare) has none
        run_bound = _lib.lib.cfx_run_bound
        ptr = g._exec("cpu", None).ptr
        ins = (ctypes.c_void_p * 1)(x.ctypes.data)
        outs = (ctypes.c_void_p * 1)(y.ctypes.data)
        rows.append(("cfx_run_bound (C only)", lambda: run_bound(ptr, ins, outs, 0, None)))
    times = {name: [] for name, _ in rows}
    for _ in range(repeat):
        for name, fn in rows:
            times[name].append(batch_us(fn, batch))
    base = statistics.median(times["numpy x + 1.0"])
    print("one call, microseconds: median of %d batches of %d calls (%s)"
          % (repeat, batch, _lib.path))
    print("%-26s %10s %10s %12s" % ("", "median us", "min us", "x numpy"))
    for name, _ in rows:
        med = statistics.median(times[name])
        print("%-26s %10.2f %10.2f %12.1f" % (name, med, min(times[name]), med / base))


if __name__ == "__main__":
    main()
