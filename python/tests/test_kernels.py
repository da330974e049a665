"""Application kernels from Python: a Python function on the cpu backend, a C function from a
loaded library, and the errors of both."""
import ctypes
import gc
import pathlib
import shutil
import subprocess

import pytest

import cfx

REPO = pathlib.Path(__file__).resolve().parents[2]

USES_SCALE = """graph g(x: f32[4], s: f32) -> (y: f32[4], total: f32) {
  y = scale(x, s)
  y = scale(y, 2.0)
  total = sum(y)
}
"""


def scale_py(x, s):
    # numpy arrays where numpy is installed, cfx.Tensors otherwise: tolist() reads both
    k = s.item()
    return [v * k for v in x.tolist()]


def test_python_kernel_on_cpu():
    ctx = cfx.Context()
    calls = []

    def scale(x, s):
        calls.append((x.tolist(), s.item()))
        return scale_py(x, s)

    k = ctx.register_kernel("scale", "(f32[4], f32) -> (f32[4])", cpu=scale)
    assert k.name == "scale" and "scale" in ctx.kernels
    m = cfx.compile(USES_SCALE, context=ctx)
    del ctx
    gc.collect() # the module keeps the kernel alive
    out = m.entry(x=[1.0, 2.0, 3.0, -4.0], s=0.5, results="python")
    # y = x * 0.5 * 2 = x; total = 2
    assert out == {"y": [1.0, 2.0, 3.0, -4.0], "total": 2.0}
    assert calls == [([1, 2, 3, -4], 0.5), ([0.5, 1, 1.5, -2], 2.0)]


def test_python_kernel_sees_numpy_read_only(np):
    ctx = cfx.Context()
    seen = []

    def scale(x, s):
        seen.append((type(x), x.flags.writeable))
        return x * s # f32 * f32 0-d array: f32[4]

    ctx.register_kernel("scale", "(f32[4], f32) -> (f32[4])", cpu=scale)
    out = ctx.compile(USES_SCALE).entry(x=np.float32([1, 2, 3, 4]), s=np.float32(3))
    assert out["y"].tolist() == [6, 12, 18, 24] and out["total"] == 60
    assert seen == [(np.ndarray, False)] * 2


def test_kernel_errors_reach_the_caller(np):
    ctx = cfx.Context()

    def broken(x, s):
        raise ZeroDivisionError("inside the kernel")

    def short(x, s):
        return [1.0, 2.0, 3.0]

    def wrong_dtype(x, s):
        return [1, 2, 3, 4] # ints for f32 are fine: a Python number has no dtype

    def f64_array(x, s):
        return np.float64([1, 2, 3, 4])

    ctx.register_kernel("broken", "(f32[4], f32) -> (f32[4])", cpu=broken)
    ctx.register_kernel("short", "(f32[4], f32) -> (f32[4])", cpu=short)
    ctx.register_kernel("ints", "(f32[4], f32) -> (f32[4])", cpu=wrong_dtype)
    ctx.register_kernel("wide", "(f32[4], f32) -> (f32[4])", cpu=f64_array)
    for name, cause, text in (("broken", ZeroDivisionError, "inside the kernel"),
                              ("short", ValueError, "kernel 'short' result 0 wants f32[4]; got "
                                                    "a nested list of shape [3]"),
                              ("wide", TypeError, "kernel 'wide' result 0 wants f32[4]; got f64")):
        g = ctx.compile(USES_SCALE.replace("scale", name)).entry
        with pytest.raises(cfx.RunStopped) as info:
            g(x=[1.0, 2.0, 3.0, 4.0], s=1.0)
        # the kernel's own exception, chained, and named in the message with the statement
        assert isinstance(info.value.__cause__, cause)
        assert str(info.value.__cause__) == text
        assert info.value.status == "kernel"
        assert info.value.message == ("<string>:2:3: run stopped: kernel: kernel '%s' failed: %s: %s"
                                      % (name, cause.__name__, text))
        assert (info.value.line, info.value.col) == (2, 3)
    g = ctx.compile(USES_SCALE.replace("scale", "ints")).entry
    assert g(x=[0.0] * 4, s=1.0, results="python")["y"] == [1, 2, 3, 4]


def test_registration_errors():
    ctx = cfx.Context()
    ctx.register_kernel("twice", "(f32) -> (f32)", cpu=lambda x: x)
    with pytest.raises(ValueError, match="kernel 'twice' is already registered"):
        ctx.register_kernel("twice", "(f32) -> (f32)", cpu=lambda x: x)
    with pytest.raises(ValueError, match="kernel 'odd': bad signature"):
        ctx.register_kernel("odd", "(f32 -> (f32)", cpu=lambda x: x)
    with pytest.raises(ValueError, match="kernel 'nothing' has neither a CPU nor a CUDA function"):
        ctx.register_kernel("nothing", "(f32) -> (f32)")
    with pytest.raises(TypeError, match="cuda must be a function of a loaded library"):
        ctx.register_kernel("pycuda", "(f32) -> (f32)", cuda=lambda x: x)
    # a graph compiled without the kernel does not know it
    with pytest.raises(cfx.CompileError, match="unknown op 'twice'"):
        cfx.compile("graph h(x: f32) -> (y: f32) {\n  y = twice(x)\n}\n", context=cfx.Context())


def test_default_context():
    cfx.register_kernel("negate_default", "(i32) -> (i32)", cpu=lambda a: -a.item())
    g = cfx.compile("graph h(a: i32) -> (b: i32) {\n  b = negate_default(a) + 1\n}\n").entry
    assert g(a=5, results="python")["b"] == -4


C_KERNEL = r"""
#include "cfx.h"
/* y = x * s, and the number of calls in *user */
int scale(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    const float *x = args[0].data, *s = args[1].data;
    float *y = results[0].data;
    if (nargs != 2 || nresults != 1 || cfx_type_count(&args[0].type) != 4)
        return 1;
    for (int i = 0; i < 4; i++)
        y[i] = x[i] * s[0];
    if (user)
        ++*(int *)user;
    return 0;
}
"""


def test_c_kernel_from_a_loaded_library(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        pytest.skip("no C compiler to build the kernel's library")
    src = tmp_path / "scale.c"
    src.write_text(C_KERNEL)
    so = tmp_path / "libscale.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-I", str(REPO / "host"), str(src), "-o", str(so)],
                   check=True)
    lib = ctypes.CDLL(str(so))
    calls = ctypes.c_int(0)
    ctx = cfx.Context()
    ctx.register_kernel("scale", "(f32[4], f32) -> (f32[4])", cpu=lib.scale,
                        user=ctypes.addressof(calls))
    out = ctx.compile(USES_SCALE).entry(x=[1.0, 2.0, 3.0, -4.0], s=1.5, results="python")
    # y = x * 1.5 * 2 = x * 3
    assert out == {"y": [3.0, 6.0, 9.0, -12.0], "total": 6.0}
    assert calls.value == 2
    # by address too
    ctx2 = cfx.Context()
    ctx2.register_kernel("scale", "(f32[4], f32) -> (f32[4])",
                         cpu=ctypes.cast(lib.scale, ctypes.c_void_p).value)
    assert ctx2.compile(USES_SCALE).entry(x=[1.0] * 4, s=1.0, results="python")["total"] == 8.0
    # a kernel that fails (here: returns 1 for a wrong argument count) stops with an error
    ctx3 = cfx.Context()
    ctx3.register_kernel("scale3", "(f32[4], f32, f32) -> (f32[4])", cpu=lib.scale)
    g = ctx3.compile("graph h(x: f32[4]) -> (y: f32[4]) {\n  y = scale3(x, 1.0, 2.0)\n}\n").entry
    with pytest.raises(cfx.Error, match="^<string>:2:3: run stopped: error: "):
        g(x=[1.0] * 4)
