"""The quick call (Graph._quick): numpy arrays of the declared dtypes and shapes given
positionally, no option but the backend, after a first call made the executor. It must give
what the general path gives, take the general path for every other call, and keep the state an
earlier call left (budget, stream, a pending cancel) meaning what it meant. Expected values by
numpy or by hand."""
import pytest

import cfx
from cfx import _core

COUNT = """graph count(x: f32[4], limit: f32) -> (s: f32, n: i32, y: f32[4]) {
  s = 0.0
  n = 0
  while s < limit {
    s += x[n % 4]
    n += 1
  }
  y = x * 2.0
}
"""


@pytest.fixture
def g(np):
    return cfx.compile(COUNT).entry


def _no_general_path(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the general path ran")
    monkeypatch.setattr(_core.Graph, "_run", refuse)


def test_quick_call_runs_and_gives_fresh_results(g, np, monkeypatch, run_bound):
    x = np.array([1, 2, 3, 4], dtype=np.float32)
    limit = np.array(5, dtype=np.float32)
    first = g(x, limit, backend="cpu") # the general path: makes the executor
    _no_general_path(monkeypatch)
    second = g(x, limit, backend="cpu")
    # 1 + 2 + 3 = 6 >= 5 after three iterations; y = 2x
    for res in (first, second):
        assert float(res["s"]) == 6.0 and int(res["n"]) == 3
        assert np.array_equal(res["y"], x * np.float32(2))
        assert type(res["y"]) is np.ndarray and res["y"].dtype == np.float32
        assert list(res) == ["s", "n", "y"] and res.backend == "cpu"
        assert res.iterations == 3
    assert second["y"] is not first["y"] # a new array each call
    assert g.last_backend == "cpu" and g.last_stream is None
    bound = run_bound(g)
    assert bound["x"] == (0, x.ctypes.data) and bound["y"] == (0, second["y"].ctypes.data)


def test_other_calls_take_the_general_path(g, np):
    x = np.array([1, 2, 3, 4], dtype=np.float32)
    limit = np.array(5, dtype=np.float32)
    g(x, limit, backend="cpu")
    # a wrong dtype, a wrong shape, a non-contiguous array: the general path's errors
    with pytest.raises(TypeError, match="input 'x' is f32\\[4\\]; got f64"):
        g(x.astype(np.float64), limit, backend="cpu")
    with pytest.raises(ValueError, match="got shape \\[2\\]"):
        g(x[:2], limit, backend="cpu")
    with pytest.raises(ValueError, match="not contiguous"):
        g(np.arange(8, dtype=np.float32)[::2], limit, backend="cpu")
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        g(x, limit, backend="gpu")
    # a Python number, results of another kind: right all the same
    assert float(g(x, 5.0, backend="cpu")["s"]) == 6.0
    assert g(x, limit, backend="cpu", results="python")["y"] == [2, 4, 6, 8]


def test_state_an_earlier_call_left(g, np):
    x = np.array([1, 2, 3, 4], dtype=np.float32)
    limit = np.array(100, dtype=np.float32)
    g(x, limit, backend="cpu")
    with pytest.raises(cfx.RunStopped) as stop:
        g(x, limit, backend="cpu", max_iters=2)
    assert stop.value.status == "limit"
    # the next call without a budget has none: 1+2+3+4 = 10 a round, 100 after 40
    res = g(x, limit, backend="cpu")
    assert float(res["s"]) == 100.0 and int(res["n"]) == 40
    # a cancel made between calls stops the next call, quick or not, and that one only
    g.cancel()
    with pytest.raises(cfx.RunStopped) as stop:
        g(x, limit, backend="cpu")
    assert stop.value.status == "cancelled"
    assert int(g(x, limit, backend="cpu")["n"]) == 40


def test_a_stopped_quick_call(np):
    g = cfx.compile("graph pick(t: f32[3], i: i32) -> (y: f32) {\n  y = t[i]\n}\n", filename="pick.cfx").entry
    t = np.array([1.5, 2.5, 3.5], dtype=np.float32)
    assert float(g(t, np.array(2, dtype=np.int32), backend="cpu")["y"]) == 3.5
    with pytest.raises(cfx.RunStopped) as stop:
        g(t, np.array(3, dtype=np.int32), backend="cpu")
    assert stop.value.status == "index" and (stop.value.file, stop.value.line) == ("pick.cfx", 2)
    assert "'t' has 3 rows, index was 3" in str(stop.value)


def test_quick_call_into_out_arrays(g, np, monkeypatch):
    x = np.array([1, 2, 3, 4], dtype=np.float32)
    limit = np.array(5, dtype=np.float32)
    y = np.zeros(4, dtype=np.float32)
    g(x, limit, backend="cpu", out={"y": y})
    assert y.tolist() == [2, 4, 6, 8]
    _no_general_path(monkeypatch)
    y[:] = 0
    res = g(x + np.float32(1), limit, backend="cpu", out={"y": y})
    assert res["y"] is y and y.tolist() == [4, 6, 8, 10] # (x + 1) * 2
    assert float(res["s"]) == 5.0 and int(res["n"]) == 2 # 2 + 3 >= 5
    monkeypatch.undo()
    # what the quick call does not take: the general path's errors
    with pytest.raises(TypeError, match="has no result 'z'"):
        g(x, limit, backend="cpu", out={"z": y})
    with pytest.raises(TypeError, match="result 'y' is f32\\[4\\]; got i32"):
        g(x, limit, backend="cpu", out={"y": np.zeros(4, dtype=np.int32)})
    y.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        g(x, limit, backend="cpu", out={"y": y})
