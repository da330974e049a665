"""ONNX models from Python: cfx.load_onnx on a path, bytes and an onnx.ModelProto, ONNX names
that are not identifiers, symbolic dimensions fixed by shapes=, refusals as CompileError
naming the node, and cfx.from_torch on PyTorch's control-flow modules (torch.cond,
while_loop) compared with eager PyTorch. Expected values come from numpy or eager PyTorch.

Skipped where the onnx package is not installed or this libcfx was built without ONNX
support (protobuf-c); the PyTorch tests where torch is not installed."""
import pathlib
import re

import pytest

import cfx

np = pytest.importorskip("numpy")
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

pytestmark = pytest.mark.skipif(
    not cfx.onnx_available(),
    reason="this libcfx has no ONNX importer" if cfx._onnx._functions() is None
    else "this libcfx was built without ONNX support (protobuf-c)")

F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def make(graph, opset=17):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def refused(model, *words):
    """load_onnx(model) must raise CompileError with one line holding every word."""
    with pytest.raises(cfx.CompileError) as info:
        cfx.load_onnx(model)
    text = str(info.value)
    assert all(w in text for w in words), text
    assert len(text.strip().splitlines()) == 1


def add_model(dim="N"):
    """out/1 = input.1 * 2 + b:0, an input with a symbolic first dimension (or a fixed one)."""
    nodes = [helper.make_node("Mul", ["input.1", "two"], ["t"], name="scale"),
             helper.make_node("Add", ["t", "b:0"], ["out/1"], name="shift")]
    g = helper.make_graph(nodes, "add.model",
                          [vi("input.1", F32, [dim, 3]), vi("b:0", F32, [3])],
                          [vi("out/1", F32, [dim, 3])],
                          [numpy_helper.from_array(np.array(2, np.float32), "two")])
    return make(g)


def while_model():
    """A Loop with a condition only: s doubles while s < limit; k counts the iterations."""
    body = helper.make_graph(
        [helper.make_node("Mul", ["s", "two"], ["s2"]),
         helper.make_node("Add", ["k", "one"], ["k2"]),
         helper.make_node("Less", ["s2", "limit"], ["c2"])],
        "body", [vi("i", I64, []), vi("c", BOOL, []), vi("s", I64, []), vi("k", I64, [])],
        [vi("c2", BOOL, []), vi("s2", I64, []), vi("k2", I64, [])],
        [numpy_helper.from_array(np.array(2, np.int64), "two"),
         numpy_helper.from_array(np.array(1, np.int64), "one")])
    nodes = [helper.make_node("Less", ["s0", "limit"], ["c0"]),
             helper.make_node("Constant", [], ["k0"],
                              value=numpy_helper.from_array(np.array(0, np.int64))),
             helper.make_node("Loop", ["", "c0", "s0", "k0"], ["s", "k"], name="doubling",
                              body=body)]
    return make(helper.make_graph(nodes, "doubling", [vi("s0", I64, []), vi("limit", I64, [])],
                                  [vi("s", I64, []), vi("k", I64, [])]))


def if_model():
    """y = c ? x * 3 : -x, the branches reading x from the outer scope."""
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "three"], ["a"])], "then", [],
                               [vi("a", F32, [2])],
                               [numpy_helper.from_array(np.array(3, np.float32), "three")])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["b"])], "else", [],
                               [vi("b", F32, [2])])
    nodes = [helper.make_node("If", ["c"], ["y"], name="choose", then_branch=then_g,
                              else_branch=else_g)]
    return make(helper.make_graph(nodes, "branch", [vi("x", F32, [2]), vi("c", BOOL, [])],
                                  [vi("y", F32, [2])]))


def doubling(s, limit):
    k = 0
    while s < limit:
        s, k = s * 2, k + 1
    return s, k


# ---- load_onnx ------------------------------------------------------------------------------

def test_available():
    assert cfx.onnx_available() is True


def test_path_bytes_and_model_proto(tmp_path):
    m = while_model()
    path = tmp_path / "while.onnx"
    path.write_bytes(m.SerializeToString())
    for model in (str(path), path, path.read_bytes(), bytearray(path.read_bytes()), m):
        mod = cfx.load_onnx(model)
        assert isinstance(mod, cfx.Module)
        assert mod.filename == (str(path) if isinstance(model, (str, pathlib.Path)) else "model.onnx")
        g = mod.entry
        assert [(p.name, p.dtype, p.shape) for p in g.inputs] == [("s0", "i64", ()), ("limit", "i64", ())]
        assert [(p.name, p.dtype, p.shape) for p in g.results] == [("s", "i64", ()), ("k", "i64", ())]
        for s0, limit in ((3, 100), (200, 100), (1, 1 << 40)):
            out = g(s0=np.array(s0, np.int64), limit=np.array(limit, np.int64), backend="cpu")
            s, k = doubling(s0, limit)
            assert int(out["s"]) == s and int(out["k"]) == k


def test_if_with_outer_reads():
    g = cfx.load_onnx(if_model()).entry
    x = np.array([1.5, -2.0], np.float32)
    np.testing.assert_array_equal(g(x=x, c=np.array(True), backend="cpu")["y"], x * 3)
    np.testing.assert_array_equal(g(x=x, c=np.array(False), backend="cpu")["y"], -x)


def test_float16_and_bfloat16():
    """A float16 model: inputs given as float16 (or bfloat16, or float32 holding their values)
    arrays, its results float32 arrays holding float16 values; each op rounds as float16 does
    (numpy's float16 arithmetic, step by step, gives the expected values)."""
    F16, BF16 = TensorProto.FLOAT16, TensorProto.BFLOAT16
    nodes = [helper.make_node("Mul", ["x", "w"], ["xw"]),
             helper.make_node("Add", ["xw", "x"], ["y"]),
             helper.make_node("Cast", ["y"], ["yb"], to=BF16),
             helper.make_node("Cast", ["yb"], ["z"], to=F32)]
    w = np.array([0.1, 3.0, -0.7], np.float16)
    g = cfx.load_onnx(make(helper.make_graph(
        nodes, "half", [vi("x", F16, [3])], [vi("y", F16, [3]), vi("z", F32, [3])],
        [numpy_helper.from_array(w, "w")]))).entry
    assert [(p.name, p.dtype) for p in g.inputs] == [("x", "f32")]
    x = np.array([1.7, 2050.0, 0.3], np.float16)
    want = x * w + x # float16 ops
    # by hand: 2050 * 3 = 6150 ties between 6148 and 6152 (float16's step 4 there): 6152;
    # 6152 + 2050 = 8202 rounds to 8200 (step 8); bfloat16 (8 bits, step 64) holds 8192
    assert want[1] == 8200
    bits = want.astype(np.float32).view(np.uint32).astype(np.uint64)
    bf16 = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)
    assert bf16[1] == 8192
    for given in (x, x.astype(np.float32)):
        out = g(x=given, backend="cpu")
        assert out["y"].dtype == np.float32
        np.testing.assert_array_equal(out["y"], want.astype(np.float32))
        np.testing.assert_array_equal(out["z"], bf16)


def test_float8_and_int4_inputs():
    """A float8e4m3fn input and an int4 one (held in f32 and i32, docs/onnx.md), given as
    ml_dtypes arrays or as float32/int32 arrays; a float8 value given as f32 is rounded to the
    type on entry (0.3 is 0.3125, 1.010 2^-2), an int4 one wrapped (9 is -7)."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    E4, I4 = TensorProto.FLOAT8E4M3FN, TensorProto.INT4
    nodes = [helper.make_node("Cast", ["x"], ["y"], to=F32),
             helper.make_node("Cast", ["k"], ["j"], to=TensorProto.INT32)]
    g = cfx.load_onnx(make(helper.make_graph(
        nodes, "f8", [vi("x", E4, [3]), vi("k", I4, [3])],
        [vi("y", F32, [3]), vi("j", TensorProto.INT32, [3])]), opset=21)).entry
    assert [(p.name, p.dtype) for p in g.inputs] == [("x", "f32"), ("k", "i32")]
    for x, k in ((np.array([0.3, -448, 2], ml_dtypes.float8_e4m3fn), np.array([1, -8, 7], ml_dtypes.int4)),
                 (np.array([0.3, -448, 2], np.float32), np.array([1, 8, 9], np.int32))):
        out = g(x=x, k=k, backend="cpu")
        np.testing.assert_array_equal(out["y"], np.array([0.3125, -448, 2], np.float32))
        np.testing.assert_array_equal(out["j"], np.array([1, -8, 7 if k.dtype != np.int32 else -7], np.int32))


def test_bitwise_int64_int32_and_shifts_of_unsigned():
    """BitwiseAnd, Or, Xor, Not of int64 (the language's & | ^ ~) and int32, and BitShift of
    uint8 and uint32 (left shifts wrapped to the type, counts of the width or more giving 0),
    against numpy's operators on the same values."""
    I64_, I32_, U8, U32 = TensorProto.INT64, TensorProto.INT32, TensorProto.UINT8, TensorProto.UINT32
    nodes = [helper.make_node("BitwiseAnd", ["a", "b"], ["and"]),
             helper.make_node("BitwiseOr", ["a", "b"], ["or"]),
             helper.make_node("BitwiseXor", ["c", "d"], ["xor"]),
             helper.make_node("BitwiseNot", ["a"], ["not"]),
             helper.make_node("BitShift", ["u", "k"], ["ul"], direction="LEFT"),
             helper.make_node("BitShift", ["u", "k"], ["ur"], direction="RIGHT"),
             helper.make_node("BitShift", ["w", "k32"], ["wl"], direction="LEFT")]
    g = helper.make_graph(nodes, "bits",
                          [vi("a", I64_, [4]), vi("b", I64_, [4]), vi("c", I32_, [4]), vi("d", I32_, [4]),
                           vi("u", U8, [4]), vi("k", U8, [4]), vi("w", U32, [4]), vi("k32", U32, [4])],
                          [vi("and", I64_, [4]), vi("or", I64_, [4]), vi("xor", I32_, [4]), vi("not", I64_, [4]),
                           vi("ul", U8, [4]), vi("ur", U8, [4]), vi("wl", U32, [4])], [])
    f = cfx.load_onnx(make(g, opset=18)).entry
    a = np.array([-(2**62) - 5, 2**40 + 7, -1, 0x0F0F0F0F0F0F0F0F], np.int64)
    b = np.array([2**63 - 1, -(2**40), 12345, -0x0F0F0F0F0F0F0F10], np.int64)
    c = np.array([-8, 2**31 - 1, 12, -(2**31)], np.int32)
    d = np.array([3, -1, 10, 1], np.int32)
    u = np.array([200, 1, 255, 129], np.uint8)
    k = np.array([1, 7, 8, 3], np.uint8)
    w = np.array([2**32 - 1, 1, 0x80000001, 12345], np.uint32)
    k32 = np.array([4, 31, 1, 40], np.uint32)
    out = f(a=a, b=b, c=c, d=d, u=u, k=k, w=w, k32=k32, backend="cpu", results="numpy")
    np.testing.assert_array_equal(out["and"], a & b)
    np.testing.assert_array_equal(out["or"], a | b)
    np.testing.assert_array_equal(out["xor"], c ^ d)
    np.testing.assert_array_equal(out["not"], ~a)
    np.testing.assert_array_equal(out["ul"], np.left_shift(u, k))
    np.testing.assert_array_equal(out["ur"], np.right_shift(u, k))
    np.testing.assert_array_equal(out["wl"], np.where(k32 < 32, np.left_shift(w, np.minimum(k32, 31)), 0))


def test_uint64_shifts_order_and_casts():
    """uint64, held in i64 as its bits: int64 -> Cast(uint64) -> BitShift LEFT and RIGHT (logical)
    -> Cast(int64), by counts 0, 63, 64 and counts of 2^63 or more (negative as int64), a uint64
    Less, Add and Max, and Casts between uint64 and double; uint64 inputs given as numpy uint64
    arrays, uint64 results as int64 arrays holding the bits. Expected values from Python's ints
    modulo 2^64 (and float() of them); Div of uint64 is refused by name."""
    U64, F64 = TensorProto.UINT64, TensorProto.DOUBLE
    nodes = [helper.make_node("Cast", ["a"], ["ua"], to=U64),
             helper.make_node("BitShift", ["ua", "k"], ["l"], direction="LEFT"),
             helper.make_node("BitShift", ["ua", "k"], ["r"], direction="RIGHT"),
             helper.make_node("Cast", ["l"], ["li"], to=I64),
             helper.make_node("Cast", ["r"], ["ri"], to=I64),
             helper.make_node("Less", ["ua", "v"], ["lt"]),
             helper.make_node("GreaterOrEqual", ["ua", "v"], ["ge"]),
             helper.make_node("Add", ["ua", "v"], ["add"]),
             helper.make_node("Max", ["ua", "v"], ["max"]),
             helper.make_node("Cast", ["ua"], ["fa"], to=F64),
             helper.make_node("Cast", ["f"], ["uf"], to=U64)]
    n = 6
    g = helper.make_graph(nodes, "u64",
                          [vi("a", I64, [n]), vi("k", U64, [n]), vi("v", U64, [n]), vi("f", F64, [5])],
                          [vi("li", I64, [n]), vi("ri", I64, [n]), vi("lt", BOOL, [n]), vi("ge", BOOL, [n]),
                           vi("add", U64, [n]), vi("max", U64, [n]), vi("fa", F64, [n]), vi("uf", U64, [5])])
    m = make(g, opset=18)
    a = [5, -1, -(2**62) - 3, 2**62 + 12345, 1, -7]
    k = [0, 63, 64, 2**64 - 5, 1, 3]
    v = [3, 2**63, 2**64 - 1, 0, 1, 2**63 - 1]
    f = [0.0, 2.0**63, 2.0**64 - 4096, 12345.75, 2.0**63 - 1024]
    ua = [x % 2**64 for x in a]

    def bits(xs):
        return np.array(xs, np.uint64).view(np.int64)

    want = {"li": bits([(x << c) % 2**64 if c < 64 else 0 for x, c in zip(ua, k)]),
            "ri": bits([x >> c if c < 64 else 0 for x, c in zip(ua, k)]),
            "lt": np.array([x < y for x, y in zip(ua, v)]),
            "ge": np.array([x >= y for x, y in zip(ua, v)]),
            "add": bits([(x + y) % 2**64 for x, y in zip(ua, v)]),
            "max": bits([max(x, y) for x, y in zip(ua, v)]),
            "fa": np.array([float(x) for x in ua]),
            "uf": bits([int(x) for x in f])}
    assert list(want["ri"][:3]) == [5, 1, 0] and list(want["lt"]) == [False, False, True, False, False, False]
    entry = cfx.load_onnx(m).entry
    assert [(p.name, p.dtype) for p in entry.inputs] == [("a", "i64"), ("k", "i64"), ("v", "i64"), ("f", "f64")]
    for given in (np.array(k, np.uint64), np.array(k, np.uint64).view(np.int64)):
        out = entry(a=np.array(a, np.int64), k=given, v=np.array(v, np.uint64), f=np.array(f), backend="cpu",
                    results="numpy")
        for name, w in want.items():
            assert out[name].dtype == w.dtype, name
            np.testing.assert_array_equal(out[name], w, err_msg=name)
    red = make(helper.make_graph([helper.make_node("ReduceMax", ["x"], ["z"], name="the_max", keepdims=0)], "d",
                                 [vi("x", U64, [2])], [vi("z", U64, [])]))
    refused(red, "the_max", "ReduceMax of uint64 is not supported")


def test_uint8_and_int8():
    """A uint8 model: inputs given as uint8 arrays (or int32 holding their values, or a shapes
    entry by example), its results int32 arrays holding uint8 values; each op wraps as numpy's
    uint8 arithmetic does (the expected values), and a Cast to int8 wraps as astype does."""
    U8, I8 = TensorProto.UINT8, TensorProto.INT8
    nodes = [helper.make_node("Mul", ["x", "w"], ["xw"]),
             helper.make_node("Sub", ["xw", "x"], ["y"]),
             helper.make_node("Cast", ["y"], ["z"], to=I8),
             helper.make_node("Neg", ["z"], ["n"])]
    w = np.array([3, 200, 1, 255], np.uint8)
    m = make(helper.make_graph(
        nodes, "narrow", [vi("x", U8, [4])], [vi("y", U8, [4]), vi("z", I8, [4]), vi("n", I8, [4])],
        [numpy_helper.from_array(w, "w")]))
    x = np.array([100, 7, 5, 255], np.uint8)
    with np.errstate(over="ignore"):
        y = x * w - x # uint8 ops: 300 - 100 = 200, 1400 % 256 - 7 = 113, 0, 255*255 % 256 - 255 = 2
        z = y.astype(np.int8)
        n = -z
    assert list(y) == [200, 113, 0, 2] and list(z) == [-56, 113, 0, 2]
    for g in (cfx.load_onnx(m).entry, cfx.load_onnx(m, shapes={"x": x}).entry):
        assert [(p.name, p.dtype) for p in g.inputs] == [("x", "i32")]
        for given in (x, x.astype(np.int32)):
            out = g(x=given, backend="cpu")
            assert out["y"].dtype == np.int32 and out["z"].dtype == np.int32
            np.testing.assert_array_equal(out["y"], y.astype(np.int32))
            np.testing.assert_array_equal(out["z"], z.astype(np.int32))
            np.testing.assert_array_equal(out["n"], n.astype(np.int32))
    # an int32 outside uint8's range is taken as numpy's astype takes it: wrapped on entry
    out = g(x=np.array([356, 7, 5, -1], np.int32), backend="cpu")
    np.testing.assert_array_equal(out["y"], y.astype(np.int32))
    with pytest.raises(TypeError, match=r"is i32\[4\]; got f32"):
        g(x=x.astype(np.float32), backend="cpu")


def test_constant_value_ints_empty_and_not():
    """Constant value_ints=[] (an empty shape: PyTorch's dynamo export gives one to Expand a
    0-d tensor) is a value known at import; value_ints=[2, 3] a shape vector."""
    none = helper.make_node("Constant", [], ["none"])
    none.attribute.append(helper.make_attribute("value_ints", [], attr_type=onnx.AttributeProto.INTS))
    nodes = [none,
             helper.make_node("Constant", [], ["two_three"], value_ints=[2, 3]),
             helper.make_node("Expand", ["x", "none"], ["s"], name="to_scalar"),
             helper.make_node("Expand", ["x", "two_three"], ["m"], name="to_matrix")]
    g = cfx.load_onnx(make(helper.make_graph(nodes, "expand", [vi("x", F32, [])],
                                             [vi("s", F32, []), vi("m", F32, [2, 3])]))).entry
    x = np.array(1.25, np.float32)
    out = g(x=x, backend="cpu", results="numpy")
    assert out["s"].shape == () and float(out["s"]) == 1.25
    np.testing.assert_array_equal(out["m"], np.broadcast_to(x, (2, 3)))


def test_names_with_dots_colons_and_slashes():
    g = cfx.load_onnx(add_model(dim=4)).entry
    assert [p.name for p in g.inputs] == ["input.1", "b:0"]
    assert [p.name for p in g.results] == ["out/1"]
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    b = np.array([1, -1, 0.5], np.float32)
    out = g(**{"input.1": x, "b:0": b}, backend="cpu")
    np.testing.assert_allclose(out["out/1"], x * 2 + b)
    out = g.run({"input.1": x, "b:0": b}, backend="cpu")   # the same, as one mapping
    np.testing.assert_allclose(out["out/1"], x * 2 + b)
    out = g(x, b, backend="cpu")                            # and positionally
    np.testing.assert_allclose(out["out/1"], x * 2 + b)


def _run_named(name):
    m = while_model()
    m.graph.name = name
    g = cfx.load_onnx(m).entry
    assert re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", g.name), g.name
    out = g(s0=np.array(3, np.int64), limit=np.array(100, np.int64), backend="cpu")
    assert int(out["s"]) == 192 and int(out["k"]) == 6


def test_graph_names_that_are_not_identifiers():
    # the module's graph is named after the model's graph, made a valid identifier
    for name in ("my model", "3d.net", "x-y", "sum"):
        _run_named(name)


@pytest.mark.parametrize("name", ["while", "graph", "if", "in"])
def test_graph_named_like_a_keyword(name):
    _run_named(name)


def test_symbolic_dimension_fixed_by_shapes():
    m = add_model()
    with pytest.raises(cfx.CompileError):
        cfx.load_onnx(m)   # N is not known: the declared shapes must be static
    b = np.array([1, -1, 0.5], np.float32)
    for spec, n in (((5, 3), 5), (("f32", (2, 3)), 2), (np.zeros((7, 3), np.float32), 7)):
        g = cfx.load_onnx(m, shapes={"input.1": spec}).entry
        assert g.inputs[0] == cfx.Param("input.1", "f32", (n, 3))
        assert g.results[0].shape == (n, 3)
        x = np.linspace(-1, 1, n * 3, dtype=np.float32).reshape(n, 3)
        np.testing.assert_allclose(g(**{"input.1": x, "b:0": b}, backend="cpu")["out/1"], x * 2 + b)


def test_shapes_misuse():
    m = add_model()
    with pytest.raises(TypeError, match="no dtype f16"):
        cfx.load_onnx(m, shapes={"input.1": ("f16", (2, 3))})
    with pytest.raises(TypeError, match="declares no input 'nothing'"):
        cfx.load_onnx(m, shapes={"nothing": (2, 3)})
    with pytest.raises(ValueError, match="dimension 0 is -1"):
        cfx.load_onnx(m, shapes={"input.1": (-1, 3)})


def test_inputs_and_outputs_of_no_elements():
    """An input of 0 elements given by its shape is known at import: no parameter (not asked
    positionally), taken by name and checked; an output of 0 elements comes back empty.
    Expected values by numpy."""
    g = helper.make_graph(
        [helper.make_node("CastLike", ["x", "like"], ["y"]),
         helper.make_node("ReduceSum", ["e", "axis"], ["s"], keepdims=0),
         helper.make_node("Abs", ["e"], ["ea"])],
        "empties", [vi("x", F32, [3]), vi("like", TensorProto.DOUBLE, ["L"]), vi("e", F32, [2, "K"])],
        [vi("y", TensorProto.DOUBLE, [3]), vi("s", F32, [2]), vi("ea", F32, [2, "K"])],
        [numpy_helper.from_array(np.array([1], np.int64), "axis")])
    m = make(g)
    with pytest.raises(cfx.CompileError, match="symbolic"):
        cfx.load_onnx(m)   # no shapes: like and e have none
    e = np.zeros((2, 0), np.float32)
    graph = cfx.load_onnx(m, shapes={"like": ("f64", (0,)), "e": e}).entry
    assert graph.inputs == [cfx.Param("x", "f32", (3,))]
    x = np.array([1.5, -2, 0.25], np.float32)
    for res in (graph(x, backend="cpu"), graph(x, like=np.zeros(0), e=e, backend="cpu")):
        assert res["y"].dtype == np.float64
        np.testing.assert_array_equal(res["y"], x.astype(np.float64))
        np.testing.assert_array_equal(res["s"], e.sum(axis=1))
        assert res["ea"].shape == (2, 0) and res["ea"].dtype == np.float32
    with pytest.raises(ValueError, match="input 'e' is f32\\[2, 0\\], 0 elements"):
        graph(x, e=np.zeros((2, 1), np.float32), backend="cpu")
    with pytest.raises(TypeError, match="input 'like' is f64\\[0\\]"):
        graph(x, like=np.zeros(0, np.float32), backend="cpu")
    with pytest.raises(cfx.CompileError, match="model declares it f32\\[2, 0\\]"):
        cfx.load_onnx(m, shapes={"like": ("f64", (0,)), "e": np.zeros((3, 0), np.float32)})


def test_sequence_input_given_stacked():
    """A sequence input is given as its items stacked (shapes= fixes its length); the graph
    takes the stacked array under the input's name. Expected values by numpy."""
    g = helper.make_graph(
        [helper.make_node("SequenceAt", ["s", "pos"], ["item"]),
         helper.make_node("SequenceLength", ["s"], ["n"])],
        "seq", [helper.make_tensor_sequence_value_info("s", F32, [2]), vi("pos", I64, [])],
        [vi("item", F32, [2]), vi("n", I64, [])])
    m = make(g)
    with pytest.raises(cfx.CompileError, match="input 's' is a sequence: give its items stacked"):
        cfx.load_onnx(m)
    items = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    graph = cfx.load_onnx(m, shapes={"s": items}).entry
    assert graph.inputs[0] == cfx.Param("s", "f32", (3, 2))
    res = graph(s=items, pos=np.array(-1, np.int64), backend="cpu")
    np.testing.assert_array_equal(res["item"], items[-1])
    assert int(res["n"]) == 3


def test_sequence_of_items_of_differing_shapes():
    """A sequence input whose items differ in shape is given item by item (shapes= a list of
    them, the call a list of arrays); a SequenceInsert at the front and a SequenceMap of each
    item's sum; a sequence result of items of differing shapes comes back as a list, one of
    items of one shape stacked. Expected values by numpy."""
    body = helper.make_graph([helper.make_node("ReduceSum", ["item"], ["sum"], keepdims=0)], "sum",
                             [vi("item", F32, [None])], [vi("sum", F32, [])])
    g = helper.make_graph(
        [helper.make_node("SequenceInsert", ["s", "x", "zero"], ["grown"]),
         helper.make_node("SequenceMap", ["grown"], ["sums"], body=body)],
        "ragged", [helper.make_tensor_sequence_value_info("s", F32, [None]), vi("x", F32, [1])],
        [helper.make_tensor_sequence_value_info("grown", F32, [None]),
         helper.make_tensor_sequence_value_info("sums", F32, [])],
        [numpy_helper.from_array(np.array(0, np.int64), "zero")])
    items = [np.array([1, 2, 3], np.float32), np.array([4, 5], np.float32)]
    x = np.array([-1.5], np.float32)
    graph = cfx.load_onnx(make(g), shapes={"s": items, "x": x}).entry
    assert [p.name for p in graph.inputs] == ["s[0]", "s[1]", "x"]
    res = graph(s=items, x=x, backend="cpu")
    want = [x] + items
    assert isinstance(res["grown"], list) and len(res["grown"]) == 3
    for got, w in zip(res["grown"], want):
        np.testing.assert_array_equal(got, w)
    np.testing.assert_allclose(res["sums"], np.array([w.sum() for w in want], np.float32))
    with pytest.raises(TypeError, match="list of its 2 items"):
        graph(s=items[:1], x=x, backend="cpu")


def test_refusal_names_the_node():
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="fine"),
             helper.make_node("FancyOp", ["r"], ["y"], name="the_bad_node")]
    m = make(helper.make_graph(nodes, "g", [vi("x", F32, [3])], [vi("y", F32, [3])]))
    refused(m, "the_bad_node", "FancyOp")


def test_opset23_refusals_name_the_node():
    """What the opset-23 transformer ops do not take is refused in one line naming the node
    and saying what."""
    def one(op, inputs, kwargs, why, extra=(), opset=23):
        node = helper.make_node(op, [n for n, _ in inputs], ["y"], name="the_%s" % op, **kwargs)
        g = helper.make_graph([node], "g", [vi(n, t, s) for n, (t, s) in inputs], [vi("y", F32, None)],
                              list(extra))
        refused(make(g, opset), "the_%s" % op, op, why)
    qkv = [("q", (F32, [1, 3, 8])), ("k", (F32, [1, 3, 8])), ("v", (F32, [1, 3, 8]))]
    one("Attention", qkv, {}, "q_num_heads")
    one("Attention", qkv, {"q_num_heads": 3, "kv_num_heads": 2}, "not multiples")
    one("Attention", [(n, (F32, [1, 2, 3, 4])) for n in "qkv"], {"softmax_precision": TensorProto.INT32},
        "softmax_precision")
    one("RotaryEmbedding", [("x", (F32, [1, 2, 3, 4])), ("c", (F32, [1, 3, 1])), ("s", (F32, [1, 3, 1]))],
        {"rotary_embedding_dim": 3}, "rotary_embedding_dim")
    one("RMSNormalization", [("x", (F32, [2, 4])), ("w", (F32, [4]))], {"stash_type": 0}, "stash_type")
    one("Dropout", [("x", (F32, [4])), ("r", (F32, [])), ("t", (BOOL, []))], {}, "training_mode",
        extra=[numpy_helper.from_array(np.array(0.5, np.float32), "r"),
               numpy_helper.from_array(np.array(True), "t")])


def test_truncated_and_garbage_bytes():
    data = while_model().SerializeToString()
    for bad in (data[:len(data) // 2], b"\xff\xff\xff\xff not a model", b""):
        with pytest.raises(cfx.CompileError) as info:
            cfx.load_onnx(bad)
        assert "model.onnx" in str(info.value)


def test_missing_file_and_wrong_argument(tmp_path):
    with pytest.raises(FileNotFoundError):
        cfx.load_onnx(str(tmp_path / "missing.onnx"))
    with pytest.raises(TypeError, match="a path, the model's bytes or an onnx.ModelProto"):
        cfx.load_onnx(12)


def test_stop_of_a_runaway_loop():
    g = cfx.load_onnx(while_model()).entry
    # limit far away: the budget of iterations stops it
    with pytest.raises(cfx.RunStopped) as info:
        g(s0=np.array(1, np.int64), limit=np.array(1 << 60, np.int64), backend="cpu", max_iters=5)
    assert info.value.status == "limit"


# ---- from_torch -----------------------------------------------------------------------------

def _torch():
    return pytest.importorskip("torch")


def _while_loop(torch):
    fn = getattr(torch, "while_loop", None)
    if fn is None:
        try:
            from torch._higher_order_ops.while_loop import while_loop as fn
        except ImportError:
            pytest.skip("this torch has no while_loop")
    return fn


def _check_against_eager(torch, module, args, rtol=1e-5, atol=1e-6, **export_kwargs):
    mod = cfx.from_torch(module, args, **export_kwargs)
    g = mod.entry
    assert len(g.inputs) == len(args), g
    out = g(*[a.numpy() for a in args], backend="cpu", results="numpy")
    want = module(*args)
    want = want if isinstance(want, (tuple, list)) else (want,)
    got = list(out.values())
    assert len(got) == len(want), (g, want)
    for gv, wv in zip(got, want):
        wv = wv.detach().numpy()
        assert gv.shape == wv.shape and gv.dtype == wv.dtype, (gv, wv)
        if wv.dtype.kind in "biu":
            np.testing.assert_array_equal(gv, wv)
        else:
            np.testing.assert_allclose(gv, wv, rtol=rtol, atol=atol)
    return g


def test_from_torch_shifts_of_int64():
    """PyTorch exports a << k and a >> k of int64 as Cast(uint64) -> BitShift -> Cast(int64),
    the right shift of a negative value filled with ones by a BitwiseOr and a Where (arithmetic,
    as eager's); cfx holds the uint64 in i64 as its bits. Against eager."""
    torch = _torch()

    class Shifts(torch.nn.Module):
        def forward(self, a):
            return (a << 2) + (a >> 1)

    a = torch.tensor([5, -1, -(2**62) - 3, 2**62 + 12345, 1, -7, 2**63 - 1, -(2**63)], dtype=torch.int64)
    _check_against_eager(torch, Shifts().eval(), (a,))



def test_from_torch_dynamic_shapes_take_the_examples():
    """An export with dynamic_shapes leaves the batch symbolic: from_torch imports it for the
    example's shape, and a call of another shape is refused naming the input; shapes= gives
    another. Against eager."""
    torch = _torch()
    from torch.export import Dim

    class Head(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 3)

        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda x: self.lin(x).relu(), lambda x: self.lin(x) * 2, (x,))

    m = Head().eval()
    x = torch.randn(2, 4)
    batch = Dim("batch", min=1, max=64)
    mod = cfx.from_torch(m, (x,), dynamic_shapes={"x": {0: batch}})
    got = list(mod(x.numpy(), backend="cpu", results="numpy").values())[0]
    assert np.allclose(got, m(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="input 'x' is f32\\[2, 4\\]; got shape \\[5, 4\\]"):
        mod(np.zeros((5, 4), np.float32), backend="cpu")
    x5 = torch.randn(5, 4)
    mod5 = cfx.from_torch(m, (x,), dynamic_shapes={"x": {0: batch}}, shapes={"x": (5, 4)})
    got = list(mod5(x5.numpy(), backend="cpu", results="numpy").values())[0]
    assert np.allclose(got, m(x5).detach().numpy(), rtol=1e-5, atol=1e-6)

def test_from_torch_without_torch_says_so(monkeypatch):
    import builtins
    real = builtins.__import__

    def no_torch(name, *a, **k):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("No module named 'torch'")
        return real(name, *a, **k)
    monkeypatch.setattr(builtins, "__import__", no_torch)
    with pytest.raises(ImportError, match="cfx.from_torch needs PyTorch"):
        cfx.from_torch(object(), ())


def test_from_torch_cond():
    torch = _torch()

    def double(x):
        return x * 2.0

    def less_one(x):
        return x - 1.0

    class Branch(torch.nn.Module):
        def forward(self, x):
            return torch.cond(x.sum() > 0, double, less_one, (x,))

    for x in (torch.tensor([1.0, 2.0, -0.5]), torch.tensor([-1.0, -2.0, 0.5])):
        _check_against_eager(torch, Branch(), (x,))


def test_from_torch_while_counting_to_a_tensor():
    torch = _torch()
    while_loop = _while_loop(torch)

    class Count(torch.nn.Module):
        def forward(self, n, x):
            def cond(i, x):
                return i < n

            def body(i, x):
                return i + 1, x * 1.5 + 1.0
            return while_loop(cond, body, (torch.zeros_like(n), x))

    _check_against_eager(torch, Count(), (torch.tensor(5), torch.tensor([1.0, -2.0])))


def test_from_torch_greedy_decoding_with_early_stop():
    torch = _torch()
    while_loop = _while_loop(torch)
    V, D, M = 6, 4, 8
    gen = torch.Generator().manual_seed(9)   # a greedy chain 0 -> 1 -> 4 -> 5 -> 0: no fixed point early

    class Decode(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Parameter(torch.randn(V, D, generator=gen), requires_grad=False)
            self.w = torch.nn.Parameter(torch.randn(D, V, generator=gen), requires_grad=False)

        def forward(self, start, end_token):
            positions = torch.arange(M)

            def cond(i, tok, tokens, done):
                return (i < M) & ~done

            def body(i, tok, tokens, done):
                # index_select on a [1] index, not emb[tok]: a 0-d tensor index inside
                # while_loop gives torch.export an unbacked size it refuses (torch 2.15)
                row = torch.index_select(self.emb, 0, tok.reshape(1))
                logits = (row @ self.w).reshape(V)
                nxt = torch.argmax(logits)
                tokens = torch.where(positions == i, nxt, tokens)
                return i + 1, nxt, tokens, nxt == end_token
            i0 = torch.zeros((), dtype=torch.int64)
            return while_loop(cond, body, (i0, start, torch.full((M,), -1), torch.zeros((), dtype=torch.bool)))

    dec = Decode().eval()
    table = torch.argmax(dec.emb @ dec.w, dim=1)
    start = torch.tensor(0)
    end = table[table[start]]   # reached at the second step: an early stop
    assert int(dec(start, end)[0]) == 2   # eager stops early, so the test covers the stop
    _check_against_eager(torch, dec, (start, end))
    _check_against_eager(torch, dec, (start, torch.tensor(V)))   # never produced: all M steps


def test_from_torch_cg_with_tolerance():
    torch = _torch()
    while_loop = _while_loop(torch)
    n = 6
    gen = torch.Generator().manual_seed(3)
    q = torch.randn(n, n, generator=gen)
    A = q @ q.T + n * torch.eye(n)
    b = torch.randn(n, generator=gen)

    class CG(torch.nn.Module):
        def forward(self, A, b, tol):
            def cond(k, x, r, p, rs):
                return (k < 20) & (torch.sqrt(rs) > tol)

            def body(k, x, r, p, rs):
                Ap = A @ p
                alpha = rs / (p * Ap).sum()
                x = x + alpha * p
                r = r - alpha * Ap
                rs2 = (r * r).sum()
                return k + 1, x, r, r + (rs2 / rs) * p, rs2
            k0 = torch.zeros((), dtype=torch.int64)
            # clones: while_loop refuses carried values that alias an input or each other
            return while_loop(cond, body, (k0, torch.zeros_like(b), b.clone(), b.clone(), (b * b).sum()))

    args = (A, b, torch.tensor(1e-5))
    out = list(cfx.from_torch(CG(), args).entry(*[a.numpy() for a in args], backend="cpu").values())
    want = CG()(*args)
    assert int(want[0]) < 20   # eager stops on the tolerance, not on the bound of 20 steps
    # the count may differ by one where float rounding moves the residual across tol
    assert abs(int(out[0]) - int(want[0])) <= 1
    np.testing.assert_allclose(out[1], torch.linalg.solve(A.double(), b.double()).numpy(),
                               rtol=1e-3, atol=1e-4)


def test_from_torch_cond_inside_while():
    torch = _torch()
    while_loop = _while_loop(torch)

    class Collatz(torch.nn.Module):
        def forward(self, x):
            def cond(i, x):
                return (x != 1) & (i < 100)

            def half(x):
                return x // 2

            def triple_plus_one(x):
                return 3 * x + 1

            def body(i, x):
                return i + 1, torch.cond(x % 2 == 0, half, triple_plus_one, (x,))
            return while_loop(cond, body, (torch.zeros((), dtype=torch.int64), x))

    for x in (6, 27, 1):
        _check_against_eager(torch, Collatz(), (torch.tensor(x),))


def test_from_torch_float16_while():
    """A float16 torch.while_loop: cfx holds the values in f32 and rounds after each op, so it
    gives eager PyTorch's float16 results exactly (as float32)."""
    torch = _torch()
    while_loop = _while_loop(torch)

    class Halving(torch.nn.Module):
        def forward(self, x, n):
            def cond(i, acc):
                return i < n

            def body(i, acc):
                return i + 1, acc * 0.5 + x
            _, acc = while_loop(cond, body, (torch.zeros((), dtype=torch.int64), torch.zeros_like(x)))
            return acc

    x = torch.tensor([1.1, 2.3, 1000.7, -0.01], dtype=torch.float16)
    n = torch.tensor(6)
    g = cfx.from_torch(Halving(), (x, n)).entry
    got = list(g(x.numpy(), n.numpy(), backend="cpu").values())[0]
    want = Halving()(x, n).numpy()
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want.astype(np.float32))


def test_from_torch_lstm_gru():
    """nn.LSTM (two layers, batch_first, with its final states) and nn.GRU (bidirectional, an
    initial state given) exported by PyTorch as ONNX's LSTM and GRU nodes: each a for loop of
    cfx over the sequence, against eager PyTorch."""
    torch = _torch()
    torch.manual_seed(0)

    class Lstm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = torch.nn.LSTM(5, 4, num_layers=2, batch_first=True)

        def forward(self, x):
            y, (h, c) = self.rnn(x)
            return y, h, c

    class Gru(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = torch.nn.GRU(3, 6, bidirectional=True)

        def forward(self, x, h0):
            return self.rnn(x, h0)

    with torch.no_grad():
        _check_against_eager(torch, Lstm().eval(), (torch.randn(2, 7, 5),), rtol=1e-4, atol=1e-5)
        _check_against_eager(torch, Gru().eval(), (torch.randn(6, 3, 3), torch.randn(2, 3, 6)),
                             rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("attrs,words", [
    ({"activations": ["Sigmoid", "Gelu", "Tanh"]}, "activation 'Gelu' is not supported"),
    ({"activations": ["Sigmoid"]}, "activations has 1 names; this LSTM takes 3"),
    ({"direction": "sideways"}, "direction 'sideways'"),
    ({"hidden_size": 3}, "hidden_size is 3"),
])
def test_lstm_refusals_name_the_node(attrs, words):
    node = helper.make_node("LSTM", ["x", "w", "r"], ["y"], name="the_lstm", **attrs)
    g = helper.make_graph([node], "g", [vi("x", F32, [2, 1, 3]), vi("w", F32, [1, 8, 3]),
                                        vi("r", F32, [1, 8, 2])], [vi("y", F32, [2, 1, 1, 2])])
    refused(make(g, opset=14), "the_lstm", words)


def test_from_torch_decoder_opset23():
    """A tiny transformer decoder (embedding, RMSNorm, causal scaled_dot_product_attention,
    LayerNorm, a linear head) decoding greedily inside a torch.while_loop, exported at opset
    23, where the attention is one ONNX Attention node (and the RMSNorm RMSNormalization)."""
    torch = _torch()
    while_loop = _while_loop(torch)
    F = torch.nn.functional
    V, D, H, M = 7, 8, 2, 6
    torch.manual_seed(5)

    class Decoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(V, D)
            self.pos = torch.nn.Parameter(torch.randn(M, D), requires_grad=False)
            self.norm1 = torch.nn.RMSNorm(D)
            self.qkv = torch.nn.Linear(D, 3 * D)
            self.proj = torch.nn.Linear(D, D)
            self.norm2 = torch.nn.LayerNorm(D)
            self.head = torch.nn.Linear(D, V)

        def logits(self, tokens):
            x = self.emb(tokens) + self.pos                       # [M, D]
            q, k, v = self.qkv(self.norm1(x)).split(D, dim=-1)
            q, k, v = (t.reshape(M, H, D // H).transpose(0, 1).unsqueeze(0) for t in (q, k, v))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)   # [1, H, M, D / H]
            x = x + self.proj(a.squeeze(0).transpose(0, 1).reshape(M, D))
            return self.head(self.norm2(x))                      # [M, V]

        def forward(self, start, end_token):
            positions = torch.arange(M)

            def cond(i, tokens, done, score):
                return (i < M - 1) & ~done

            def body(i, tokens, done, score):
                # the causal mask keeps position i from seeing the unfilled ones after it;
                # the score (the sum of the logits chosen) shows any leak of them
                row = torch.index_select(self.logits(tokens), 0, i.reshape(1))
                nxt = torch.argmax(row.reshape(V))
                tokens = torch.where(positions == i + 1, nxt, tokens)
                return i + 1, tokens, nxt == end_token, score + row.max()
            tokens = torch.where(positions == 0, start, torch.zeros(M, dtype=torch.int64))
            i0 = torch.zeros((), dtype=torch.int64)
            return while_loop(cond, body, (i0, tokens, torch.zeros((), dtype=torch.bool), torch.zeros(())))

    dec = Decoder().eval()
    start = torch.tensor(3)
    program = torch.onnx.export(dec, (start, torch.tensor(V)), dynamo=True, opset_version=23)
    ops = set()

    def collect(g):
        for nd in g.node:
            ops.add(nd.op_type)
            for a in nd.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    collect(a.g)
    collect(program.model_proto.graph)
    for f in program.model_proto.functions:
        collect(f)
    assert "Attention" in ops and "Loop" in ops, sorted(ops)
    with torch.no_grad():
        full = dec(start, torch.tensor(V))
        assert int(full[0]) == M - 1   # never produced: every step
        end = full[1][2]               # the second token produced: an early stop
        early = dec(start, end)
        assert int(early[0]) < M - 1, (full, early)
        for end_token in (torch.tensor(V), end):
            _check_against_eager(torch, dec, (start, end_token), rtol=1e-4, atol=1e-5, opset_version=23)


def test_from_torch_everyday_ops():
    """Everyday tensor code whose exports hold ScatterElements (setitem, scatter, scatter_add),
    Tile (repeat), Pad (F.pad: constant, reflect, replicate, circular), TopK on 3-D (topk, sort,
    argsort), ReduceProd and BatchNormalization (BatchNorm1d in eval), each against eager PyTorch."""
    torch = _torch()
    F = torch.nn.functional
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(2, 3, 4, generator=gen)

    class SetItem(torch.nn.Module):
        def forward(self, x):
            y = x.clone()
            y[:, 1] = 0.5
            return y * 2

    class Scatter(torch.nn.Module):
        def forward(self, x, idx, dup, src):
            return torch.scatter(x, 2, idx, src), torch.scatter_add(x, 2, dup[:, :, :3], src[:, :, :3])

    class Repeat(torch.nn.Module):
        def forward(self, x):
            return x.repeat(1, 2, 1), x.repeat(2, 1, 20)

    class Pads(torch.nn.Module):
        def forward(self, x):
            return (F.pad(x, (1, 2)), F.pad(x, (2, 1, 1, 0), value=-1.5), F.pad(x, (3, 2), mode="reflect"),
                    F.pad(x, (1, 2), mode="replicate"), F.pad(x, (2, 3), mode="circular"))

    class TopK(torch.nn.Module):
        def forward(self, x):
            v, i = torch.topk(x, 3, dim=2)
            s, si = torch.sort(x, dim=1, descending=True)
            return v, i, s, si, torch.argsort(x, dim=0)

    class Prod(torch.nn.Module):
        def forward(self, x):
            return torch.prod(x, dim=-1), torch.prod(x, dim=1, keepdim=True)

    bn = torch.nn.BatchNorm1d(3)
    with torch.no_grad():
        bn.running_mean.copy_(torch.randn(3, generator=gen))
        bn.running_var.copy_(torch.rand(3, generator=gen) + 0.5)
        bn.weight.copy_(torch.randn(3, generator=gen))
        bn.bias.copy_(torch.randn(3, generator=gen))
    bn.eval()

    idx = torch.randint(0, 4, (2, 3, 4), generator=gen)
    src = torch.randn(2, 3, 4, generator=gen)
    idx_perm = torch.stack([torch.randperm(4, generator=gen) for _ in range(6)]).reshape(2, 3, 4)
    _check_against_eager(torch, SetItem(), (x,))
    _check_against_eager(torch, Scatter(), (x, idx_perm, idx, src))
    _check_against_eager(torch, Repeat(), (x,))
    _check_against_eager(torch, Pads(), (x,))
    _check_against_eager(torch, TopK(), (x,))      # distinct values: the order of ties is not in question
    _check_against_eager(torch, Prod(), (x,))
    _check_against_eager(torch, bn, (x,))
    _check_against_eager(torch, bn, (x[:, :, 0].contiguous(),))


def test_from_torch_interpolate():
    """F.interpolate exported by PyTorch as ONNX's Resize: nearest (scale 2), bilinear
    (align_corners False and True), bicubic and a bilinear resize to a size, on a [1, 2, 5, 7]
    input, against eager PyTorch (the weights along each axis computed at import)."""
    torch = _torch()
    F = torch.nn.functional
    x = torch.randn(1, 2, 5, 7, generator=torch.Generator().manual_seed(11))

    class Interp(torch.nn.Module):
        def __init__(self, **kw):
            super().__init__()
            self.kw = kw

        def forward(self, x):
            return F.interpolate(x, **self.kw)

    for kw in (dict(scale_factor=2, mode="nearest"),
               dict(scale_factor=2, mode="bilinear", align_corners=False),
               dict(scale_factor=2, mode="bilinear", align_corners=True),
               dict(scale_factor=(1.5, 0.5), mode="bicubic", align_corners=False),
               dict(size=(3, 11), mode="bilinear", align_corners=False)):
        _check_against_eager(torch, Interp(**kw), (x,), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape,scales,sizes,dtype,attrs", [
    ([3, 4, 5], [2, 0.5, 1.5], None, np.float32, {"mode": "linear"}),   # axis 0, a middle axis, the last
    ([2, 3, 4, 5], None, [3, 5, 4, 7], np.float32, {"mode": "cubic", "coordinate_transformation_mode": "align_corners"}),
    ([2, 3, 4, 5], [1, 2, 3, 0.5], None, np.int64, {"mode": "nearest", "nearest_mode": "round_prefer_ceil"}),
    ([2, 3, 4, 5], [2, 2, 1, 1], None, np.float64, {"mode": "linear", "antialias": 1}),
    ([6, 7], None, [2, 3], np.float32, {"mode": "cubic", "antialias": 1, "exclude_outside": 1}),
])
def test_resize_against_onnx_reference(shape, scales, sizes, dtype, attrs):
    """Resize (opset 18) against onnx's reference evaluator: reals through a product with known
    weights along each axis (the first and middle axes by two transposes), integers gathered."""
    from onnx.reference import ReferenceEvaluator
    et = {np.float32: F32, np.float64: TensorProto.DOUBLE, np.int64: I64}[dtype]
    if scales is not None:
        ins, init = ["x", "", "s"], numpy_helper.from_array(np.array(scales, np.float32), "s")
    else:
        ins, init = ["x", "", "", "z"], numpy_helper.from_array(np.array(sizes, np.int64), "z")
    node = helper.make_node("Resize", ins, ["y"], name="rs", **attrs)
    g = helper.make_graph([node], "g", [vi("x", et, shape)], [vi("y", et, None)], initializer=[init])
    m = make(g, opset=18)
    x = (np.random.default_rng(1).standard_normal(shape) * 5).astype(dtype)
    want = ReferenceEvaluator(m).run(None, {"x": x})[0]
    got = cfx.load_onnx(m).entry(x=x, backend="cpu", results="numpy")["y"]
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_resize_refusals_name_the_node():
    """Resize with scales of run time, or a mode cfx does not know, is refused, naming the node and
    the input."""
    x = vi("x", F32, [1, 1, 2, 2])
    node = helper.make_node("Resize", ["x", "", "s"], ["y"], name="the_resize", mode="linear")
    g = helper.make_graph([node], "g", [x, vi("s", F32, [4])], [vi("y", F32, None)])
    refused(make(g, opset=18), "the_resize", "the scales ('s') must be known")
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s")
    node = helper.make_node("Resize", ["x", "", "s"], ["y"], name="the_resize", mode="area")
    g = helper.make_graph([node], "g", [x], [vi("y", F32, None)], initializer=[scales])
    refused(make(g, opset=18), "the_resize", "mode 'area' is not supported")


@pytest.mark.parametrize("op,shapes,attrs,words", [
    ("Conv", ([1, 4, 5], [3, 3, 3]), {"group": 2}, "group 2 does not fit"),
    ("Conv", ([1, 2, 5], [3, 2, 3]), {"auto_pad": "SAME_MIDDLE"}, "auto_pad 'SAME_MIDDLE' is not supported"),
    ("Conv", ([1, 2, 2], [3, 2, 3]), {}, "wider than the padded input"),
    ("MaxPool", ([1, 2, 6],), {"kernel_shape": [2], "auto_pad": "SAME_UPPER", "ceil_mode": 1},
     "ceil_mode with auto_pad 'SAME_UPPER'"),
    ("AveragePool", ([1, 2, 6, 6],), {"kernel_shape": [2]}, "kernel_shape must give one size"),
])
def test_conv_pool_refusals_name_the_node(op, shapes, attrs, words):
    ins = [vi(n, F32, s) for n, s in zip(("x", "w"), shapes)]
    node = helper.make_node(op, [i.name for i in ins], ["y"], name="the_window", **attrs)
    g = helper.make_graph([node], "g", ins, [vi("y", F32, None)])
    refused(make(g, opset=17), "the_window", words)


def test_from_torch_conv_pool():
    """nn.Conv1d (padding, stride 2, dilation), nn.Conv2d (groups, and depthwise), MaxPool2d,
    AvgPool2d, AdaptiveAvgPool2d(1) and nn.ConvTranspose1d/2d exported by PyTorch as ONNX's Conv,
    MaxPool, AveragePool, GlobalAveragePool (or ReduceMean) and ConvTranspose: slices of the padded
    input multiplied by the weights in cfx's language, against eager PyTorch."""
    torch = _torch()
    torch.manual_seed(3)
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv1d(3, 8, 3, padding=2, stride=2, dilation=2)
            self.c2 = nn.Conv2d(2, 6, 3, padding=1, groups=2)
            self.dw = nn.Conv2d(6, 6, 3, padding=1, groups=6, bias=False)
            self.mp = nn.MaxPool2d(2)
            self.ap = nn.AvgPool2d(3, stride=2, padding=1)
            self.gp = nn.AdaptiveAvgPool2d(1)

        def forward(self, x):
            y = torch.relu(self.c1(x))                  # [2, 8, 8]
            z = self.dw(self.c2(y.reshape(2, 2, 4, 8)))  # [2, 6, 4, 8]
            return y, self.ap(self.mp(z)), self.gp(z).flatten(1)

    with torch.no_grad():
        _check_against_eager(torch, nn.Sequential(nn.Conv1d(3, 4, 5, padding=1, stride=2, dilation=2)).eval(),
                             (torch.randn(1, 3, 17),), rtol=1e-4, atol=1e-5)
        _check_against_eager(torch, Net().eval(), (torch.randn(2, 3, 16),), rtol=1e-4, atol=1e-5)
        _check_against_eager(torch, nn.Conv2d(4, 6, 3, stride=(2, 1), padding=(1, 2), groups=2).eval(),
                             (torch.randn(2, 4, 7, 5),), rtol=1e-4, atol=1e-5)  # 2 channels a group, 2 images
        # ConvTranspose with weights known at import (their channel axes swapped there)
        _check_against_eager(torch, nn.ConvTranspose1d(4, 3, 3, stride=2, padding=1, output_padding=1).eval(),
                             (torch.randn(2, 4, 5),), rtol=1e-4, atol=1e-5)
        _check_against_eager(torch, nn.ConvTranspose2d(4, 6, (2, 3), stride=2, groups=2, dilation=(1, 2)).eval(),
                             (torch.randn(1, 4, 3, 4),), rtol=1e-4, atol=1e-5)


def test_scatter_elements_index_out_of_range_stops():
    """ScatterElements with indices of run time: a negative index counts from the end, one out of
    range stops the run with `index` (never a write outside the data); known indices out of range
    are refused at import, naming the node."""
    nodes = [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], name="put", axis=1)]
    g = helper.make_graph(nodes, "scatter", [vi("x", F32, [2, 3]), vi("i", I64, [2, 1]), vi("u", F32, [2, 1])],
                          [vi("y", F32, [2, 3])])
    f = cfx.load_onnx(make(g, opset=18)).entry
    x = np.zeros((2, 3), np.float32)
    u = np.array([[1.0], [2.0]], np.float32)
    y = f(x=x, i=np.array([[-1], [0]], np.int64), u=u, backend="cpu", results="numpy")["y"]
    np.testing.assert_array_equal(y, [[0, 0, 1], [2, 0, 0]])
    for bad in (3, -4):
        with pytest.raises(cfx.RunStopped) as info:
            f(x=x, i=np.array([[0], [bad]], np.int64), u=u, backend="cpu")
        assert info.value.status == "index"
    known = helper.make_graph(nodes, "scatter", [vi("x", F32, [2, 3]), vi("u", F32, [2, 1])], [vi("y", F32, [2, 3])],
                              [numpy_helper.from_array(np.array([[0], [3]], np.int64), "i")])
    with pytest.raises(cfx.CompileError, match="put.*index 3 is out of range"):
        cfx.load_onnx(make(known, opset=18))


def test_loss_target_out_of_range_stops():
    """NegativeLogLikelihoodLoss with targets of run time: a target equal to ignore_index
    (negative here) counts for nothing, any other outside 0 to C - 1 stops the run with
    `index` (never a read outside the input); the means by hand. Known targets out of range
    are refused at import, naming the node."""
    nodes = [helper.make_node("NegativeLogLikelihoodLoss", ["x", "t", "w"], ["loss"], name="nll", ignore_index=-100)]
    g = helper.make_graph(nodes, "nll", [vi("x", F32, [2, 3]), vi("t", I64, [2]), vi("w", F32, [3])],
                          [vi("loss", F32, [])])
    f = cfx.load_onnx(make(g, opset=13)).entry
    x = np.array([[-1.0, -2.0, -0.5], [-0.25, -3.0, -1.5]], np.float32)
    w = np.array([1.0, 0.5, 2.0], np.float32)
    loss = lambda t: f(x=x, t=np.array(t, np.int64), w=w, backend="cpu", results="numpy")["loss"]
    np.testing.assert_allclose(loss([2, -100]), 0.5 * 2.0 / 2.0, rtol=1e-6)
    np.testing.assert_allclose(loss([1, 0]), (2.0 * 0.5 + 0.25 * 1.0) / (0.5 + 1.0), rtol=1e-6)
    for bad in (3, -1, 7):
        with pytest.raises(cfx.RunStopped) as info:
            loss([0, bad])
        assert info.value.status == "index"
    known = helper.make_graph(nodes, "nll", [vi("x", F32, [2, 3]), vi("w", F32, [3])], [vi("loss", F32, [])],
                              [numpy_helper.from_array(np.array([0, 3], np.int64), "t")])
    refused(make(known, opset=13), "nll", "target 3 is out of range for 3 classes")


def test_gather_nd_index_out_of_range_stops():
    """GatherND with indices of run time (batch_dims 1): a negative index counts from the end,
    one out of range stops the run with `index` (never a read outside the data); known indices
    out of range are refused at import, naming the node."""
    nodes = [helper.make_node("GatherND", ["x", "i"], ["y"], name="pick", batch_dims=1)]
    g = helper.make_graph(nodes, "gather_nd", [vi("x", F32, [2, 3, 2]), vi("i", I64, [2, 1, 1])],
                          [vi("y", F32, [2, 1, 2])])
    f = cfx.load_onnx(make(g, opset=13)).entry
    x = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    y = f(x=x, i=np.array([[[-1]], [[0]]], np.int64), backend="cpu", results="numpy")["y"]
    np.testing.assert_array_equal(y, [[[4, 5]], [[6, 7]]])
    for bad in (3, -4):
        with pytest.raises(cfx.RunStopped) as info:
            f(x=x, i=np.array([[[0]], [[bad]]], np.int64), backend="cpu")
        assert info.value.status == "index"
    known = helper.make_graph(nodes, "gather_nd", [vi("x", F32, [2, 3, 2])], [vi("y", F32, [2, 1, 2])],
                              [numpy_helper.from_array(np.array([[[0]], [[3]]], np.int64), "i")])
    with pytest.raises(cfx.CompileError, match="pick.*index 3 is out of range"):
        cfx.load_onnx(make(known, opset=13))


def test_from_torch_list_appended_in_a_loop():
    """A Python list of tensors appended in a loop over a tensor's rows, stacked at the end:
    PyTorch's TorchScript exporter (torch.jit.script, dynamo=False) writes it as a Loop carrying
    a sequence (SequenceEmpty, SequenceInsert) and ConcatFromSequence, which cfx imports as a
    list grown in place; compared with eager PyTorch. (The dynamo exporter unrolls such a loop
    and writes no sequence.)"""
    torch = _torch()
    import io
    import warnings

    class Rows(torch.nn.Module):
        def forward(self, x, h):
            outs = []
            for i in range(x.size(0)):
                h = torch.tanh(x[i] * 2.0 + h)
                outs.append(h)
            return torch.stack(outs, 1), h

    x = torch.linspace(-1.0, 1.0, 12).reshape(4, 3)
    h = torch.tensor([0.5, -0.25, 0.0])
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.onnx.export(torch.jit.script(Rows()), (x, h), buf, dynamo=False, input_names=["x", "h"],
                              output_names=["rows", "last"], opset_version=17)
        except Exception as e:  # a torch without the TorchScript exporter
            pytest.skip("torch.onnx.export(dynamo=False) failed: %s" % e)
    m = onnx.load_from_string(buf.getvalue())
    ops = set()

    def walk(g):
        for nd in g.node:
            ops.add(nd.op_type)
            for a in nd.attribute:
                if a.HasField("g"):
                    walk(a.g)
    walk(m.graph)
    if "SequenceInsert" not in ops:
        pytest.skip("this exporter wrote no sequence: %s" % sorted(ops))
    g = cfx.load_onnx(buf.getvalue()).entry
    out = g(x=x.numpy(), h=h.numpy(), backend="cpu", results="numpy")
    rows, last = Rows()(x, h)
    np.testing.assert_allclose(out["rows"], rows.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["last"], last.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert out["rows"].shape == (3, 4)


def rank6_model(perm, readers=1, shape=(2, 3, 2, 2, 2, 2)):
    """x [2, 3, 4, 4] reshaped to rank 6, transposed by perm, reshaped to [2, -1, 2, 2] (with
    readers > 1, the rank-6 value is also a graph output's source)."""
    nodes = [helper.make_node("Reshape", ["x", "mid"], ["six"], name="to6"),
             helper.make_node("Transpose", ["six"], ["moved"], perm=perm, name="move"),
             helper.make_node("Reshape", ["moved", "back"], ["y"], name="back4")]
    outs = [vi("y", F32, [2, 12, 2, 2])]
    if readers > 1:
        nodes.append(helper.make_node("ReduceSum", ["six"], ["total"], keepdims=0))
        outs.append(vi("total", F32, []))
    g = helper.make_graph(nodes, "rank6", [vi("x", F32, [2, 3, 4, 4])], outs,
                          [numpy_helper.from_array(np.array(shape, np.int64), "mid"),
                           numpy_helper.from_array(np.array([2, -1, 2, 2], np.int64), "back")])
    return make(g)


@pytest.mark.parametrize("perm,shape", [([0, 1, 3, 5, 2, 4], (2, 3, 2, 2, 2, 2)), ([0, 1, 2, 3, 4, 5], (2, 3, 2, 2, 2, 2)),
                                        ([2, 3, 0, 1, 4, 5], (2, 3, 2, 2, 2, 2)), ([5, 4, 0, 1, 2, 3], (2, 3, 2, 2, 2, 2)),
                                        ([0, 1, 3, 5, 2, 4], (2, 3, 1, 4, 2, 2)), ([1, 0, 3, 2, 5, 4], (1, 6, 1, 4, 4, 1))])
def test_rank6_reshape_transpose_reshape(perm, shape):
    """A Reshape to rank 6 read only by a Transpose read only by a Reshape to rank 4 (as PyTorch
    writes F.pixel_unshuffle) is one transpose of the axes that move together (axes of 1 left
    out), where that has at most 5 axes; numpy's reshape and transpose give the expected values."""
    x = np.arange(96, dtype=np.float32).reshape(2, 3, 4, 4) * 0.5 - 7
    want = x.reshape(shape).transpose(perm).reshape(2, -1, 2, 2)
    got = cfx.load_onnx(rank6_model(perm, shape=shape)).entry(x=x, backend="cpu", results="numpy")["y"]
    np.testing.assert_array_equal(got, want)


def test_rank6_refusals_name_the_node():
    """Where the rank-6 value has another reader, or the permutation leaves six axes apart, the
    Reshape to rank 6 is refused as before, naming it."""
    refused(rank6_model([0, 1, 3, 5, 2, 4], readers=2), "to6", "rank 6")
    refused(rank6_model([1, 0, 3, 2, 5, 4]), "to6", "rank 6")


@pytest.mark.parametrize("index_known", [True, False])
def test_rank6_gather_transpose_reshape(index_known):
    """F.unfold as PyTorch writes it: a Gather of a [kernel, positions] index along each spatial
    axis, the second giving rank 6, a Transpose and a Reshape to [N, C * kh * kw, L]; the Gather
    of the index flattened and one transpose of merged axes. The index known at import or given
    at run time; numpy's take, transpose and reshape give the expected values."""
    x = (np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5) - 50) / 8
    ih = np.array([[0, 1, 2], [1, 2, 3]], np.int64)        # kernel 2, 3 positions along H
    iw = np.array([[0, 2], [1, 3], [2, 4]], np.int64)      # kernel 3, 2 positions along W
    nodes = [helper.make_node("Gather", ["x", "ih"], ["g1"], axis=2),
             helper.make_node("Gather", ["g1", "iw"], ["g2"], axis=4, name="wide"),
             helper.make_node("Transpose", ["g2"], ["t"], perm=[0, 1, 2, 4, 3, 5]),
             helper.make_node("Reshape", ["t", "shape"], ["y"])]
    inputs = [vi("x", F32, [2, 3, 4, 5])]
    inits = [numpy_helper.from_array(ih, "ih"), numpy_helper.from_array(np.array([2, 18, -1], np.int64), "shape")]
    if index_known:
        inits.append(numpy_helper.from_array(iw, "iw"))
    else:
        inputs.append(vi("iw", I64, [3, 2]))
    g = helper.make_graph(nodes, "unfold", inputs, [vi("y", F32, [2, 18, 6])], inits)
    want = np.take(np.take(x, ih, axis=2), iw, axis=4).transpose(0, 1, 2, 4, 3, 5).reshape(2, 18, -1)
    feeds = {"x": x} if index_known else {"x": x, "iw": iw}
    got = cfx.load_onnx(make(g)).entry(**feeds, backend="cpu", results="numpy")["y"]
    np.testing.assert_array_equal(got, want)


def np_col2im(cols, image, block, strides, dilations, pads):
    """ONNX's Col2Im written out: each column's block added back at its place in the padded image."""
    n, ck, _ = cols.shape
    ns, k = len(image), int(np.prod(block))
    padded = [image[d] + pads[d] + pads[ns + d] for d in range(ns)]
    counts = [(padded[d] - (block[d] - 1) * dilations[d] - 1) // strides[d] + 1 for d in range(ns)]
    out = np.zeros((n, ck // k, *padded), np.float64)
    for col, start in enumerate(np.ndindex(*counts)):
        for j, off in enumerate(np.ndindex(*block)):
            at = tuple(start[d] * strides[d] + off[d] * dilations[d] for d in range(ns))
            out[(slice(None), slice(None)) + at] += cols[:, j::k, col]
    return out[(slice(None), slice(None)) + tuple(slice(pads[d], pads[d] + image[d]) for d in range(ns))]


@pytest.mark.parametrize("image,block,strides,dilations,pads", [
    ([5, 6], [2, 3], [1, 2], [1, 1], [1, 0, 0, 1]),
    ([6, 6], [2, 2], [2, 2], [2, 1], [1, 1, 1, 1]),
    ([9], [3], [2], [2], [1, 2])])
def test_col2im_against_numpy(image, block, strides, dilations, pads):
    """Col2Im (PyTorch's F.fold) as a ConvTranspose with one-hot weights, against numpy's sums."""
    ns, k = len(image), int(np.prod(block))
    padded = [image[d] + pads[d] + pads[ns + d] for d in range(ns)]
    L = int(np.prod([(padded[d] - (block[d] - 1) * dilations[d] - 1) // strides[d] + 1 for d in range(ns)]))
    cols = np.random.default_rng(3).standard_normal((2, 3 * k, L)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("Col2Im", ["cols", "image", "block"], ["y"], strides=strides, dilations=dilations, pads=pads)],
        "fold", [vi("cols", F32, list(cols.shape))], [vi("y", F32, [2, 3] + image)],
        [numpy_helper.from_array(np.array(image, np.int64), "image"),
         numpy_helper.from_array(np.array(block, np.int64), "block")])
    got = cfx.load_onnx(make(g, opset=18)).entry(cols=cols, backend="cpu", results="numpy")["y"]
    np.testing.assert_allclose(got, np_col2im(cols, image, block, strides, dilations, pads), rtol=1e-5, atol=1e-5)


def test_cumsum_of_known_values_is_known():
    """A CumSum of values known at import is summed at import, so that what follows from it may
    fix a shape (PyTorch's repeat_interleave by a tensor of repeats: a Range to the repeats'
    total); int64 and float32, exclusive and reverse, against numpy."""
    reps = np.array([2, 1, 3], np.int64)
    w = np.array([[0.5, -1.25, 2.0], [3.0, 0.25, -0.75]], np.float32)
    nodes = [helper.make_node("CumSum", ["reps", "zero"], ["ends"]),
             helper.make_node("Gather", ["ends", "last"], ["total"], axis=0),
             helper.make_node("Range", ["start", "total", "step"], ["positions"], name="range"),
             helper.make_node("CumSum", ["w", "one"], ["wx"], exclusive=1, reverse=1),
             helper.make_node("Add", ["wx", "x"], ["y"])]
    inits = [numpy_helper.from_array(v, k) for k, v in (
        ("reps", reps), ("w", w), ("zero", np.array(0, np.int64)), ("one", np.array(1, np.int64)),
        ("last", np.array(-1, np.int64)), ("start", np.array(0, np.int64)), ("step", np.array(1, np.int64)))]
    g = helper.make_graph(nodes, "cumsum_known", [vi("x", F32, [2, 3])],
                          [vi("positions", I64, [6]), vi("y", F32, [2, 3])], inits)
    x = np.ones((2, 3), np.float32)
    out = cfx.load_onnx(make(g)).entry(x=x, backend="cpu", results="numpy")
    np.testing.assert_array_equal(out["positions"], np.arange(reps.sum()))
    wx = np.cumsum(w[:, ::-1], axis=1)[:, ::-1] - w          # exclusive, reverse
    np.testing.assert_allclose(out["y"], wx + x, rtol=1e-6)


# ---- from_torch, a second user's models: attention layers and loops of inference -----------

def test_from_torch_multihead_attention():
    """nn.MultiheadAttention (batch_first) with a key_padding_mask and a bool attn_mask, its
    averaged weights returned, and with other key and value widths (kdim, vdim), a real
    attn_mask and the weights per head, against eager PyTorch."""
    torch = _torch()
    nn = torch.nn
    torch.manual_seed(11)
    E, H, L, S, B = 8, 2, 5, 6, 2

    class MHA(nn.Module):
        def __init__(self, **kw):
            super().__init__()
            self.m = nn.MultiheadAttention(E, H, batch_first=True, **kw)

        def forward(self, q, k, v, kpm, am):
            return self.m(q, k, v, key_padding_mask=kpm, attn_mask=am)

    class MHAPerHead(MHA):
        def forward(self, q, k, v, am):
            return self.m(q, k, v, attn_mask=am, average_attn_weights=False)

    kpm = torch.tensor([[False] * S, [False] * 4 + [True] * 2])   # the second batch's last two keys padded
    am = torch.rand(L, S) > 0.7
    am[:, 0] = False                                             # no row masked whole
    _check_against_eager(torch, MHA().eval(), (torch.randn(B, L, E), torch.randn(B, S, E),
                                               torch.randn(B, S, E), kpm, am), rtol=1e-4, atol=1e-5)
    _check_against_eager(torch, MHAPerHead(kdim=4, vdim=3).eval(),
                         (torch.randn(B, L, E), torch.randn(B, S, 4), torch.randn(B, S, 3), torch.randn(L, S)),
                         rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_from_torch_transformer_layers(norm_first):
    """nn.TransformerEncoderLayer (a src_key_padding_mask; a causal src_mask with gelu) and
    nn.TransformerDecoderLayer (a causal tgt_mask, a memory_key_padding_mask) in eval, the
    norm after and before each block, against eager PyTorch."""
    torch = _torch()
    nn = torch.nn
    torch.manual_seed(12)
    E, H, L, S, B = 8, 2, 5, 6, 2
    causal_s, causal_l = nn.Transformer.generate_square_subsequent_mask(S), nn.Transformer.generate_square_subsequent_mask(L)

    class Layers(nn.Module):
        def __init__(self):
            super().__init__()
            kw = dict(dropout=0.0, batch_first=True, norm_first=norm_first)
            self.enc = nn.TransformerEncoderLayer(E, H, 16, **kw)
            self.causal = nn.TransformerEncoderLayer(E, H, 16, activation="gelu", **kw)
            self.dec = nn.TransformerDecoderLayer(E, H, 16, **kw)

        def forward(self, src, tgt, kpm):
            mem = self.enc(src, src_key_padding_mask=kpm)
            return mem, self.causal(src, src_mask=causal_s, is_causal=True), \
                self.dec(tgt, mem, tgt_mask=causal_l, memory_key_padding_mask=kpm)

    kpm = torch.tensor([[False] * S, [False] * 4 + [True] * 2])
    _check_against_eager(torch, Layers().eval(), (torch.randn(B, S, E), torch.randn(B, L, E), kpm),
                         rtol=1e-4, atol=1e-5)


def test_from_torch_transformer_decoder_greedy():
    """nn.TransformerDecoder (two layers: causal self-attention, cross-attention to an encoder's
    memory) decoding greedily in a torch.while_loop, the tokens recomputed at every step, stopped
    at token 0; against eager PyTorch."""
    torch = _torch()
    nn = torch.nn
    while_loop = _while_loop(torch)
    V, D, M = 9, 8, 6

    class Decode(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(31)
            self.emb, self.pos = nn.Embedding(V, D), nn.Parameter(torch.randn(M, D) * 0.3)
            self.dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(D, 2, 16, dropout=0.0, batch_first=True), 2)
            self.head = nn.Linear(D, V)

        def forward(self, mem, bos):
            mask = nn.Transformer.generate_square_subsequent_mask(M)
            pos = torch.arange(M)

            def cond(i, toks, done):
                return (i < M) & ~done

            def body(i, toks, done):
                h = self.dec(self.emb(toks)[None] + self.pos, mem, tgt_mask=mask, tgt_is_causal=True)[0]
                nt = torch.argmax(torch.index_select(self.head(h), 0, (i - 1).reshape(1))[0])
                return i + 1, torch.where(pos == i, nt, toks), nt == 0
            toks = torch.where(pos == 0, bos, torch.zeros(M, dtype=torch.int64))
            return while_loop(cond, body, (torch.tensor(1), toks, torch.tensor(False)))

    m = Decode().eval()
    mem = torch.randn(1, 5, D, generator=torch.Generator().manual_seed(2))
    assert int(m(mem, torch.tensor(7))[0]) == 2 and int(m(mem, torch.tensor(3))[0]) == M   # a stop, and none
    g = _check_against_eager(torch, m, (mem, torch.tensor(3)), rtol=1e-4, atol=1e-5)
    out = g(mem.numpy(), np.array(7), backend="cpu", results="numpy")
    for gv, wv in zip(out.values(), m(mem, torch.tensor(7))):
        np.testing.assert_array_equal(gv, wv.numpy())


def test_from_torch_beam_search():
    """Beam search (beam 3) in a torch.while_loop over an nn.GRUCell decoder: log_softmax
    scores added to each beam's, topk over the flattened beam * vocab scores, the beams'
    tokens and states gathered (index_select) by beam, an ended beam extended only by EOS at
    no cost, stopped when every beam has ended. Against eager PyTorch from a start whose beams
    end at steps 1, 2 and 3 (an early stop) and from one that runs all steps."""
    torch = _torch()
    nn, F = torch.nn, torch.nn.functional
    while_loop = _while_loop(torch)
    V, D, K, M, EOS = 7, 6, 3, 6, 0

    class Beam(nn.Module):
        def __init__(self):
            super().__init__()
            gen = torch.Generator().manual_seed(3)
            self.emb, self.cell, self.out = nn.Embedding(V, D), nn.GRUCell(D, D), nn.Linear(D, V)
            with torch.no_grad():
                for p in self.parameters():
                    p.copy_(torch.randn(p.shape, generator=gen))
                self.out.bias[EOS] += 2.5   # EOS likely enough that beams end at different steps

        def forward(self, h0, start):
            pos = torch.arange(M)
            # made here, not inside the body: a torch.tensor literal in a while_loop body fails
            # in torch's decompositions (torch 2.15: "FunctionalTensor on its own")
            ended = torch.where(torch.arange(V) == EOS, 0.0, -1e9)
            scores0 = torch.where(torch.arange(K) == 0, 0.0, -1e9)   # one live beam at the start

            def cond(i, tok, h, scores, tokens, done):
                return (i < M) & ~done.all()

            def body(i, tok, h, scores, tokens, done):
                h2 = self.cell(self.emb(tok), h)
                logp = torch.where(done[:, None], ended, F.log_softmax(self.out(h2), -1))
                val, idx = torch.topk((scores[:, None] + logp).reshape(K * V), K)
                beam, nt = torch.div(idx, V, rounding_mode="floor"), idx % V
                tokens = torch.where(pos[None, :] == i, nt[:, None], torch.index_select(tokens, 0, beam))
                done = torch.index_select(done, 0, beam) | (nt == EOS)
                return i + 1, nt, torch.index_select(h2, 0, beam), val, tokens, done
            i0 = torch.zeros((), dtype=torch.int64)
            return while_loop(cond, body, (i0, start.clone(), h0.clone(), scores0, torch.full((K, M), -1),
                                           torch.zeros(K, dtype=torch.bool)))

    m = Beam().eval()
    h0 = torch.zeros(K, D)
    assert int(m(h0, torch.full((K,), 2))[0]) == 3   # eager stops early: the test covers the stop
    assert int(m(h0, torch.full((K,), 0))[0]) == M
    g = _check_against_eager(torch, m, (h0, torch.full((K,), 2)), rtol=1e-4, atol=1e-5)
    out = g(h0.numpy(), np.full(K, 0, np.int64), backend="cpu", results="numpy")
    want = m(h0, torch.full((K,), 0))
    for gv, wv in zip(out.values(), want):
        np.testing.assert_allclose(gv, wv.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_from_torch_diffusion_sampler():
    """A DDPM-style sampler: a torch.while_loop counting timesteps down, each step's schedule
    (1/sqrt(alpha), beta/sqrt(1 - alpha_bar), sigma, the time) read from buffers by the loop
    index (index_select), a tiny conv net (Conv2d, GroupNorm, SiLU, a strided Conv2d, nearest
    upsampling, a time embedding) predicting the noise; against eager PyTorch."""
    torch = _torch()
    nn, F = torch.nn, torch.nn.functional
    while_loop = _while_loop(torch)
    T = 6

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.gn = nn.Conv2d(2, 8, 3, padding=1), nn.GroupNorm(2, 8)
            self.c2, self.gn2 = nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.GroupNorm(4, 8)
            self.c3, self.temb = nn.Conv2d(8, 2, 3, padding=1), nn.Linear(1, 8)

        def forward(self, x, t):
            h = F.silu(self.gn(self.c1(x))) + self.temb(t.reshape(1, 1)).reshape(1, 8, 1, 1)
            u = F.interpolate(F.silu(self.gn2(self.c2(h))), scale_factor=2, mode="nearest")
            return self.c3(u + h)

    class Sampler(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(4)
            self.net = Net()
            betas = torch.linspace(1e-2, 0.2, T)
            alphas = 1 - betas
            alpha_bar = torch.cumprod(alphas, 0)
            self.register_buffer("c1", 1 / alphas.sqrt())
            self.register_buffer("c2", betas / (1 - alpha_bar).sqrt())
            self.register_buffer("sigma", betas.sqrt())
            self.register_buffer("time", torch.arange(T, dtype=torch.float32) / T)

        def forward(self, x, noise):
            def cond(i, x):
                return i >= 0

            def body(i, x):
                ii = i.reshape(1)
                eps = self.net(x, torch.index_select(self.time, 0, ii))
                z = torch.index_select(noise, 0, ii).reshape(x.shape)
                sigma = torch.where(i > 0, torch.index_select(self.sigma, 0, ii), torch.zeros(1))
                x = torch.index_select(self.c1, 0, ii) * (x - torch.index_select(self.c2, 0, ii) * eps) + sigma * z
                return i - 1, x
            return while_loop(cond, body, (torch.tensor(T - 1), x.clone()))[1]

    gen = torch.Generator().manual_seed(1)
    x, noise = torch.randn(1, 2, 6, 6, generator=gen), torch.randn(T, 1, 2, 6, 6, generator=gen)
    _check_against_eager(torch, Sampler().eval(), (x, noise), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("accept", ["where", "cond"])
def test_from_torch_adaptive_ode(accept):
    """Heun's method with an Euler error estimate in a torch.while_loop over an MLP's vector
    field: a step accepted where the error is below the tolerance (torch.where, or torch.cond
    choosing the new time and state), the step size scaled by 0.9 sqrt(tol / err) clamped to
    [0.2, 5] and cut to the end time; the steps taken and rejected counted. Against eager."""
    torch = _torch()
    nn = torch.nn
    while_loop = _while_loop(torch)

    class Field(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(5)
            self.l1, self.l2 = nn.Linear(3, 8), nn.Linear(8, 2)

        def forward(self, t, y):
            return self.l2(torch.tanh(self.l1(torch.cat([y, t.reshape(1)]))))

    class Heun(nn.Module):
        def __init__(self):
            super().__init__()
            self.f = Field()

        def forward(self, y0, t_end, tol):
            def cond(t, y, h, n, rejected):
                return (t < t_end) & (n < 200)

            def body(t, y, h, n, rejected):
                k1 = self.f(t, y)
                euler = y + h * k1
                heun = y + 0.5 * h * (k1 + self.f(t + h, euler))
                err = torch.linalg.vector_norm(heun - euler) + 1e-12
                ok = err < tol
                if accept == "cond":
                    t2, y2 = torch.cond(ok, lambda t, y, h, a: (t + h, a.clone()),
                                        lambda t, y, h, a: (t.clone(), y.clone()), (t, y, h, heun))
                else:
                    t2, y2 = torch.where(ok, t + h, t), torch.where(ok, heun, y)
                h2 = torch.minimum(h * torch.clamp(0.9 * torch.sqrt(tol / err), 0.2, 5.0), t_end - t2)
                return t2, y2, h2, n + 1, rejected + (~ok).to(torch.int64)
            z = torch.zeros((), dtype=torch.int64)
            return while_loop(cond, body, (torch.zeros(()), y0.clone(), torch.tensor(0.1), z, z.clone()))

    m = Heun().eval()
    args = (torch.tensor([1.0, -0.5]), torch.tensor(2.0), torch.tensor(1e-3))
    steps, rejected = m(*args)[3:]
    assert 10 < int(steps) < 200 and int(rejected) >= 1   # adaptive, and a step was refused
    _check_against_eager(torch, m, args, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_from_torch_seq2seq_attention(cell):
    """Seq2seq: an nn.GRU encoder, then a torch.while_loop decoding greedily with an
    nn.GRUCell or nn.LSTMCell fed the token's embedding and a dot-product attention context
    (bmm, softmax, bmm) until EOS; against eager PyTorch, stopped early at an EOS and not."""
    torch = _torch()
    nn = torch.nn
    while_loop = _while_loop(torch)
    V, D, M = 9, 8, 7

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(16)
            self.emb, self.enc = nn.Embedding(V, D), nn.GRU(D, D, batch_first=True)
            self.cell = nn.LSTMCell(2 * D, D) if cell == "lstm" else nn.GRUCell(2 * D, D)
            self.out = nn.Linear(2 * D, V)

        def forward(self, src, bos, eos):
            enc, h = self.enc(self.emb(src))   # [1, S, D], [1, 1, D]
            pos = torch.arange(M)

            def cond(i, tok, h, c, out, done):
                return (i < M) & ~done

            def body(i, tok, h, c, out, done):
                a = torch.softmax(torch.bmm(enc, h.unsqueeze(2)).squeeze(2), -1)
                ctx = torch.bmm(a.unsqueeze(1), enc).squeeze(1)
                inp = torch.cat([self.emb(tok), ctx], -1)
                if cell == "lstm":
                    h2, c2 = self.cell(inp, (h, c))
                else:
                    h2, c2 = self.cell(inp, h), c.clone()
                nt = torch.argmax(self.out(torch.cat([h2, ctx], -1)), -1)
                return i + 1, nt, h2, c2, torch.where(pos == i, nt, out), (nt == eos).all()
            i0 = torch.zeros((), dtype=torch.int64)
            return while_loop(cond, body, (i0, bos.clone(), h[0], torch.zeros_like(h[0]), torch.full((M,), -1),
                                           torch.zeros((), dtype=torch.bool)))

    m = Seq2Seq().eval()
    src, bos = torch.tensor([[1, 4, 2, 7, 3]]), torch.tensor([1])
    tokens = m(src, bos, torch.tensor(V))[4]          # V never comes: all M steps
    eos = tokens[2].reshape(())
    assert int(m(src, bos, eos)[0]) < M               # eager stops early at eos
    g = _check_against_eager(torch, m, (src, bos, torch.tensor(V)), rtol=1e-4, atol=1e-5)
    out = g(src.numpy(), bos.numpy(), eos.numpy(), backend="cpu", results="numpy")
    for gv, wv in zip(out.values(), m(src, bos, eos)):
        np.testing.assert_allclose(gv, wv.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_from_torch_everyday_ops_2():
    """More everyday tensor code, one module with many results, against eager PyTorch:
    F.one_hot, torch.gather on 3-D indices, index_put_ with accumulate, index_copy,
    masked_fill, F.normalize, nn.GroupNorm and nn.InstanceNorm2d (ONNX InstanceNormalization),
    nn.Embedding with padding_idx, torch.flip, torch.roll, triu/tril with a diagonal, clamp
    with tensor bounds, logsumexp, var/std/var_mean, baddbmm, F.glu, meshgrid, top-p and
    repetition-penalty logit filters (sort, cumsum, scatter, gather), F.pixel_unshuffle (a
    Reshape to rank 6, a Transpose, a Reshape back: one transpose of merged axes), F.unfold
    (a Gather to rank 6, a Transpose, a Reshape) and F.fold (Col2Im)."""
    torch = _torch()
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(13)

    class Ops(nn.Module):
        def __init__(self):
            super().__init__()
            self.gn, self.inorm = nn.GroupNorm(2, 4), nn.InstanceNorm2d(4, affine=True)
            self.emb = nn.Embedding(6, 3, padding_idx=0)
            with torch.no_grad():
                for p in (self.gn.weight, self.gn.bias, self.inorm.weight, self.inorm.bias):
                    p.copy_(torch.randn(p.shape))

        def forward(self, x, idx, img, tok, logits, seen):
            acc = torch.zeros(5, 4).index_put_((idx[0, 0, :3],), x[0, :3], accumulate=True)
            copied = torch.zeros(5, 4).index_copy(0, torch.tensor([4, 0, 2]), x[1])
            sl, si = torch.sort(logits, descending=True, dim=-1)
            drop = torch.cumsum(F.softmax(sl, -1), -1) > 0.8
            drop = torch.cat([torch.zeros_like(drop[:, :1]), drop[:, :-1]], -1)
            top_p = logits.masked_fill(drop.scatter(-1, si, drop), float("-inf"))
            g = torch.gather(logits, 1, seen)
            penalized = logits.scatter(1, seen, torch.where(g < 0, g * 1.3, g / 1.3))
            a, b = torch.meshgrid(x[0, 0], x[1, 1, :3], indexing="ij")
            return (F.one_hot(tok.reshape(-1), 6), torch.gather(x, 2, idx), acc, copied,
                    x.masked_fill(x > 0.5, -1.0), F.normalize(x, dim=-1), self.gn(img), self.inorm(img),
                    self.emb(tok), torch.flip(x, [0, 2]), torch.roll(x, (1, -1), (0, 2)),
                    torch.triu(x, diagonal=1), torch.tril(x, diagonal=-1),
                    torch.clamp(x, torch.full((4,), -0.5), torch.full((3, 1), 0.5)), torch.logsumexp(x, 1),
                    torch.var(x, 1), torch.std(x, -1, unbiased=False), *torch.var_mean(x, 2),
                    torch.baddbmm(x, x[:, :, :2], x[:, :2, :], beta=0.5, alpha=2.0), F.glu(x, -1),
                    torch.stack([a, b]), top_p, penalized, F.pixel_unshuffle(img, 2),
                    F.unfold(img, (2, 3), stride=(1, 2), padding=1),
                    F.fold(F.unfold(img, 2, stride=2, dilation=1), (4, 6), 2, stride=2) - img)

    args = (torch.randn(2, 3, 4), torch.randint(0, 4, (2, 3, 4)), torch.randn(2, 4, 4, 6),
            torch.tensor([[0, 1, 5], [2, 0, 3]]), torch.randn(2, 10), torch.tensor([[1, 4, 4], [0, 9, 2]]))
    _check_against_eager(torch, Ops().eval(), args, rtol=1e-4, atol=1e-5)


def test_from_torch_data_dependent_shape_refused():
    """torch.nonzero and x[mask] give results whose shape depends on the data (ONNX NonZero):
    refused in one line naming the node and saying why."""
    torch = _torch()

    class NonZero(torch.nn.Module):
        def forward(self, x):
            return torch.nonzero(x > 0)

    class Masked(torch.nn.Module):
        def forward(self, x):
            return x[x > 0]

    for m in (NonZero(), Masked()):
        with pytest.raises(cfx.CompileError) as info:
            cfx.from_torch(m, (torch.tensor([[1.0, -1.0], [0.5, 2.0]]),))
        text = str(info.value)
        assert "NonZero" in text and "depends on the data" in text, text
        assert len(text.strip().splitlines()) == 1


def test_from_torch_rnnt_nested_while_loops():
    """Greedy RNN-T decoding: a torch.while_loop over encoder frames holding a second
    while_loop that emits up to 3 symbols per frame until the joint network gives blank (an
    nn.GRUCell prediction network advanced only on an emitted symbol, torch.where on the
    emission); against eager PyTorch on frames where some emit nothing and some hit the cap."""
    torch = _torch()
    nn = torch.nn
    while_loop = _while_loop(torch)
    BLANK, MAXOUT = 0, 12

    class RNNT(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(42)
            self.pred, self.emb, self.joint = nn.GRUCell(5, 6), nn.Embedding(5, 5), nn.Linear(12, 5)
            with torch.no_grad():
                self.joint.bias[BLANK] += 1.0

        def forward(self, enc):
            T = enc.shape[0]
            zero, false = torch.zeros((), dtype=torch.int64), torch.zeros((), dtype=torch.bool)

            def frames(t, g, out, n):
                return t < T

            def frame(t, g, out, n):
                f = torch.index_select(enc, 0, t.reshape(1))

                def more(k, g, out, n, stop):
                    return (k < 3) & ~stop

                def symbol(k, g, out, n, stop):
                    sym = torch.argmax(self.joint(torch.cat([f, g], -1))[0])
                    emit = sym != BLANK
                    g = torch.where(emit, self.pred(self.emb(sym.reshape(1)), g), g)
                    out = torch.where((torch.arange(MAXOUT) == n) & emit, sym, out)
                    return k + 1, g, out, n + emit.to(torch.int64), ~emit
                _, g, out, n, _ = while_loop(more, symbol, (zero.clone(), g.clone(), out.clone(), n.clone(), false.clone()))
                return t + 1, g, out, n
            return while_loop(frames, frame, (zero.clone(), torch.zeros(1, 6), torch.full((MAXOUT,), -1), zero.clone()))

    m = RNNT().eval()
    enc = torch.randn(4, 6, generator=torch.Generator().manual_seed(0)) * 2
    assert int(m(enc)[3]) == 9   # 3 + 3 + 3 + 0 symbols: capped frames and a blank one
    _check_against_eager(torch, m, (enc,), rtol=1e-4, atol=1e-5)


def test_from_torch_state_space_loops():
    """A selective scan (Mamba-style: h = exp(dt * A) * h + dt * x * B, y = h @ C, with B, C, dt
    projected from the input) and a Kalman filter (predict, gain, update), each a
    torch.while_loop over time reading its step's row by index_select; against eager PyTorch."""
    torch = _torch()
    nn, F = torch.nn, torch.nn.functional
    while_loop = _while_loop(torch)

    class Scan(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(41)
            self.A, self.proj = nn.Parameter(-torch.rand(4, 3)), nn.Linear(4, 7)

        def forward(self, x):
            L = x.shape[0]
            p = self.proj(x)
            # clones: slices of one tensor read inside while_loop are aliases torch refuses
            B, C, dt = p[:, :3].clone(), p[:, 3:6].clone(), F.softplus(p[:, 6])

            def cond(t, h, ys):
                return t < L

            def body(t, h, ys):
                i = t.reshape(1)
                d = torch.index_select(dt, 0, i).reshape(())
                xt, bt = torch.index_select(x, 0, i)[0], torch.index_select(B, 0, i)[0]
                h = torch.exp(d * self.A) * h + (d * xt)[:, None] * bt[None, :]
                y = h @ torch.index_select(C, 0, i)[0]
                return t + 1, h, torch.where(torch.arange(L)[:, None] == t, y[None], ys)
            return while_loop(cond, body, (torch.tensor(0), torch.zeros(4, 3), torch.zeros(L, 4)))[2]

    class Kalman(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("A", torch.tensor([[1.0, 0.1], [0.0, 1.0]]))
            self.register_buffer("H", torch.tensor([[1.0, 0.0]]))
            self.register_buffer("Q", torch.eye(2) * 0.01)
            self.register_buffer("R", torch.tensor([[0.5]]))

        def forward(self, zs):
            T = zs.shape[0]

            def cond(t, x, P, out):
                return t < T

            def body(t, x, P, out):
                x, P = self.A @ x, self.A @ P @ self.A.T + self.Q
                K = P @ self.H.T / (self.H @ P @ self.H.T + self.R)
                z = torch.index_select(zs, 0, t.reshape(1)).reshape(1, 1)
                x, P = x + K @ (z - self.H @ x), (torch.eye(2) - K @ self.H) @ P
                return t + 1, x, P, torch.where(torch.arange(T)[:, None] == t, x[:, 0][None], out)
            return while_loop(cond, body, (torch.tensor(0), torch.zeros(2, 1), torch.eye(2), torch.zeros(T, 2)))[3]

    gen = torch.Generator().manual_seed(7)
    _check_against_eager(torch, Scan().eval(), (torch.randn(7, 4, generator=gen),), rtol=1e-4, atol=1e-5)
    _check_against_eager(torch, Kalman().eval(), (torch.randn(6, generator=gen),), rtol=1e-4, atol=1e-5)
