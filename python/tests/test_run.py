"""Running graphs from Python on each kind of array (conftest.py's xp): inputs in place,
results of the caller's type, Python numbers, lists and slices, and the errors that name an
input before anything runs. Expected values are the graphs' own headers (derived without cfx)
or worked out by hand in the comments."""
import pathlib
import threading

import pytest

import cfx
from cfx import _core

REPO = pathlib.Path(__file__).resolve().parents[2]

# graphs/greedy_decode.cfx's first run (its # run: and # expect: lines)
EMB = [[-0.7, -0.6, 0.9, -1.2], [0.3, 0.7, -0.9, -1.3], [-0.7, 0.5, 0.2, -1],
       [-0.2, 0.5, -0.2, 0.4], [1.4, 0.5, -0.3, -0.9], [-0.5, 0, 1.2, 0.8]]
U = [[-0.5, 1.3, -0.1, 0.6], [-1.2, -1.2, -0.9, 1.2], [0.5, 1, 0.4, -0.3], [0, 0.3, 1.1, -0.2]]
W = [[1.2, 0.3, 1, 0], [0.6, -0.5, 0.1, -0.9], [-1.2, -1.4, 0.6, -0.1], [1.2, 1, -0.3, 1.4],
     [0.3, 0.8, -0.3, -0.9], [-1, -1, 0.3, -1.2]]

# A list grown in a while loop, its items slices of x, read back by index and stacked.
# x = [1, 2, 3, 4, 5, 6]: windows x[0:3] .. x[3:6] = [1,2,3] [2,3,4] [3,4,5] [4,5,6],
# sums 6 9 12 15; parts[k] for k = 2 is [3, 4, 5]; a negative k counts from the end
# (k = -1: [4, 5, 6]); tail = x[-2:] = [5, 6].
WINDOWS = """graph windows(x: f32[6], k: i32) -> (sums: f32[4], picked: f32[3], n: i32, tail: f32[2],
                                  all: f32[4, 3]) {
  parts = list(f32[3], 4)
  i = 0
  while i + 3 <= len(x) {
    parts.append(x[i:i + 3])
    i += 1
  }
  sums = zeros(f32[4])
  for j in range(len(parts)) {
    sums[j] = sum(parts[j])
  }
  picked = parts[k]
  n = len(parts)
  tail = x[-2:]
  all = stack(parts)
}
"""

SCALARS = """graph scalars(a: i32, b: i64, x: f32, y: f64, flag: bool) -> (s: i64, t: f64, nf: bool) {
  s = cast(a, i64) * b
  t = cast(x, f64) + y
  nf = not flag
}
"""


@pytest.fixture(scope="module")
def decode():
    return cfx.compile(str(REPO / "graphs" / "greedy_decode.cfx")).entry


def test_greedy_decode(xp, decode):
    out = decode(emb=xp.array(EMB, "f32"), u=xp.array(U, "f32"), w=xp.array(W, "f32"),
                 start=0, end_token=0)
    assert list(out) == ["tokens", "length"]
    assert xp.is_native(out["tokens"]) and xp.is_native(out["length"])
    assert xp.tolist(out["tokens"]) == [5, 2, 4, 1, 5, 4, 0, -1]
    assert xp.tolist(out["length"]) == 7
    assert out.iterations == 7 # the loop broke at the end token, in its 7th trip
    # positional, and the device chosen by the inputs
    out = decode(xp.array(EMB, "f32"), xp.array(U, "f32"), xp.array(W, "f32"), 3, 0)
    assert xp.tolist(out["tokens"]) == [3, 3, 0, -1, -1, -1, -1, -1]
    if xp.device is not None:
        assert out.backend == "cuda-persistent"


def test_list_and_slice(xp):
    g = cfx.compile(WINDOWS).entry
    x = xp.array([1, 2, 3, 4, 5, 6], "f32")
    out = g(x=x, k=2)
    assert xp.tolist(out["sums"]) == [6, 9, 12, 15]
    assert xp.tolist(out["picked"]) == [3, 4, 5]
    assert xp.tolist(out["n"]) == 4
    assert xp.tolist(out["tail"]) == [5, 6]
    assert xp.tolist(out["all"]) == [[1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]]
    assert xp.tolist(g(x=x, k=-1)["picked"]) == [4, 5, 6]
    with pytest.raises(cfx.RunStopped) as info:
        g(x=x, k=4)
    assert info.value.status == "index"
    assert info.value.message == "<string>:13:3: run stopped: index: list 'parts' has 4 items, index was 4"


# Rank 5, the most dimensions a tensor has: the types read back through cfx_type's five dims,
# and a value in and out. x[a, b, 0, d, e] = 4a + 2d + e (b = 0 only), so y = x[..., 1] has
# y[a, 0, 0, d] = 4a + 2d + 1 and s = sum(x) = 0+1+...+7 = 28.
RANK5 = """graph rank5(x: f32[2, 1, 1, 2, 2]) -> (y: f32[2, 1, 1, 2], s: f32) {
  y = x[:, :, :, :, 1]
  s = sum(x)
}
"""


def test_rank5(xp):
    g = cfx.compile(RANK5).entry
    assert g.inputs[0].shape == (2, 1, 1, 2, 2) and g.results[0].shape == (2, 1, 1, 2)
    out = g(x=xp.array([[[[[0, 1], [2, 3]]]], [[[[4, 5], [6, 7]]]]], "f32"))
    assert xp.tolist(out["y"]) == [[[[1, 3]]], [[[5, 7]]]]
    assert xp.tolist(out["s"]) == 28


def test_python_scalars_every_dtype():
    g = cfx.compile(SCALARS).entry
    out = g(a=-3, b=1 << 40, x=0.5, y=0.25, flag=True, results="python")
    # -3 * 2**40; 0.5 + 0.25; not true
    assert out == {"s": -3 * (1 << 40), "t": 0.75, "nf": False}
    assert type(out["s"]) is int and type(out["t"]) is float and type(out["nf"]) is bool
    out = g(a=7, b=-2, x=3, y=-1, flag=False, results="tensor") # ints are fine for reals
    assert out["s"].tolist() == -14 and out["t"].tolist() == 2.0 and out["nf"].tolist() is True
    assert out["s"].dtype == "i64" and out["s"].shape == ()


def test_results_kinds(np):
    g = cfx.compile(WINDOWS).entry
    x = np.arange(1, 7, dtype=np.float32)
    out = g(x=x, k=0)
    assert isinstance(out["sums"], np.ndarray) and out["sums"].dtype == np.float32
    assert out["n"].shape == () and int(out["n"]) == 4
    py = g(x=x, k=0, results="python")
    assert py["sums"] == [6.0, 9.0, 12.0, 15.0] and py["n"] == 4
    t = g(x=x.tolist(), k=0, results="tensor")["all"]
    assert isinstance(t, cfx.Tensor) and t.shape == (4, 3) and t.dtype == "f32"
    assert g(x=cfx.tensor(x), k=0)["sums"].__class__ is cfx.Tensor # auto: the input's kind
    assert isinstance(g(x=x.tolist(), k=0)["sums"], np.ndarray)  # no array input: numpy
    with pytest.raises(ValueError, match="unknown results 'pandas'"):
        g(x=x, k=0, results="pandas")


def test_out_is_written_in_place(np):
    g = cfx.compile(WINDOWS).entry
    x = np.arange(1, 7, dtype=np.float32)
    big = np.full(10, -1.0, dtype=np.float32)
    sums = big[3:7] # a view into a larger array: cfx writes through it
    out = g(x=x, k=0, out={"sums": sums})
    assert out["sums"] is sums
    assert big.tolist() == [-1, -1, -1, 6, 9, 12, 15, -1, -1, -1]
    # read-only arrays and the wrong dtype are refused, naming the result
    ro = np.zeros(4, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="windows: result 'sums' is read-only"):
        g(x=x, k=0, out={"sums": ro})
    with pytest.raises(TypeError, match="result 'sums' is f32\\[4\\]; got f64"):
        g(x=x, k=0, out={"sums": np.zeros(4)})
    with pytest.raises(TypeError, match="windows has no result 'nope'"):
        g(x=x, k=0, out={"nope": sums})


def test_inputs_are_bound_in_place(np, run_bound):
    """The address cfx reads an input from is the array's own, for a slice of a larger one
    too; Python numbers are packed."""
    g = cfx.compile(WINDOWS).entry
    base = np.arange(10, dtype=np.float32)
    x = base[2:8]
    for call in (lambda: g(x=x, k=0), lambda: g(x, np.int32(0))): # by name; positional numpy
        out = call()
        bound = run_bound(g)
        assert bound["x"] == (0, base.ctypes.data + 2 * 4)
        assert bound["sums"] == (0, out["sums"].ctypes.data) # results too: numpy arrays cfx wrote into
        assert out["sums"].tolist() == [9, 12, 15, 18] # windows of x = [2 .. 7]: 2+3+4 .. 5+6+7
    # the contract lets cfx write results only: writing through the input's alias before the
    # next run is seen by that run
    base[2:8] = 10
    assert g(x=x, k=0)["sums"].tolist() == [30, 30, 30, 30]


def test_torch_cpu_in_place():
    torch = pytest.importorskip("torch")
    g = cfx.compile(WINDOWS).entry
    x = torch.arange(1, 7, dtype=torch.float32)
    y = torch.zeros(4)
    out = g(x=x, k=1, out={"sums": y})
    assert out["sums"] is y and y.tolist() == [6, 9, 12, 15]
    assert isinstance(out["picked"], torch.Tensor) and out["picked"].tolist() == [2, 3, 4]


def test_wrong_inputs_are_named_before_anything_runs(np):
    g = cfx.compile(SCALARS).entry
    ok = dict(a=1, b=2, x=0.5, y=0.5, flag=True)
    cases = [
        (dict(ok, a=1.5), TypeError, "scalars: input 'a' wants i32; got float 1.5"),
        (dict(ok, a=True), TypeError, "scalars: input 'a' wants i32; got bool"),
        (dict(ok, a=1 << 31), ValueError, "scalars: input 'a' 2147483648 does not fit in i32"),
        (dict(ok, flag=1), TypeError, "scalars: input 'flag' wants bool; got int"),
        (dict(ok, x="1"), TypeError, "scalars: input 'x' cannot read a str"),
        (dict(ok, x=[1.0]), ValueError, "scalars: input 'x' wants f32; got a nested list of shape \\[1\\]"),
        (dict(ok, a=np.int64(3)), TypeError, "scalars: input 'a' is i32; got i64 int64"),
        (dict(ok, q=1), TypeError, "scalars has no input 'q' \\(its inputs: a: i32, b: i64, x: f32, y: f64, flag: bool\\)"),
    ]
    for inputs, error, message in cases:
        with pytest.raises(error, match="^" + message):
            g(**inputs)
    missing = dict(ok)
    del missing["b"], missing["y"]
    with pytest.raises(TypeError, match="scalars: missing inputs 'b: i64', 'y: f64'"):
        g(**missing)
    with pytest.raises(TypeError, match="input 'a' given twice"):
        g(1, a=1)
    with pytest.raises(TypeError, match="takes 5 inputs; 6 were given"):
        g(1, 2, 3, 4, True, 6)
    # numpy scalars of the right dtype are fine
    assert g(**dict(ok, a=np.int32(3), x=np.float32(2)))["s"] == 6


def test_array_dtype_and_shape_errors(xp):
    g = cfx.compile(WINDOWS).entry
    with pytest.raises(TypeError, match="windows: input 'x' is f32\\[6\\]; got f64"):
        g(x=xp.array([1, 2, 3, 4, 5, 6], "f64"), k=0)
    with pytest.raises(ValueError, match="windows: input 'x' is f32\\[6\\]; got shape \\[5\\]"):
        g(x=xp.array([1, 2, 3, 4, 5], "f32"), k=0)
    with pytest.raises(ValueError, match="windows: input 'x' is f32\\[6\\]; got shape \\[2, 3\\]"):
        g(x=xp.array([[1, 2, 3], [4, 5, 6]], "f32"), k=0)
    with pytest.raises(ValueError, match="windows: input 'k' is i32; got shape \\[1\\]"):
        g(x=xp.array([1, 2, 3, 4, 5, 6], "f32"), k=xp.array([1], "i32"))


def test_non_contiguous_and_foreign_dtypes(np):
    g = cfx.compile(WINDOWS).entry
    x = np.arange(12, dtype=np.float32)[::2]
    with pytest.raises(ValueError, match="windows: input 'x' is not contiguous in memory"):
        g(x=x, k=0)
    with pytest.raises(TypeError, match="windows: input 'x' is f32\\[6\\]; got float16"):
        g(x=np.zeros(6, np.float16), k=0)
    with pytest.raises(TypeError, match="windows: input 'x' is f32\\[6\\]; got uint32"):
        g(x=np.zeros(6, np.uint32), k=0)


def test_buffer_protocol_inputs():
    import array
    g = cfx.compile(WINDOWS).entry
    x = array.array("f", [1, 2, 3, 4, 5, 6])
    assert g(x=x, k=0, results="python")["sums"] == [6, 9, 12, 15]
    ro = memoryview(bytes(array.array("f", [1, 1, 1, 1, 1, 1]))).cast("f") # read-only
    assert g(x=ro, k=0, results="python")["sums"] == [3, 3, 3, 3]
    with pytest.raises(TypeError, match="input 'x' is f32\\[6\\]; got f64"):
        g(x=array.array("d", [1, 2, 3, 4, 5, 6]), k=0)
    with pytest.raises(TypeError, match="input 'k' is i32; got uint8"):
        g(x=x, k=b"\x01")


def test_prints_go_to_python(capsys):
    src = """graph p(n: i32) -> (s: i32) {
  s = 0
  for i in range(n) {
    print(i * 10, "step")
    s += i
  }
}
"""
    g = cfx.compile(src).entry
    lines = []
    assert g(n=3, results="python", on_print=lines.append)["s"] == 3
    assert lines == ["step: 0", "step: 10", "step: 20"]
    g(n=2)
    assert capsys.readouterr().out == "step: 0\nstep: 10\n"


def test_trace_and_backends(tmp_path):
    g = cfx.compile(SCALARS).entry
    path = tmp_path / "run.json"
    g(a=1, b=2, x=0.5, y=0.5, flag=True, backend="cpu", trace=str(path))
    assert path.read_text().lstrip().startswith("{")
    av = cfx.backends()
    assert av["cpu"] == (True, "") and set(av) == {"auto", "cpu", "cuda-host", "cuda-graph", "cuda-persistent"}
    for name, (ok, why) in av.items():
        assert ok or why # a backend that cannot run says why
        if not ok:
            with pytest.raises(cfx.Error, match="backend %s is not available" % name):
                g(a=1, b=2, x=0.5, y=0.5, flag=True, backend=name)
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        g(a=1, b=2, x=0.5, y=0.5, flag=True, backend="gpu")
    assert g.backend_detail("cpu") == "cpu"


def test_runs_from_several_threads():
    g = cfx.compile(SCALARS).entry
    got = []

    def work(i):
        for _ in range(20):
            got.append(g(a=i, b=3, x=0.0, y=0.0, flag=False, results="python")["s"] == 3 * i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [True] * 80


def test_print_callback_errors_reach_the_caller():
    g = cfx.compile('graph p(n: i32) -> (s: i32) {\n  print(n, "n")\n  s = n\n}\n').entry

    def bad(line):
        raise RuntimeError("printer broke on " + line)

    with pytest.raises(RuntimeError, match="printer broke on n: 3"):
        g(n=3, on_print=bad)
    assert g(n=4, on_print=lambda line: None, results="python")["s"] == 4
    with pytest.raises(cfx.Error): # calling the graph from inside its own run
        g(n=5, on_print=lambda line: g(n=6))
