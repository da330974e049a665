"""accumulate= ("fast" | "f64"): the cpu executor's CFX_OPTION_ACCUMULATE from Python, on
cfx.compile, cfx.load_onnx and a call, and $CFX_ACCUMULATE as the default.

The data: x = [2^24, 1, 1, ..., 1] (1 + 1000 elements) dotted with ones. Accumulated in double
the sum is exact, 2^24 + 1000 = 16778216, which f32 holds (even, below 2^25): numpy's float64
sum rounded to f32 gives it, and so must the f64 mode. Accumulated in f32, in any order that
adds a 1 alone to the partial sum holding 2^24 (sequentially, or in the SIMD lanes of a BLAS's
sdot, where 2^24 sits in one lane), that 1 is lost (2^24 + 1 rounds to 2^24, the even one):
the fast mode's result is below 16778216, within the f32 error bound (n + 2) u sum |x_i y_i|."""
import pytest

import cfx

np = pytest.importorskip("numpy")

N = 1001
DOT = """graph g(x: f32[%d], y: f32[%d]) -> (d: f32) {
  d = dot(x, y)
}
""" % (N, N)


def data():
    x = np.ones(N, np.float32)
    x[0] = 2.0 ** 24
    return x, np.ones(N, np.float32)


def reference(x, y):
    """The f64 mode's value, by numpy: accumulated in float64, rounded once."""
    return np.float32(np.dot(x.astype(np.float64), y.astype(np.float64)))


def check_fast(d, x, y):
    exact = np.dot(x.astype(np.float64), y.astype(np.float64))
    bound = (N + 2) * 2.0 ** -24 * np.sum(np.abs(x.astype(np.float64) * y))
    assert d != reference(x, y), "an f32 accumulation keeps every 1 here"
    assert abs(float(d) - exact) <= bound


@pytest.fixture(autouse=True)
def no_env(monkeypatch):
    monkeypatch.delenv("CFX_ACCUMULATE", raising=False)


def test_reference_value_by_numpy():
    x, y = data()
    assert reference(x, y) == np.float32(16778216.0)
    # numpy's own f32 dot, for comparison: f32 accumulation loses ones here too
    assert np.dot(x, y) != np.float32(16778216.0)


def test_default_is_fast():
    x, y = data()
    g = cfx.compile(DOT).entry
    for _ in range(3): # the general path, then the quick one
        check_fast(g(x, y, backend="cpu")["d"], x, y)


def test_compile_f64():
    x, y = data()
    m = cfx.compile(DOT, accumulate="f64")
    assert m.accumulate == "f64"
    g = m.entry
    for _ in range(3):
        assert g(x, y, backend="cpu")["d"] == reference(x, y)
    # a call's own mode, then the module's again (the quick call must not keep the call's)
    check_fast(g(x, y, backend="cpu", accumulate="fast")["d"], x, y)
    for _ in range(2):
        assert g(x, y, backend="cpu")["d"] == reference(x, y)
    assert g.run({"x": x, "y": y}, backend="cpu", accumulate="fast")["d"] != reference(x, y)
    assert g.run({"x": x, "y": y}, backend="cpu")["d"] == reference(x, y)


def test_call_option():
    x, y = data()
    g = cfx.compile(DOT, accumulate="fast").entry
    check_fast(g(x, y, backend="cpu")["d"], x, y)
    assert g(x, y, backend="cpu", accumulate="f64")["d"] == reference(x, y)
    assert g(x=x, y=y, backend="cpu", accumulate="f64")["d"] == reference(x, y)
    for _ in range(2):
        check_fast(g(x, y, backend="cpu")["d"], x, y)


def test_environment_default(monkeypatch):
    x, y = data()
    monkeypatch.setenv("CFX_ACCUMULATE", "f64")
    g = cfx.compile(DOT).entry
    assert g(x, y, backend="cpu")["d"] == reference(x, y)
    check_fast(g(x, y, backend="cpu", accumulate="fast")["d"], x, y)
    for _ in range(2):
        assert g(x, y, backend="cpu")["d"] == reference(x, y)
    # the module's option over the environment
    g = cfx.compile(DOT, accumulate="fast").entry
    check_fast(g(x, y, backend="cpu")["d"], x, y)


def test_bad_values():
    x, y = data()
    with pytest.raises(ValueError, match="accumulate is 'fast' or 'f64', not 'double'"):
        cfx.compile(DOT, accumulate="double")
    g = cfx.compile(DOT).entry
    with pytest.raises(ValueError, match="accumulate is 'fast' or 'f64', not 1"):
        g(x, y, backend="cpu", accumulate=1)


def test_load_onnx():
    onnx = pytest.importorskip("onnx")
    if not cfx.onnx_available():
        pytest.skip("this libcfx has no ONNX importer")
    from onnx import TensorProto, helper
    nodes = [helper.make_node("MatMul", ["a", "b"], ["c"], name="mm")]
    graph = helper.make_graph(nodes, "mm", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, N]),
                                            helper.make_tensor_value_info("b", TensorProto.FLOAT, [N, 1])],
                              [helper.make_tensor_value_info("c", TensorProto.FLOAT, [1, 1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    x, y = data()
    a, b = x.reshape(1, N), y.reshape(N, 1)
    g = cfx.load_onnx(model.SerializeToString(), accumulate="f64").entry
    assert g(a, b, backend="cpu")["c"][0, 0] == reference(x, y)
    check_fast(g(a, b, backend="cpu", accumulate="fast")["c"][0, 0], x, y)
    g = cfx.load_onnx(model.SerializeToString()).entry
    check_fast(g(a, b, backend="cpu")["c"][0, 0], x, y)
    with pytest.raises(ValueError):
        cfx.load_onnx(model.SerializeToString(), accumulate="f32")
