"""The cpu backend's thread count from Python: threads= on a call (kept for the graph's later
calls), the same bits with 1 thread as with 2 on a graph over a tensor large enough to split, results checked
against numpy's, and bad counts refused before anything runs."""
import numpy as np
import pytest

import cfx

SRC = """
graph g(x: f32[1100009], y: f32[1100009]) -> (z: f32[1100009], s: f32) {
  z = x * y + 2.0 * x
  s = sum(z)
}
"""


def test_threads_same_bits():
    rng = np.random.default_rng(7)
    x = rng.random(1100009, dtype=np.float32)
    y = rng.random(1100009, dtype=np.float32)
    g = cfx.compile(SRC).graph("g")
    one = g(x, y, backend="cpu", threads=1)
    two = g(x, y, backend="cpu", threads=2)
    assert one["z"].tobytes() == two["z"].tobytes()
    assert one["s"].tobytes() == two["s"].tobytes()
    # numpy's elementwise arithmetic in f32 is the same rounding, one op at a time
    assert np.array_equal(two["z"], x * y + np.float32(2.0) * x)
    want = float(np.sum(two["z"].astype(np.float64)))
    assert abs(float(two["s"]) - want) <= 2 ** -23 * abs(want)
    again = g(x, y, backend="cpu") # the quick path, with the count the last call set
    assert again["z"].tobytes() == two["z"].tobytes()


@pytest.mark.parametrize("bad", [0, -1, 257, 1.5, True, "2"])
def test_threads_bad(bad):
    g = cfx.compile(SRC).graph("g")
    x = np.ones(1100009, dtype=np.float32)
    with pytest.raises(ValueError, match="threads"):
        g(x, x, backend="cpu", threads=bad)


def test_threads_cpu_only():
    g = cfx.compile(SRC).graph("g")
    x = np.ones(1100009, dtype=np.float32)
    with pytest.raises(ValueError, match="cpu backend"):
        g(x, x, backend="cuda-host", threads=2)
