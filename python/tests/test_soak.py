"""A long-running application's use of cfx from Python (issue 36): a graph run thousands of
times and modules compiled and dropped again and again leave resident memory flat (within
1 MiB after a warm-up, /proc/self/statm) and no file descriptor or thread behind. The C API's
own soak, at full size under the stress label, is tests/test_soak.c."""
import gc
import os

import pytest

import cfx

SRC = """
graph soak(x: f32[4], n: i32) -> (s: f32) {
  s = 0.0
  for i in range(n) {
    s = s + x[i % 4] * 2.0 + 1.0
  }
}
"""

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux's /proc")


def _resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _counts():
    return len(os.listdir("/proc/self/fd")), len(os.listdir("/proc/self/task"))


def test_runs_and_compiles_leave_nothing_behind():
    g = cfx.compile(SRC).entry
    x = [1.0, 2.0, 3.0, 4.0]
    # n = 8: two rounds of 3 + 5 + 7 + 9 = 48, by hand
    for _ in range(300):
        assert g(x, 8, backend="cpu", results="python")["s"] == 48.0
    for _ in range(20):
        cfx.compile(SRC).close()
    gc.collect()
    before, counts = _resident(), _counts()
    peak = before
    for i in range(3000):
        assert g(x, 8, backend="cpu", results="python")["s"] == 48.0
        if i % 250 == 0:
            peak = max(peak, _resident())
    for i in range(100):
        m = cfx.compile(SRC)
        assert m.entry(x, 4, backend="cpu", results="python")["s"] == 24.0
        m.close()
    gc.collect()
    peak = max(peak, _resident())
    assert peak - before <= 1 << 20, "resident memory grew by %d bytes" % (peak - before)
    assert _counts() == counts
