"""@cfx.jit: plain Python functions over numpy arrays, translated into cfx per signature.

The corpus (jit_corpus.py: control-flow functions of Paddle's, MindSpore's, PyTorch's and JAX's
test suites) runs each function plainly in Python and through @cfx.jit, and the two must agree;
refusals are counted and printed by test_corpus_summary (pytest -s shows it), never failures.
The other tests pin caching, signatures, arguments, results, the positions of refusals and of
cfx's errors, and the two examples of docs/jit.md."""
import inspect
import math
import sys
import os

import pytest

np = pytest.importorskip("numpy")

import cfx  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import jit_corpus  # noqa: E402

OUTCOMES = {}


@pytest.mark.parametrize("fn,args,src", jit_corpus.CASES, ids=[c[0].__name__ for c in jit_corpus.CASES])
def test_corpus(fn, args, src):
    status, why = jit_corpus.run(fn, args)   # AssertionError when cfx and Python disagree
    OUTCOMES[fn.__name__] = (status, why)


def test_corpus_summary():
    if len(OUTCOMES) < len(jit_corpus.CASES):
        for fn, args, src in jit_corpus.CASES:
            if fn.__name__ not in OUTCOMES:
                OUTCOMES[fn.__name__] = jit_corpus.run(fn, args)
    taken = [n for n, (s, _) in OUTCOMES.items() if s == "taken"]
    refused = [(n, w) for n, (s, w) in OUTCOMES.items() if s == "refused"]
    print("\ncfx.jit corpus: %d functions, %d taken (agree with Python), %d refused"
          % (len(OUTCOMES), len(taken), len(refused)))
    for n, w in refused:
        print("  refused %-34s %s" % (n, w))
    assert len(OUTCOMES) >= 100
    assert len(taken) >= 100


# ---- the decorator, signatures and the cache ----------------------------------------------------

@cfx.jit(backend="cpu")
def count_up(x, limit=10.0):
    s = 0
    i = 0
    while s < limit:
        s += x[i % len(x)]
        i += 1
    return s, i


def test_results_and_cache(monkeypatch):
    x = np.array([1.0, 2.5], np.float32)
    s, i = count_up(x, 10.0)
    assert isinstance(s, np.ndarray) and s.dtype == np.float32 and s.shape == ()
    assert float(s) == 10.5 and int(i) == 6   # 1 + 2.5 + 1 + 2.5 + 1 + 2.5, by hand
    assert count_up.signatures == [(("f32", (2,)), ("f32", ()))]
    # a cached signature is not translated again
    from cfx import _jit
    calls = []
    real = _jit._specialize
    monkeypatch.setattr(_jit, "_specialize", lambda *a: calls.append(a) or real(*a))
    s2, i2 = count_up(x, limit=10.0)
    assert calls == [] and int(i2) == 6
    # keywords and defaults bind as in Python
    assert int(count_up(x)[1]) == 6
    assert int(count_up(limit=3.0, x=x)[1]) == 2
    # another shape compiles again
    count_up(np.ones(3, np.float32), 2.0)
    assert len(calls) == 1 and len(count_up.signatures) == 2


def test_python_scalars_and_dtypes():
    @cfx.jit(backend="cpu")
    def scale(x, k, on):
        return x * k if on else x

    x = np.arange(3, dtype=np.int64)
    y = scale(x, 2, True)
    assert y.dtype == np.int64 and y.tolist() == [0, 2, 4]
    assert scale.signatures[-1] == (("i64", (3,)), ("i32", ()), ("bool", ()))
    z = scale(np.ones(2, np.float32), 0.5, True)
    assert z.dtype == np.float32 and z.tolist() == [0.5, 0.5]
    scale(x, 2 ** 40, False)
    assert scale.signatures[-1][1] == ("i64", ())
    w = scale(np.ones(2, np.float64), np.float64(0.25), True)
    assert w.dtype == np.float64 and w.tolist() == [0.25, 0.25]


def test_one_result_bare_and_source():
    @cfx.jit
    def double(x):
        return x * 2

    x = np.array([1.5, -2.0], np.float32)
    assert double(x).tolist() == [3.0, -4.0]
    text = double.source(x)
    assert text.startswith("graph double(x: f32[2]) -> (r0: f32[2]) {")
    assert cfx.compile(text).entry(x=x)["r0"].tolist() == [3.0, -4.0]
    assert "1 signature" in repr(double)


def test_widened_variable_and_cast_row():
    @cfx.jit(backend="cpu")
    def mixed(x):
        s = 0                  # an int, then floats: s becomes an f32
        y = np.zeros(len(x))   # numpy's default f64: rows take x's f32 values cast
        for i in range(len(x)):
            s += x[i]
            y[i] = x[i] * 2
        return s, y

    x = np.array([0.5, 1.5, 2.0], np.float32)
    s, y = mixed(x)
    assert s.dtype == np.float32 and float(s) == 4.0
    assert y.dtype == np.float64 and y.tolist() == [1.0, 3.0, 4.0]
    src = mixed.source(x)
    assert "s = cast(0, f32)" in src and "cast((x[i] * 2), f64)" in src


def test_none_argument_and_default():
    @cfx.jit(backend="cpu")
    def add_bias(x, bias=None):
        if bias is None:
            return x
        return x + bias

    x = np.ones(3, np.float32)
    assert add_bias(x).tolist() == [1, 1, 1]
    assert add_bias(x, np.full(3, 2, np.float32)).tolist() == [3, 3, 3]
    assert len(add_bias.signatures) == 2 and add_bias.signatures[0][1] is None


@cfx.jit
def axpy(a, x, y):
    return a * x + y


def test_jit_calls_jit_and_nested_def():
    @cfx.jit(backend="cpu")
    def twice(x):
        def inc(v, by=1.0):
            w = v
            for _ in range(2):
                w = w + by
            return w
        return axpy(2.0, inc(x), x)

    x = np.array([1.0, 2.0], np.float32)
    assert twice(x).tolist() == [7.0, 10.0]   # 2 * (x + 2) + x
    src = twice.source(x)
    assert "graph axpy" in src and "graph twice_inc" in src


def test_module_constant_and_math():
    @cfx.jit(backend="cpu")
    def circle(r):
        return math.pi * r * r * jit_corpus.BATCH if False else math.pi * r * r

    assert abs(float(circle(np.float32(2.0))) - 4 * math.pi) < 1e-5


def test_run_stops_map_to_run_stopped():
    @cfx.jit(backend="cpu", max_iters=5)
    def spin(n):
        i = 0
        while i < n:
            i += 1
        return i

    assert int(spin(3)) == 3
    with pytest.raises(cfx.RunStopped) as e:
        spin(100)
    assert e.value.status == "limit"

    @cfx.jit(backend="cpu")
    def positive(x):
        assert x > 0, "x must be positive"
        return x

    with pytest.raises(cfx.RunStopped, match="x must be positive"):
        positive(-1)


# ---- refusals and errors at the user's own line ------------------------------------------------------

def _line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    for k, l in enumerate(lines):
        if text in l:
            return start + k, l.index(text.strip()) + 1
    raise AssertionError(text)


def uses_dict(x):
    d = {"a": x}
    return d["a"]


def uses_try(x):
    try:
        y = x + 1
    except ValueError:
        y = x
    return y


def helper(x):
    return x + 1


def calls_python(x):
    return helper(x)


def recursive(x):
    if x > 0:
        return recursive(x - 1)
    return x


def shape_changes(x):
    if x[0] > 0:
        y = x
    else:
        y = x[0]
    return y


def bad_shapes(x, y):
    z = x + y
    return z


def unbounded(n):
    xs = []
    i = 0
    while i < n:
        xs.append(i)
        i += 1
    return np.stack(xs)


@pytest.mark.parametrize("fn,args,where,words", [
    (uses_dict, (np.ones(2, np.float32),), '{"a": x}', "dict"),
    (uses_try, (np.ones(2, np.float32),), "try:", "try/except"),
    (calls_python, (np.ones(2, np.float32),), "helper(x)", "@cfx.jit"),
    (recursive, (3,), "recursive(x - 1)", "recursion"),
    (shape_changes, (np.ones(2, np.float32),), "return y", "type changes"),
    (bad_shapes, (np.ones(2, np.float32), np.ones(3, np.float32)), "z = x + y", "different shapes"),
    (unbounded, (3,), "xs.append(i)", "no bound"),
])
def test_refusals_name_the_users_line(fn, args, where, words):
    with pytest.raises(cfx.JitError) as e:
        cfx.jit(fn, backend="cpu")(*args)
    line, col = _line_of(fn, where)
    d = e.value.diagnostics[0]
    assert d.file == __file__ and d.line == line, str(e.value)
    assert words in str(e.value)
    assert isinstance(e.value, cfx.CompileError)


def test_refusal_column():
    with pytest.raises(cfx.JitError) as e:
        cfx.jit(uses_dict)(np.ones(2, np.float32))
    line, col = _line_of(uses_dict, '{"a": x}')
    assert e.value.diagnostics[0].col == col
    assert e.value.construct == "a dict"


# ---- the examples of docs/jit.md ----------------------------------------------------------------------

MAX_LEN = 8


def greedy_decode(emb, u, w, start, end_token):
    tokens = np.zeros(MAX_LEN, dtype=np.int32)
    h = np.zeros(u.shape[0], dtype=np.float32)
    tok = start
    n = 0
    while n < MAX_LEN:
        h = np.tanh(emb[tok] + h @ u)
        tok = np.argmax(h @ w)
        tokens[n] = tok
        n += 1
        if tok == end_token:
            break
    return tokens, n


def cg(A, b, tol=1e-8, max_steps=50):
    x = np.zeros_like(b)
    r = b - A @ x
    p = r.copy()
    rs = r @ r
    k = 0
    while k < max_steps and math.sqrt(rs) > tol:
        Ap = A @ p
        alpha = rs / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = r @ r
        p = r + (rs_new / rs) * p
        rs = rs_new
        k += 1
    return x, k


def test_docs_greedy_decode():
    rng = np.random.RandomState(0)
    vocab, hidden = 12, 6
    emb = rng.standard_normal((vocab, hidden)).astype(np.float32)
    u = (rng.standard_normal((hidden, hidden)) * 0.5).astype(np.float32)
    w = rng.standard_normal((hidden, vocab)).astype(np.float32)
    decode = cfx.jit(greedy_decode, backend="cpu")
    for start in range(vocab):
        want_tokens, want_n = greedy_decode(emb, u, w, start, 0)
        tokens, n = decode(emb, u, w, start, 0)
        assert int(n) == want_n and tokens.tolist() == want_tokens.tolist()
    assert len(decode.signatures) == 1


def test_docs_cg():
    rng = np.random.RandomState(1)
    m = rng.standard_normal((6, 6))
    A = m @ m.T + 6 * np.eye(6)
    b = rng.standard_normal(6)
    solve = cfx.jit(cg, backend="cpu")
    x, k = solve(A, b)
    assert np.allclose(A @ x, b, atol=1e-6)
    assert np.allclose(x, np.linalg.solve(A, b), atol=1e-6)
    want_x, want_k = cg(A, b)
    assert abs(int(k) - want_k) <= 1 and 0 < int(k) <= 50


# ---- PyTorch's spellings (translated by name: torch itself is not needed to translate) -------------

import types  # noqa: E402

torch = types.ModuleType("torch")   # stands for the module in this file's globals
torch.float32 = "float32"


def torch_style(x, w):
    h = torch.zeros(3, dtype=torch.float32)
    for i in range(x.shape[0]):
        h = torch.tanh(torch.matmul(x[i], w) + h)
    best = torch.argmax(h)
    return h.sum(dim=0), best, torch.clamp(h, min=0.0), h.float()


def test_torch_spellings():
    rng = np.random.RandomState(3)
    x = rng.standard_normal((4, 2)).astype(np.float32)
    w = rng.standard_normal((2, 3)).astype(np.float32)
    s, best, clamped, same = cfx.jit(torch_style, backend="cpu")(x, w)
    h = np.zeros(3, np.float32)
    for i in range(4):
        h = np.tanh(x[i] @ w + h)
    assert np.allclose(s, h.sum(), atol=1e-5) and int(best) == int(np.argmax(h))
    assert np.allclose(clamped, np.maximum(h, 0), atol=1e-6) and np.allclose(same, h, atol=1e-6)


def torch_axes(x, y):
    return torch.transpose(x, 1, 2), x.transpose(0, 2), x.permute(2, 0, 1), torch.cat([x, y], dim=1)


def test_torch_axes_and_cat():
    """PyTorch's transpose swaps two dimensions (not numpy's reversal), permute reorders them,
    cat joins: on a 3-D tensor, against numpy's swapaxes, transpose with axes and concatenate."""
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    y = np.ones((2, 1, 4), np.float32)
    got = cfx.jit(torch_axes, backend="cpu")(x, y)
    want = (np.swapaxes(x, 1, 2), np.swapaxes(x, 0, 2), np.transpose(x, (2, 0, 1)),
            np.concatenate([x, y], axis=1))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def numpy_axes(x, y):
    permute = 2.0 # a name the language uses for an op
    return (np.transpose(x, (1, 0, 2)), np.swapaxes(x, 0, -1), x.transpose(2, 0, 1), x.transpose((0, 2, 1)),
            x.swapaxes(1, 2), np.concatenate((x, y), axis=1), np.concatenate([x, x]), x.transpose() * permute)


def test_numpy_axes_and_concatenate():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    y = np.ones((2, 1, 4), np.float32)
    got = cfx.jit(numpy_axes, backend="cpu")(x, y)
    want = numpy_axes(x, y) # numpy's own answer
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def numpy_take(E, tokens, cols):
    return np.take(E, tokens, axis=0), np.take(E, cols, 1), np.take(E, tokens[0], axis=-2)


def torch_index_select(E, cols):
    return torch.index_select(E, 1, cols)


def test_numpy_take():
    """np.take along an axis (an embedding lookup, columns, negative indices) is take(...): one
    GATHER record; against numpy running the same function."""
    E = np.arange(15, dtype=np.float32).reshape(5, 3)
    tokens = np.array([[0, -1, 4], [2, 2, -5]], np.int64)
    cols = np.array([2, -3], np.int32)
    fn = cfx.jit(numpy_take, backend="cpu")
    got = fn(E, tokens, cols)
    assert "take(" in fn.source(E, tokens, cols)
    want = numpy_take(E, tokens, cols)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(cfx.jit(torch_index_select, backend="cpu")(E, cols), np.take(E, cols, 1))


def inverse_trig(y, x, u):
    angle = np.arctan2(y, x)
    for i in range(len(u)):
        if u[i] > 0:
            angle[i] = angle[i] + np.arcsin(u[i]) * 0.5 + np.arctanh(u[i] * 0.5)
        else:
            angle[i] = angle[i] - np.arccos(u[i]) + np.arcsinh(u[i]) + np.arctan(u[i])
    return angle, math.atan2(1.0, -1.0), np.arccosh(1.0 + u * u), np.arctan2(y, x)


def test_numpy_inverse_trigonometry():
    """np.arctan2's four quadrants and the axes (signed zeros included), np.arcsin and the others,
    against numpy running the same function."""
    y = np.array([1, 1, -1, -1, 0, 0, -0.0, 2, 0.0, -3], np.float32)
    x = np.array([1, -1, -1, 1, 1, -1, -1, 0, -0.0, 0.25], np.float32)
    u = np.linspace(-0.9, 0.9, 10).astype(np.float32)
    got = cfx.jit(inverse_trig, backend="cpu")(y, x, u)
    want = inverse_trig(y.copy(), x, u)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(got[1]), 3 * math.pi / 4, rtol=1e-6)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-6)
    # atan2(0, -1) = pi, atan2(-0, -1) = -pi, atan2(0, -0) = pi (C99), as numpy's
    np.testing.assert_allclose(got[3], want[3], rtol=1e-6)
    assert got[3][5] > 3.14 and got[3][6] < -3.14 and got[3][8] > 3.14


def xorshift_fill(seed, mask):
    """Marsaglia's xorshift32 on an int64 state kept to 32 bits, as Python writes it, and
    numpy's bitwise names and bool masks."""
    out = np.zeros(len(mask), dtype=np.int64)
    s = seed
    for i in range(len(mask)):
        s ^= (s << 13) & 0xFFFFFFFF
        s ^= s >> 17
        s ^= (s << 5) & 0xFFFFFFFF
        out[i] = s
    low = np.bitwise_and(out, 255) | np.left_shift(out & 1, 8)
    keep = ~mask & (out > 2**31) | (mask ^ (out % 3 == 0))
    return out, low, keep, ~seed


def test_bitwise_operators_and_numpy_names():
    """& | ^ ~ << >> and their augmented forms of integers, numpy's bitwise_and and left_shift,
    ~ & | ^ of bool masks, against Python and numpy running the same function."""
    mask = np.array([True, False, True, False, True, True, False, False])
    got = cfx.jit(xorshift_fill, backend="cpu")(2463534242, mask)
    want = xorshift_fill(2463534242, mask)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_print_reaches_stdout(capsys):
    @cfx.jit(backend="cpu")
    def shout(x):
        print("x is", x)
        return x

    shout(3)
    assert "x is: 3" in capsys.readouterr().out


def broadcast_writes(x):
    y = np.zeros((3, 4), dtype=np.float32)
    for i in range(3):
        y[i] = i                 # a scalar into a row: numpy casts and broadcasts
        y[i, 0:2] = x[i]
    y[:, 3] = 7
    return y


def value_or(a, b):
    return a or b                # Python gives a or b, not a bool


def test_broadcast_writes_and_value_or():
    x = np.arange(3, dtype=np.int32)
    got = cfx.jit(broadcast_writes, backend="cpu")(x)
    assert got.dtype == np.float32 and np.array_equal(got, broadcast_writes(x))
    # truth is taken in conditions only: `a or b` as a value is refused, never a bool
    with pytest.raises(cfx.JitError, match="must be bool"):
        cfx.jit(value_or, backend="cpu")(2, 3)


def test_cfx_tensor_arguments():
    t = cfx.tensor([1.0, 2.0, 3.0], "f32")
    got = cfx.jit(axpy.__wrapped__, backend="cpu")(2.0, t, t)   # results of the input's kind
    assert isinstance(got, cfx.Tensor) and got.tolist() == [3.0, 6.0, 9.0]


@cfx.jit
def norm2(v):
    return np.sqrt(np.sum(v * v))


@cfx.jit
def scale_to(v, n):
    return v / norm2(v) * n


def halve_until_unit(a, b):
    k = 0
    while norm2(a) > 1.0 and k < 10:      # a call in a loop's condition
        for i in range(2):
            if norm2(b) > 0:              # and inside blocks: probes cut there
                a = a * 0.5
        k += 1
    return scale_to(a, 2.0), scale_to(b, 3.0), k


def test_jit_calls_at_two_shapes_share_their_graphs():
    a = np.array([3.0, 4.0], np.float32)
    b = np.array([1.0, 2.0, 2.0], np.float32)
    j = cfx.jit(halve_until_unit, backend="cpu")
    ra, rb, k = j(a, b)
    # by hand: |a| = 5, halved twice per iteration: 1.25 after one, 0.3125 after two
    assert int(k) == 2 and np.allclose(ra, [1.2, 1.6]) and np.allclose(rb, [1.0, 2.0, 2.0])
    src = j.source(a, b)
    assert src.count("graph norm2") == 2 and src.count("graph scale_to") == 2


def test_a_lambda_is_refused():
    with pytest.raises(cfx.JitError, match="write it with def"):
        cfx.jit(lambda x: x + 1)(np.ones(2, np.float32))
