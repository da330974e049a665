"""Fixtures of the cfx Python tests: the kinds of array the same tests run with.

`xp` runs a test once per kind of array: cfx.Tensor on the host (standard library only:
always), numpy, torch on the CPU (where torch is installed), and, where a GPU and cfx's CUDA
executors are present, cfx.Tensor, torch and CuPy arrays on the device. A kind that cannot
run here is skipped, with the reason.

Run: python3 -m pytest -q python/tests (README: "From Python"). Without an installed
package, CFX_LIBRARY=build/libcfx.so PYTHONPATH=python picks the build tree's.
"""
import importlib

import pytest

import cfx


def _module(name):
    try:
        return importlib.import_module(name)
    except Exception:
        return None


def cuda_ready():
    """(True, "") where cfx can run on a CUDA device here, else (False, why)."""
    ok, why = cfx.backends()["cuda-persistent"]
    return ok, why


class Kind:
    """One kind of array: how a test makes one from a nested list and reads one back."""

    def __init__(self, name, framework, device):
        self.name = name
        self.framework = framework # what results="auto" gives back
        self.device = device       # None: the host

    def __repr__(self):
        return self.name

    def array(self, values, dtype):
        if self.framework == "tensor":
            return cfx.tensor(values, dtype, device=self.device)
        if self.framework == "numpy":
            import numpy as np
            return np.array(values, dtype=_NP[dtype])
        if self.framework == "torch":
            import torch
            return torch.tensor(values, dtype=getattr(torch, _NP[dtype]),
                                device="cpu" if self.device is None else self.device)
        if self.framework == "cupy":
            import cupy
            return cupy.array(values, dtype=_NP[dtype])
        raise AssertionError(self.framework)

    def tolist(self, a):
        if self.framework == "tensor":
            return a.tolist()
        if self.framework == "torch":
            return a.cpu().tolist()
        if self.framework == "cupy":
            return a.get().tolist()
        return a.tolist()

    def is_native(self, a):
        """True when a is an array of this kind, where this kind keeps it."""
        top = type(a).__module__.split(".")[0]
        want = {"tensor": "cfx"}.get(self.framework, self.framework)
        if top != want:
            return False
        if self.framework == "torch":
            return (a.device.type == "cuda") == (self.device is not None)
        if self.framework == "tensor":
            return (a.device_id is None) == (self.device is None)
        return True


_NP = {"f32": "float32", "f64": "float64", "i32": "int32", "i64": "int64", "bool": "bool"}


def _kinds():
    kinds = [("tensor", None, None), ("numpy", None, "numpy"), ("torch", None, "torch"),
             ("tensor", "cuda:0", "gpu"), ("torch", "cuda:0", "gpu-torch"),
             ("cupy", "cuda:0", "gpu-cupy")]
    params = []
    for framework, device, need in kinds:
        name = framework + ("-cuda" if device else "")
        marks = []
        if need in ("numpy", "torch") and _module(need) is None:
            marks.append(pytest.mark.skip(reason="%s is not installed" % need))
        if device is not None:
            marks.append(pytest.mark.gpu)
            ok, why = cuda_ready()
            if not ok:
                marks.append(pytest.mark.skip(reason="no GPU for cfx: %s" % why))
            elif need == "gpu-torch" and not (_module("torch") and _module("torch").cuda.is_available()):
                marks.append(pytest.mark.skip(reason="torch with CUDA is not installed"))
            elif need == "gpu-cupy" and _module("cupy") is None:
                marks.append(pytest.mark.skip(reason="cupy is not installed"))
        params.append(pytest.param(Kind(name, framework, device), id=name, marks=marks))
    return params


@pytest.fixture(params=_kinds())
def xp(request):
    return request.param


@pytest.fixture
def np():
    return pytest.importorskip("numpy")


class _RunBoundSpy:
    """libcfx with each cfx_run_bound noted (its input and result addresses and device flag)
    before the real one runs; every other function is the real library's."""

    def __init__(self, real, calls):
        self._real = real
        self._calls = calls

    def __getattr__(self, name):
        return getattr(self._real, name)

    def cfx_run_bound(self, e, ins, outs, flags, iterations):
        import ctypes
        from cfx import _lib

        def buffer(a): # with BOUND_INDIRECT an entry is the address of the buffer's pointer
            if a is None or not flags & _lib.BOUND_INDIRECT:
                return a
            return ctypes.c_void_p.from_address(a).value
        self._calls.append(([buffer(a) for a in ins], [buffer(a) for a in outs],
                            flags & _lib.BOUND_DEVICE))
        return self._real.cfx_run_bound(e, ins, outs, flags, iterations)


@pytest.fixture
def run_bound(monkeypatch):
    """A function of a graph giving {input or result name: (device flag, address)} of what its
    last run was handed through cfx_run_bound (None: left unbound)."""
    from cfx import _core
    calls = []
    monkeypatch.setattr(_core, "lib", _RunBoundSpy(_core.lib, calls))

    def last(g):
        ins, outs, device = calls[-1]
        found = {p.name: (device, a) for p, a in zip(g.inputs, ins)}
        found.update({p.name: (device, a) for p, a in zip(g.results, outs)})
        return found
    return last


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device and cfx's CUDA executors")
