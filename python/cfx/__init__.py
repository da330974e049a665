"""cfx from Python: compile a .cfx graph and run it on numpy, PyTorch, JAX or CuPy arrays in
place, on the caller's CUDA stream.

    import cfx
    m = cfx.compile("graphs/greedy_decode.cfx")     # or the source text
    out = m.graph("greedy_decode")(emb=emb, u=u, w=w, start=1, end_token=0)
    out["tokens"], out["length"]

A thin layer over libcfx through ctypes: no compiled extension, nothing beyond the standard
library at run time; numpy, torch, jax and cupy are used when present. See python/README.md.
"""
from ._lib import path as library_path
from ._core import (CompileError, Context, Diagnostic, Error, Graph, Kernel, Module, Param,
                    Results, RunStopped, backends, compile, default_context, register_kernel,
                    register_source, stream_handle)
from ._dlpack import Tensor
from ._bench import Timing, bench
from ._jit import JitError, JitFunction, jit
from ._onnx import from_torch, load_onnx, onnx_available

__version__ = "1.0.0"


def tensor(data, dtype=None, device=None):
    """A cfx.Tensor holding a copy of data (a Python number or nested list, which needs a
    dtype, or any array on the host), on the host or on device "cuda:N"."""
    from . import _dlpack
    if _dlpack.is_value(data):
        if dtype is None:
            raise TypeError("cfx.tensor of a Python value needs a dtype (%s)" % ", ".join(_DTYPES))
        view = _dlpack.pack(data, dtype)
    else:
        view = _dlpack.import_any(data)
        if view.where == _dlpack.DEVICE:
            raise ValueError("cfx.tensor copies host data; this array is on cuda:%d" % view.device_id)
        if dtype is not None and view.dtype != dtype:
            raise TypeError("the array is %s, not %s" % (view.dtype, dtype))
        if view.dtype not in _DTYPES:
            raise TypeError("cfx has no dtype %s (it has %s)" % (view.dtype, ", ".join(_DTYPES)))
    t = Tensor.empty(view.dtype, view.shape, device)
    if t.device_id is None:
        _dlpack.copy_into(t.data_ptr, t.nbytes, view)
    else:
        from . import _cuda
        rt = _cuda.runtime()
        with rt.on_device(t.device_id):
            s = rt.own_stream(t.device_id)
            rt.copy_async(t.data_ptr, view.address, t.nbytes, _cuda.H2D, s)
            rt.sync(s)
    view.release()
    return t


from ._lib import DTYPES as _DTYPES # noqa: E402

__all__ = ["compile", "register_kernel", "register_source", "backends", "bench", "tensor", "CompileError",
           "RunStopped", "Error", "Context", "Module", "Graph", "Kernel", "Param", "Results",
           "Tensor", "Timing", "Diagnostic", "default_context", "stream_handle",
           "library_path", "jit", "JitError", "JitFunction", "load_onnx", "from_torch",
           "onnx_available"]
