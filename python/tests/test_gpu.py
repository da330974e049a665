"""On a CUDA device: device arrays bound in place, the caller's stream, host numbers staged,
stops and cancel on the device, CUDA C kernels compiled with NVRTC, timings with CUDA events,
and torch and CuPy tensors on their current streams. Every test here is marked gpu and
skips where cfx cannot run on a CUDA device (no GPU, or cfx built without CUDA)."""
import ctypes
import os
import pathlib
import signal
import threading
import time

import pytest

import cfx
from cfx import _core

from conftest import cuda_ready

REPO = pathlib.Path(__file__).resolve().parents[2]
_ok, _why = cuda_ready()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not _ok, reason="no GPU for cfx: %s" % _why)]

EMB = [[-0.7, -0.6, 0.9, -1.2], [0.3, 0.7, -0.9, -1.3], [-0.7, 0.5, 0.2, -1],
       [-0.2, 0.5, -0.2, 0.4], [1.4, 0.5, -0.3, -0.9], [-0.5, 0, 1.2, 0.8]]
U = [[-0.5, 1.3, -0.1, 0.6], [-1.2, -1.2, -0.9, 1.2], [0.5, 1, 0.4, -0.3], [0, 0.3, 1.1, -0.2]]
W = [[1.2, 0.3, 1, 0], [0.6, -0.5, 0.1, -0.9], [-1.2, -1.4, 0.6, -0.1], [1.2, 1, -0.3, 1.4],
     [0.3, 0.8, -0.3, -0.9], [-1, -1, 0.3, -1.2]]
WANT = {0: ([5, 2, 4, 1, 5, 4, 0, -1], 7), 1: ([4, 1, 5, 4, 0, -1, -1, -1], 5),
        3: ([3, 3, 0, -1, -1, -1, -1, -1], 3)} # graphs/greedy_decode.cfx's header

SPIN = """graph spin(x: i32) -> (y: i32) {
  y = x
  while y >= 0 {
    y = y % 7 + 1
  }
}
"""


@pytest.fixture(scope="module")
def decode():
    return cfx.compile(str(REPO / "graphs" / "greedy_decode.cfx")).entry


def _weights(device="cuda:0"):
    return dict(emb=cfx.tensor(EMB, "f32", device), u=cfx.tensor(U, "f32", device),
                w=cfx.tensor(W, "f32", device))


def _stream():
    from cfx import _cuda
    rt = _cuda.runtime()
    s = ctypes.c_void_p()
    rt.check(rt.lib.cudaStreamCreateWithFlags(ctypes.byref(s), 1), "cudaStreamCreateWithFlags")
    return s.value


@pytest.mark.parametrize("backend", ["cuda-persistent", "cuda-host", "cuda-graph"])
def test_device_tensors_every_backend(decode, backend, run_bound):
    wts = _weights()
    for start, (tokens, length) in WANT.items():
        out = decode(start=start, end_token=0, backend=backend, **wts)
        assert out.backend == backend
        assert isinstance(out["tokens"], cfx.Tensor) and out["tokens"].device == "cuda:0"
        assert out["tokens"].tolist() == tokens and out["length"].tolist() == length
        # device arrays are bound where they lie; the Python numbers went to device buffers
        bound = run_bound(decode)
        assert bound["emb"] == (1, wts["emb"].data_ptr)
        assert bound["tokens"][1] == out["tokens"].data_ptr
        assert bound["start"][1] != 0


def test_results_to_the_host_and_out(decode):
    wts = _weights()
    out = decode(start=1, end_token=0, results="python", **wts)
    assert out == {"tokens": WANT[1][0], "length": WANT[1][1]}
    tokens = cfx.Tensor.empty("i32", (8,), "cuda:0")
    out = decode(start=3, end_token=0, out={"tokens": tokens}, **wts)
    assert out["tokens"] is tokens and tokens.tolist() == WANT[3][0]
    with pytest.raises(ValueError, match="result 'tokens' is on the host, and this run's arrays are on cuda:0"):
        decode(start=3, end_token=0, out={"tokens": cfx.Tensor.empty("i32", (8,))}, **wts)
    with pytest.raises(ValueError, match="input 'emb' is on cuda:0, and the cpu backend reads host memory"):
        decode(start=3, end_token=0, backend="cpu", **wts)
    # host arrays on a CUDA backend: cfx copies them itself
    host = dict(emb=cfx.tensor(EMB, "f32"), u=cfx.tensor(U, "f32"), w=cfx.tensor(W, "f32"))
    out = decode(start=0, end_token=0, backend="cuda-persistent", **host)
    assert out["tokens"].device == "cpu" and out["tokens"].tolist() == WANT[0][0]


def test_numpy_results_from_a_device_run(decode, np):
    out = decode(start=0, end_token=0, results="numpy", **_weights())
    assert isinstance(out["tokens"], np.ndarray) and out["tokens"].tolist() == WANT[0][0]


def test_explicit_stream(decode):
    s = _stream()
    out = decode(start=1, end_token=0, stream=s, **_weights())
    assert decode.last_stream == s and out["tokens"].tolist() == WANT[1][0]


def test_stops_on_the_device(decode):
    with pytest.raises(cfx.RunStopped) as info:
        decode(start=9, end_token=0, **_weights())
    e = info.value
    assert e.status == "index" and (e.line, e.col) == (29, 5)
    assert e.message.endswith("run stopped: index: 'emb' has 6 rows, index was 9")
    g = cfx.compile(SPIN).entry
    x = cfx.tensor(0, "i32", "cuda:0")
    with pytest.raises(cfx.RunStopped) as info:
        g(x=x, max_iters=1000)
    assert info.value.status == "limit"
    timer = threading.Timer(0.3, g.cancel)
    timer.start()
    with pytest.raises(cfx.RunStopped) as info:
        g(x=x, max_iters=10 ** 12)
    assert info.value.status == "cancelled"
    rescue = threading.Timer(20, g.cancel)
    rescue.start()
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
    t0 = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            g(x=x)
            time.sleep(5)
    finally:
        rescue.cancel()
    assert time.monotonic() - t0 < 10


SCALE_CU = r"""
extern "C" __global__ void scale(const float *x, const float *s, float *y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] * s[0];
}
"""


def test_nvrtc_kernel():
    ctx = cfx.Context()
    ctx.register_kernel("scale", "(f32[1000], f32) -> (f32[1000])", cuda=SCALE_CU, block=128)
    g = ctx.compile("graph g(x: f32[1000], s: f32) -> (y: f32[1000], total: f32) {\n"
                    "  y = scale(x, s)\n  total = sum(y)\n}\n").entry
    x = cfx.tensor([float(i % 10) for i in range(1000)], "f32", "cuda:0")
    for backend in ("cuda-persistent", "cuda-host", "cuda-graph"):
        out = g(x=x, s=2.0, backend=backend, results="python")
        assert out["y"][:12] == [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 0, 2], backend
        assert out["total"] == 2 * 100 * 45, backend # each 0..9 block sums to 45
    with pytest.raises(cfx.Error, match="NVRTC could not compile kernel 'bad'"):
        ctx.register_kernel("bad", "(f32) -> (f32)", cuda="extern \"C\" __global__ void bad( {")


def test_benchmark_with_events(decode):
    t = decode.benchmark(start=0, end_token=0, warmup=2, repeat=5, **_weights())
    assert t.clock == "cuda events" and t.median_ms > 0 and len(t.times_ms) == 5
    assert t.results["tokens"].tolist() == WANT[0][0]
    t = cfx.bench(lambda: None, device="cuda:0", repeat=3)
    assert t.clock == "cuda events"


def test_torch_cuda_on_its_current_stream(decode):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    dev = torch.device("cuda", 0)
    side = torch.cuda.Stream(dev)
    with torch.cuda.stream(side):
        # made on the side stream by torch's own kernels, then used by cfx on that stream
        emb = torch.tensor(EMB, device=dev) * 1.0
        u = torch.tensor(U, device=dev) + 0.0
        w = torch.tensor(W, device=dev)
        out = decode(emb=emb, u=u, w=w, start=0, end_token=0)
        assert decode.last_stream == side.cuda_stream
        got = out["tokens"] + 0 # torch orders this after cfx on the same stream
    side.synchronize()
    assert isinstance(out["tokens"], torch.Tensor) and out["tokens"].device == dev
    assert got.tolist() == WANT[0][0] and int(out["length"]) == WANT[0][1]
    out = decode(emb=emb, u=u, w=w, start=1, end_token=0) # the default stream
    assert decode.last_stream == 1 and out["tokens"].tolist() == WANT[1][0]


def test_cupy_on_its_current_stream(decode):
    cupy = pytest.importorskip("cupy")
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        emb, u, w = cupy.array(EMB, "float32"), cupy.array(U, "float32"), cupy.array(W, "float32")
        out = decode(emb=emb, u=u, w=w, start=3, end_token=0)
        assert decode.last_stream == s.ptr
    assert isinstance(out["tokens"], cupy.ndarray) and out["tokens"].get().tolist() == WANT[3][0]


def test_jax_arrays(decode):
    jax = pytest.importorskip("jax")
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("JAX has no GPU here")
    put = lambda a: jax.device_put(jax.numpy.array(a, dtype="float32"), gpu)
    out = decode(emb=put(EMB), u=put(U), w=put(W), start=0, end_token=0)
    assert isinstance(out["tokens"], jax.Array)
    assert out["tokens"].tolist() == WANT[0][0] and int(out["length"]) == WANT[0][1]
