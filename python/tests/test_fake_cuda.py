"""The package's own CUDA work without a GPU: cfx._cuda's runtime, driver and NVRTC replaced by
fakes in Python whose "device" memory is host memory, so what the package does around a device
run can be checked on any machine.

What the fakes make visible:
- memory that is freed is overwritten first (device memory by the fake's cudaFree, host
  copies of device memory by a finalizer on their buffer), and the fake's cudaMalloc hands the
  last freed address out again, as cudaMalloc does: a read of memory after its owner went
  (a host copy that a temporary owned, say) gets the poison, every time, and not whatever
  the allocator happened to leave there;
- every call the package makes is logged, so a CUDA C kernel's launcher can be held to the
  contract of cfx.h and docs/persistent.md for a cuda_fn: it enqueues its work on the stream
  it is given and does nothing else, since cuda-graph and cuda-persistent call it once, while
  a stream is being captured, and replay what it enqueued at every run.

The first caught the GPU failures of test_gpu.py's first H100 round: Tensor.tolist() of a
result on the device read its host copy after the copy was freed (a wrong `length` on
cuda-host and cuda-graph, zeros for `y` on cuda-graph)."""
import contextlib
import ctypes
import gc
import weakref

import pytest

import cfx
from cfx import _core, _cuda, _dlpack, _lib

POISON = 0xA5


class FakeRuntime:
    """The calls of _cuda.Runtime that the package makes, over host memory."""

    def __init__(self):
        self.buffers = {}  # address -> ctypes buffer standing in for device memory
        self.freed = []    # (size, address): handed out again, last freed first
        self.calls = []    # (name, args) of every call
        self.current = 0
        self.streams = {}

    def _log(self, name, *args):
        self.calls.append((name,) + args)

    def device(self):
        self._log("cudaGetDevice")
        return self.current

    @contextlib.contextmanager
    def on_device(self, device_id):
        before = self.current
        if device_id is not None:
            self.current = device_id
        try:
            yield
        finally:
            self.current = before

    def compute_capability(self, device_id):
        return 90

    def version(self):
        return 12080

    def malloc(self, nbytes):
        self._log("cudaMalloc", nbytes)
        size = max(int(nbytes), 1)
        for i in range(len(self.freed) - 1, -1, -1):
            if self.freed[i][0] == size:
                address = self.freed.pop(i)[1]
                return address
        buf = ctypes.create_string_buffer(size)
        self.buffers[ctypes.addressof(buf)] = buf
        return ctypes.addressof(buf)

    def free_quietly(self, address, device_id=None):
        self._log("cudaFree", address)
        buf = self.buffers[address]
        ctypes.memset(address, POISON, len(buf))
        self.freed.append((len(buf), address))

    def copy_async(self, dst, src, nbytes, kind, stream):
        self._log("cudaMemcpyAsync", kind, stream)
        ctypes.memmove(dst, src, nbytes)

    def sync(self, stream):
        self._log("cudaStreamSynchronize", stream)

    def copy_to_host(self, dst, src, nbytes, device_id, stream=None):
        s = stream if stream is not None else self.own_stream(device_id)
        self.copy_async(dst, src, nbytes, _cuda.D2H, s)
        self.sync(s)

    def own_stream(self, device_id):
        return self.streams.setdefault(device_id, 0x5000 + device_id)

    capturing_streams = ()

    def capturing(self, stream):
        self._log("cudaStreamIsCapturing", stream)
        return stream in self.capturing_streams


class FakeDriver:
    """cuModuleLoadData and cuLaunchKernel: a launch is logged with its parameters' values,
    read at the call as the driver reads them (the array need not outlive the call)."""

    def __init__(self, log):
        self.calls = log
        self.modules = 0

    def load(self, ptx, lowered_name):
        self.calls.append(("cuModuleLoadData", lowered_name))
        self.modules += 1
        return 0xF000 + self.modules

    def launch(self, fn, grid, block, shared, stream, params):
        # every parameter here is 8 bytes: a pointer, or n as a long long
        values = tuple(ctypes.c_uint64.from_address(p).value for p in params)
        self.calls.append(("cuLaunchKernel", fn, grid, block, shared, stream, values))


class FakeNvrtc:
    def compile(self, source, name, entry, cc, options=()):
        if "{" not in source:
            raise _cuda.CudaError("NVRTC could not compile kernel '%s':\nexpected a body" % name)
        return b"// ptx of " + entry.encode(), entry.encode()


@pytest.fixture
def fake(monkeypatch):
    """The fakes in place of _cuda's runtime, driver and NVRTC, and a poisoning finalizer on
    every host buffer Tensor.empty allocates."""
    rt = FakeRuntime()
    drv = FakeDriver(rt.calls)
    monkeypatch.setattr(_cuda, "runtime", lambda: rt)
    monkeypatch.setattr(_cuda, "driver", lambda: drv)
    monkeypatch.setattr(_cuda, "nvrtc", lambda: FakeNvrtc())
    real_empty = _dlpack.Tensor.empty.__func__

    def empty(cls, dtype, shape, device=None):
        t = real_empty(cls, dtype, shape, device)
        if t.device_id is None and t.nbytes:
            # the buffer's weak references are called before its memory is released
            f = weakref.finalize(t._owner, ctypes.memset, t.data_ptr, POISON, t.nbytes)
            f.atexit = False
        return t

    monkeypatch.setattr(_dlpack.Tensor, "empty", classmethod(empty))
    yield rt
    gc.collect() # device Tensors of the test go back to this fake, not to the next one


VALUES = [("i32", 3), ("i32", -7), ("i64", 1 << 40), ("f32", 2.5), ("f64", -0.125),
          ("bool", True), ("i32", [3, 3, 0, -1, -1, -1, -1, -1]),
          ("f32", [float(i % 10) for i in range(1000)]), ("f64", [[1.5, 2.0], [-3.0, 4.25]])]


@pytest.mark.parametrize("dtype,value", VALUES, ids=["%s-%d" % (d, i) for i, (d, _) in enumerate(VALUES)])
def test_device_tensor_reads(fake, dtype, value):
    for _ in range(3): # the second and third get addresses the first freed
        t = cfx.tensor(value, dtype, "cuda:0")
        assert t.device == "cuda:0" and t.data_ptr in fake.buffers
        assert t.tolist() == value
        assert repr(t).startswith("cfx.Tensor(")
        if not isinstance(value, list):
            assert t.item() == value
            assert int(t) == int(value) and float(t) == float(value) and bool(t) == bool(value)
        mv = t.to_host().memoryview() # the copy lives as long as the view
        gc.collect()
        assert (mv.tolist() if isinstance(value, list) else mv[0]) == value
        del t, mv
        gc.collect()


def test_results_of_a_device_run_as_python_and_numpy(fake):
    """_convert, as a run turns its device results into the kind asked for."""
    t, address = _core._empty("python", "i32", (), 0)
    ctypes.memmove(address, ctypes.byref(ctypes.c_int32(5)), 4) # what a run writes
    assert isinstance(t, cfx.Tensor) and t.device == "cuda:0"
    assert _core._convert("python", t) == 5
    t, address = _core._empty("python", "f32", (1000,), 0)
    ctypes.memmove(address, (ctypes.c_float * 1000)(*[i % 10 for i in range(1000)]), 4000)
    assert _core._convert("python", t)[:12] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1]
    np = pytest.importorskip("numpy")
    a = _core._convert("numpy", t)
    gc.collect()
    assert isinstance(a, np.ndarray) and a.sum() == 100 * 45


def test_freed_device_memory_is_poisoned(fake):
    """The harness itself: a read through a freed Tensor's address gets the poison."""
    t = cfx.tensor(7, "i32", "cuda:0")
    address = t.data_ptr
    del t
    gc.collect()
    assert ctypes.c_int32.from_address(address).value == ctypes.c_int32(POISON * 0x01010101).value
    u = cfx.tensor(8, "i32", "cuda:0")
    assert u.data_ptr == address and u.tolist() == 8 # cudaMalloc gives the address again


SCALE_CU = 'extern "C" __global__ void scale(const float *x, const float *s, float *y, long long n) { }'


def _tensors(specs):
    """A cfx_tensor array (what cfx hands a cuda_fn) over fake device memory."""
    arr = (_lib.CTensor * len(specs))()
    keep = []
    for i, (dtype, shape) in enumerate(specs):
        t = cfx.Tensor.empty(dtype, shape, "cuda:0")
        keep.append(t)
        arr[i].type.dtype = _lib.DTYPE_CODE[dtype]
        arr[i].type.rank = len(shape)
        for j, d in enumerate(shape):
            arr[i].type.dims[j] = d
        arr[i].data = t.data_ptr
    return arr, keep


def test_cuda_kernel_launcher_only_enqueues(fake):
    """A CUDA C kernel's cuda_fn, called as cuda-graph calls it (once, while its stream is
    captured): one launch on the stream it was given, with the buffers' addresses and n, and
    no other CUDA work (no module load, copy, allocation or synchronization), so that what
    the capture records is the whole of it."""
    ctx = cfx.Context()
    k = ctx.register_kernel("scale", "(f32[1000], f32) -> (f32[1000])", cuda=SCALE_CU, block=128)
    k.prepare() # as Graph._exec does before it creates a CUDA executor
    args, keep = _tensors([("f32", (1000,)), ("f32", ())])
    results, keep2 = _tensors([("f32", (1000,))])
    capture_stream = 0xCA97
    del fake.calls[:]
    assert k._cuda(None, capture_stream, 2, args, 1, results) == 0
    assert _core._take_kernel_failure() is None
    work = [c for c in fake.calls if c[0] != "cudaGetDevice"]
    assert work == [("cuLaunchKernel", 0xF001, 8, 128, 0, capture_stream,
                     (keep[0].data_ptr, keep[1].data_ptr, keep2[0].data_ptr, 1000))]
    # grid as a function of n, evaluated at the call
    k2 = ctx.register_kernel("scale2", "(f32[1000], f32) -> (f32[1000])", cuda=SCALE_CU.replace("scale", "scale2"),
                             block=256, grid=lambda n: 2, shared_mem=64)
    k2.prepare()
    del fake.calls[:]
    assert k2._cuda(None, capture_stream, 2, args, 1, results) == 0
    assert [c[:6] for c in fake.calls if c[0] != "cudaGetDevice"] == [
        ("cuLaunchKernel", 0xF002, 2, 256, 64, capture_stream)]


def test_cuda_kernel_launch_failure_is_kept(fake, monkeypatch):
    """A launch that fails makes cuda_fn return non-zero (cfx stops the run with error) and
    the exception is kept for the run to raise."""
    ctx = cfx.Context()
    k = ctx.register_kernel("scale", "(f32[1000], f32) -> (f32[1000])", cuda=SCALE_CU)
    k.prepare()

    def refuse(*a):
        raise _cuda.CudaError("cuLaunchKernel: operation not permitted when stream is capturing")

    monkeypatch.setattr(_cuda.driver(), "launch", refuse)
    args, keep = _tensors([("f32", (1000,)), ("f32", ())])
    results, keep2 = _tensors([("f32", (1000,))])
    assert k._cuda(None, 0xCA97, 2, args, 1, results) == 1
    e = _core._take_kernel_failure()
    assert isinstance(e, _cuda.CudaError) and "capturing" in str(e)
    with pytest.raises(cfx.Error, match="NVRTC could not compile kernel 'bad'"):
        ctx.register_kernel("bad", "(f32) -> (f32)", cuda="extern \"C\" __global__ void bad(")


class CaptureLib:
    """libcfx with the calls a device run makes of an executor answered here and logged, so that
    a call under capture can be followed without a CUDA executor: the rest is the real library."""

    def __init__(self, real, log):
        self._real = real
        self._log = log

    def __getattr__(self, name):
        return getattr(self._real, name)

    def _ok(self, name):
        def call(*args):
            self._log.append((name,))
            return 0
        return call

    @property
    def cfx_bind_device(self): return self._ok("cfx_bind_device")
    @property
    def cfx_unbind(self): return self._ok("cfx_unbind")
    @property
    def cfx_set_stream(self): return self._ok("cfx_set_stream")
    @property
    def cfx_set_max_iters(self): return self._ok("cfx_set_max_iters")
    @property
    def cfx_set_print(self): return self._ok("cfx_set_print")
    @property
    def cfx_run_async(self): return self._ok("cfx_run_async")
    @property
    def cfx_run(self): return self._ok("cfx_run")
    @property
    def cfx_run_bound(self): return self._ok("cfx_run_bound")


COUNTER = """
graph count(x: f32[4], n: i32) -> (y: f32[4]) {
  y = x
  for i in range(0, n) {
    y = y + 1.0
  }
}
"""


def test_a_call_inside_a_capture(fake, monkeypatch):
    """A call while the caller's stream is being captured (torch.cuda.graph): refused before a
    warm-up (nothing allocated, copied or made), refused with a host input, and after a warm-up
    only the bindings and cfx_run_async, with no allocation, copy or synchronization of the
    package's own, and the out= arrays as its results."""
    g = cfx.compile(COUNTER).entry
    stream = 0xCA97
    fake.capturing_streams = (stream,)
    x = cfx.tensor([1.0, 2.0, 3.0, 4.0], "f32", "cuda:0")
    n = cfx.tensor(3, "i32", "cuda:0")
    y = cfx.Tensor.empty("f32", (4,), "cuda:0")
    del fake.calls[:]
    with pytest.raises(cfx.Error, match="before any call outside it"):
        g(x, n, backend="cuda-graph", stream=stream, out={g.results[0].name: y})
    assert [c[0] for c in fake.calls if c[0] not in ("cudaGetDevice", "cudaStreamIsCapturing")] == []
    # warm: the executor made outside the capture (here: stood in for)
    log = []
    monkeypatch.setattr(_core, "lib", CaptureLib(_lib.lib, log))
    g._execs[("cuda-graph", 0)] = _core._Exec(0x1234, "cuda-graph", 0, len(g.inputs), len(g.results))
    with pytest.raises(cfx.Error, match="input 'n' is on the host"):
        g(x, 3, backend="cuda-graph", stream=stream, out={g.results[0].name: y})
    with pytest.raises(cfx.Error, match="pass out= arrays"):
        g(x, n, backend="cuda-graph", stream=stream)
    del fake.calls[:]
    del log[:]
    res = g(x, n, backend="cuda-graph", stream=stream, out={g.results[0].name: y})
    assert res[g.results[0].name] is y and res.iterations is None
    assert ("cfx_run_async",) in log and ("cfx_run",) not in log and ("cfx_run_bound",) not in log
    assert [c[0] for c in fake.calls if c[0] not in ("cudaGetDevice", "cudaStreamIsCapturing")] == []
    del g._execs[("cuda-graph", 0)]
