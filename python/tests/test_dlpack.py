"""cfx.Tensor and DLPack: exported in place to numpy (and read back through the alias),
versioned and unversioned capsules, capsules that nobody takes, and imports of foreign
capsules."""
import ctypes
import gc
import weakref

import pytest

import cfx
from cfx import _dlpack


def test_tensor_basics():
    t = cfx.tensor([[1, 2, 3], [4, 5, 6]], "i32")
    assert (t.dtype, t.shape, t.device, t.nbytes, t.ndim, len(t)) == ("i32", (2, 3), "cpu", 24, 2, 2)
    assert t.tolist() == [[1, 2, 3], [4, 5, 6]]
    assert t.data_ptr % 64 == 0
    assert cfx.tensor(True, "bool").tolist() is True
    assert cfx.tensor(2.5, "f64").item() == 2.5
    assert int(cfx.tensor([7], "i64")) == 7 and float(cfx.tensor(0.5, "f32")) == 0.5
    assert bool(cfx.tensor(False, "bool")) is False
    with pytest.raises(ValueError, match="item\\(\\) of a tensor with 2 elements"):
        int(cfx.tensor([1, 2], "i32"))
    assert repr(cfx.tensor([1.5], "f32")) == "cfx.Tensor(f32[1], cpu, [1.5])"
    with pytest.raises(TypeError, match="needs a dtype"):
        cfx.tensor([1, 2])
    with pytest.raises(ValueError, match="ragged"):
        cfx.tensor([[1, 2], [3]], "i32")
    with pytest.raises(ValueError, match="unknown device"):
        cfx.Tensor.empty("f32", (2,), "tpu")


def test_numpy_aliases_a_tensor(np):
    t = cfx.tensor([1, 2, 3, 4], "f32")
    for a in (np.from_dlpack(t), np.asarray(t)):
        assert a.dtype == np.float32 and a.tolist() == [1, 2, 3, 4]
        assert a.__array_interface__["data"][0] == t.data_ptr
    a = np.from_dlpack(t)
    a[2] = 30 # written through numpy, seen through the tensor: one piece of memory
    assert t.tolist() == [1, 2, 30, 4]
    del t
    gc.collect()
    assert a.tolist() == [1, 2, 30, 4] # numpy keeps the tensor's memory alive


def test_memoryview_keeps_its_memory():
    # a view of a temporary (t.to_host().memoryview(), as tolist and item make for a Tensor
    # on a device) must not outlive the memory it reads
    t = cfx.tensor([1, 2, 3], "i32")
    owner = weakref.ref(t._owner)
    mv = t.memoryview()
    del t
    gc.collect()
    assert owner() is not None and mv.tolist() == [1, 2, 3]
    del mv
    gc.collect()
    assert owner() is None # and it goes with the view


def test_numpy_in_tensor_out_roundtrip(np):
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    t = cfx.tensor(x)
    assert t.dtype == "i64" and t.shape == (2, 3) and t.tolist() == x.tolist()
    assert t.data_ptr != x.ctypes.data # cfx.tensor copies
    b = np.array([True, False])
    assert cfx.tensor(b).tolist() == [True, False]
    with pytest.raises(TypeError, match="cfx has no dtype uint8"):
        cfx.tensor(np.zeros(3, np.uint8))


def _capsule_name(capsule):
    get = ctypes.pythonapi.PyCapsule_GetName
    get.restype, get.argtypes = ctypes.c_char_p, [ctypes.py_object]
    return get(capsule)


def test_capsules_versioned_and_not():
    t = cfx.tensor([1.0, 2.0], "f64")
    gc.collect()
    before = len(_dlpack._exports)
    old = t.__dlpack__()
    new = t.__dlpack__(max_version=(1, 2))
    assert _capsule_name(old) == b"dltensor" and _capsule_name(new) == b"dltensor_versioned"
    assert len(_dlpack._exports) == before + 2
    # read back through the importer: the same memory, dtype and shape
    for cap in (old, new):
        v = _dlpack.from_dlpack(_Producer(cap, t.__dlpack_device__()))
        assert (v.dtype, v.shape, v.address, v.where) == ("f64", (2,), t.data_ptr, "host")
    # capsules nobody took free their tensor when they go
    del old, new, v, cap
    gc.collect()
    assert len(_dlpack._exports) == before
    assert t.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))


class _Producer:
    """An object that hands out one given capsule, as a foreign producer would."""

    def __init__(self, capsule, device):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, stream=None, max_version=None):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def test_read_only_tensor_needs_versioned_dlpack():
    t = cfx.Tensor("i32", (1,), cfx.tensor([7], "i32").data_ptr, readonly=True)
    with pytest.raises(BufferError, match="read-only"):
        t.__dlpack__()
    cap = t.__dlpack__(max_version=(1, 0))
    v = _dlpack.from_dlpack(_Producer(cap, (1, 0)))
    assert v.readonly
    del v, cap


def test_consumed_capsule_is_freed_by_the_consumer(np):
    t = cfx.tensor([1, 2, 3], "i32")
    gc.collect()
    before = len(_dlpack._exports)
    a = np.from_dlpack(t)
    assert len(_dlpack._exports) == before + 1
    del a
    gc.collect()
    assert len(_dlpack._exports) == before # numpy called the deleter


def test_foreign_devices_are_refused():
    class Rocm:
        def __dlpack__(self, stream=None):
            raise AssertionError("not asked")

        def __dlpack_device__(self):
            return (10, 0)

    g = cfx.compile("graph f(x: f32) -> (y: f32) {\n  y = x\n}\n").entry
    with pytest.raises(TypeError, match="f: input 'x' lives on DLPack device type 10"):
        g(x=Rocm())
