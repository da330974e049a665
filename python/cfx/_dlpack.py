"""_dlpack.py: arrays in and out without a copy.

In: anything that speaks DLPack (__dlpack__, __dlpack_device__: numpy, torch, JAX, CuPy) or
the buffer protocol (numpy, array.array, bytearray, memoryview), read in place: the address
of its first element, its dtype and shape, where it lives. Python scalars and nested lists,
which have no memory to point at, are packed into a small ctypes buffer.

Out: cfx.Tensor, an array that cfx allocated (host or CUDA memory) and that other
frameworks take in place through DLPack (torch.from_dlpack, np.from_dlpack,
jax.dlpack.from_dlpack, cupy.from_dlpack) or, on the host, numpy's __array_interface__.

The DLPack structs are written here with ctypes (dlpack.h 1.0: DLManagedTensor, and
DLManagedTensorVersioned with its flags). An imported capsule is not renamed to
"used_dltensor": it is kept alive for as long as the memory is in use, and its producer's
destructor frees the tensor when it goes, as the protocol allows.
"""
import ctypes
import itertools
import numbers
import sys
import struct
import threading
import weakref

from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_int, c_int32, c_int64, c_ssize_t,
                    c_uint8, c_uint16, c_uint32, c_uint64, c_void_p, py_object)

from . import _lib

# ---- the structs of dlpack.h --------------------------------------------------------------

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
KDL_INT, KDL_UINT, KDL_FLOAT, KDL_BFLOAT, KDL_COMPLEX, KDL_BOOL = 0, 1, 2, 4, 5, 6
FLAG_READ_ONLY = 1


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32),
                ("dtype", DLDataType), ("shape", POINTER(c_int64)),
                ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class DLManagedTensor(Structure):
    pass


DELETER = CFUNCTYPE(None, POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p),
                            ("deleter", DELETER)]


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(Structure):
    pass


DELETER_V = CFUNCTYPE(None, POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [("version", DLPackVersion), ("manager_ctx", c_void_p),
                                     ("deleter", DELETER_V), ("flags", c_uint64),
                                     ("dl_tensor", DLTensor)]

# cfx dtype <-> DLPack (code, bits), numpy's typestr and the buffer protocol's format
DL_OF = {"f32": (KDL_FLOAT, 32), "f64": (KDL_FLOAT, 64), "i32": (KDL_INT, 32),
         "i64": (KDL_INT, 64), "bool": (KDL_BOOL, 8)}
FROM_DL = {v: k for k, v in DL_OF.items()}
TYPESTR = {"f32": "<f4", "f64": "<f8", "i32": "<i4", "i64": "<i8", "bool": "|b1"}
FORMAT = {"f32": "f", "f64": "d", "i32": "i", "i64": "q", "bool": "?"}
CTYPE = {"f32": ctypes.c_float, "f64": ctypes.c_double, "i32": ctypes.c_int32,
         "i64": ctypes.c_int64, "bool": ctypes.c_uint8}
_DL_CODE_NAMES = {KDL_INT: "int", KDL_UINT: "uint", KDL_FLOAT: "float", KDL_BFLOAT: "bfloat",
                  KDL_COMPLEX: "complex", KDL_BOOL: "bool"}


def dl_dtype_name(code, bits, lanes=1):
    """cfx's name for a DLPack dtype, or a descriptive one (uint8, float16) for the others."""
    if lanes == 1 and (code, bits) in FROM_DL:
        return FROM_DL[(code, bits)]
    name = "%s%d" % (_DL_CODE_NAMES.get(code, "code%d_" % code), bits)
    return name if lanes == 1 else "%sx%d" % (name, lanes)


def shape_str(dtype, shape):
    """`f32[2, 3]`, or `i32` for a scalar, as cfx writes types."""
    return "%s[%s]" % (dtype, ", ".join(str(d) for d in shape)) if shape else dtype


def count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


# ---- the C API of CPython that ctypes leaves out: capsules and buffers -----------------------

_api = ctypes.pythonapi
_capsule_get_pointer = ctypes.PYFUNCTYPE(c_void_p, py_object, c_char_p)(
    ("PyCapsule_GetPointer", _api))
_capsule_is_valid = ctypes.PYFUNCTYPE(c_int, py_object, c_char_p)(("PyCapsule_IsValid", _api))
# the destructor sees a capsule being freed: raw pointers, never a new reference to it
_capsule_is_valid_raw = ctypes.PYFUNCTYPE(c_int, c_void_p, c_char_p)(("PyCapsule_IsValid", _api))
_capsule_get_pointer_raw = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(
    ("PyCapsule_GetPointer", _api))
CAPSULE_DESTRUCTOR = CFUNCTYPE(None, c_void_p)
_capsule_new = ctypes.PYFUNCTYPE(py_object, c_void_p, c_void_p, CAPSULE_DESTRUCTOR)(
    ("PyCapsule_New", _api))

# PyCapsule keeps the name's pointer, not a copy: these buffers live as long as the module
_NAME = ctypes.create_string_buffer(b"dltensor")
_NAME_V = ctypes.create_string_buffer(b"dltensor_versioned")


class _PyBuffer(Structure):
    _fields_ = [("buf", c_void_p), ("obj", c_void_p), ("len", c_ssize_t),
                ("itemsize", c_ssize_t), ("readonly", c_int), ("ndim", c_int),
                ("format", c_char_p), ("shape", POINTER(c_ssize_t)),
                ("strides", POINTER(c_ssize_t)), ("suboffsets", POINTER(c_ssize_t)),
                ("internal", c_void_p)]


_get_buffer = ctypes.PYFUNCTYPE(c_int, py_object, POINTER(_PyBuffer), c_int)(
    ("PyObject_GetBuffer", _api))
_release_buffer = ctypes.PYFUNCTYPE(None, POINTER(_PyBuffer))(("PyBuffer_Release", _api))
_PYBUF_C_CONTIGUOUS_FORMAT = 0x38 | 0x4


class _HeldBuffer:
    """A buffer export held open (the exporter keeps its memory in place) until released."""

    def __init__(self, obj):
        self.view = _PyBuffer()
        _get_buffer(obj, ctypes.byref(self.view), _PYBUF_C_CONTIGUOUS_FORMAT)
        self.held = True

    def release(self):
        if self.held:
            self.held = False
            _release_buffer(ctypes.byref(self.view))

    def __del__(self):
        try:
            self.release()
        except Exception:
            pass


# ---- cfx.Tensor ---------------------------------------------------------------------------

class Tensor:
    """An array in memory that cfx allocated, on the host or on a CUDA device.

    Runs return their results as Tensors when asked for results="tensor" (and frameworks
    take them without a copy: ``torch.from_dlpack(t)``, ``np.asarray(t)``). A Tensor has
    ``dtype`` (``"f32"``...), ``shape``, ``device`` (``"cpu"`` or ``"cuda:N"``),
    ``data_ptr`` and ``nbytes``; ``tolist()`` and ``item()`` read it (from a device, through
    a copy to the host)."""

    __slots__ = ("dtype", "shape", "data_ptr", "nbytes", "device_id", "readonly", "_owner",
                 "_free", "__weakref__")

    def __init__(self, dtype, shape, data_ptr, device_id=None, owner=None, readonly=False):
        """A Tensor over memory that `owner` keeps alive (a view: no copy, no free)."""
        if dtype not in _lib.DTYPE_SIZE:
            raise TypeError("unknown dtype %r (one of %s)" % (dtype, ", ".join(_lib.DTYPES)))
        self.dtype = dtype
        self.shape = tuple(int(d) for d in shape)
        self.nbytes = count(self.shape) * _lib.DTYPE_SIZE[dtype]
        self.data_ptr = int(data_ptr or 0)
        self.device_id = device_id
        self.readonly = readonly
        self._owner = owner
        self._free = None

    @classmethod
    def empty(cls, dtype, shape, device=None):
        """A new Tensor, zero-filled on the host; on a CUDA device (device=N or "cuda:N")
        uninitialized memory from cudaMalloc, freed when the Tensor goes."""
        device_id = parse_device(device)
        size = count(shape) * _lib.DTYPE_SIZE[dtype]
        if device_id is None:
            # 64 bytes extra, so the first element is 64-byte aligned whatever malloc gives
            raw = (ctypes.c_char * (size + 64))()
            address = (ctypes.addressof(raw) + 63) & ~63
            return cls(dtype, shape, address, None, raw)
        from . import _cuda
        rt = _cuda.runtime()
        with rt.on_device(device_id):
            address = rt.malloc(size)
        t = cls(dtype, shape, address, device_id)
        t._free = weakref.finalize(t, rt.free_quietly, address, device_id)
        t._free.atexit = False # the CUDA runtime tears itself down at exit
        return t

    @property
    def device(self):
        return "cpu" if self.device_id is None else "cuda:%d" % self.device_id

    @property
    def ndim(self):
        return len(self.shape)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __dlpack_device__(self):
        return (KDL_CPU, 0) if self.device_id is None else (KDL_CUDA, self.device_id)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        # stream: the consumer's. A Tensor's contents are complete once the run that wrote
        # them has ended (a run waits for its stream), so there is nothing to order.
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError("cfx.Tensor on %s cannot be exported to device %r"
                              % (self.device, dl_device))
        if copy:
            raise BufferError("cfx.Tensor exports its memory in place; copy=True is not supported")
        versioned = max_version is not None and tuple(max_version)[:1] >= (1,)
        return _export(self, versioned)

    @property
    def __array_interface__(self):
        if self.device_id is not None:
            raise AttributeError("a cfx.Tensor on %s has no host memory for numpy: use "
                                 "to_host() first" % self.device)
        return {"shape": self.shape, "typestr": TYPESTR[self.dtype],
                "data": (self.data_ptr, self.readonly), "version": 3}

    def to_host(self):
        """This Tensor on the host: itself, or a copy of its device memory."""
        if self.device_id is None:
            return self
        from . import _cuda
        host = Tensor.empty(self.dtype, self.shape)
        _cuda.runtime().copy_to_host(host.data_ptr, self.data_ptr, self.nbytes, self.device_id)
        return host

    def memoryview(self):
        """A memoryview of the host memory, shaped and typed (read-only for a read-only view)."""
        if self.device_id is not None:
            raise BufferError("a cfx.Tensor on %s has no host memory: use to_host() first"
                              % self.device)
        if self.nbytes == 0:
            return memoryview(b"").cast("B").cast(FORMAT[self.dtype])
        # from_address keeps nothing alive: the memoryview holds raw, and raw must hold this
        # Tensor (and so its memory), or a view of a temporary (t.to_host().memoryview(),
        # which tolist and item make) reads memory the allocator has taken back
        raw = (ctypes.c_char * self.nbytes).from_address(self.data_ptr)
        raw._cfx_tensor = self
        mv = memoryview(raw).cast("B")
        if self.readonly:
            mv = mv.toreadonly()
        return mv.cast(FORMAT[self.dtype], self.shape) if self.shape else mv.cast(FORMAT[self.dtype])

    def tolist(self):
        """Nested lists of Python numbers (a number for a 0-d Tensor)."""
        mv = self.to_host().memoryview()
        return mv[0] if not self.shape else mv.tolist()

    def item(self):
        if count(self.shape) != 1:
            raise ValueError("item() of a tensor with %d elements" % count(self.shape))
        return self.to_host().memoryview().cast("B").cast(FORMAT[self.dtype])[0]

    def __int__(self):
        return int(self.item())

    def __float__(self):
        return float(self.item())

    def __bool__(self):
        return bool(self.item())

    def __repr__(self):
        try:
            values = self.tolist() if self.nbytes <= 256 else "..."
        except Exception as e: # a device that went away, say
            values = "(%s)" % e
        return "cfx.Tensor(%s, %s, %s)" % (shape_str(self.dtype, self.shape), self.device, values)


def parse_device(device):
    """None for the host; the CUDA device number for N, "cuda", "cuda:N" or a torch.device."""
    if device is None or device == "cpu":
        return None
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    text = str(device)
    if text == "cuda":
        return 0
    if text.startswith("cuda:") and text[5:].isdigit():
        return int(text[5:])
    if text == "cpu":
        return None
    raise ValueError("unknown device %r (cpu, cuda or cuda:N)" % (device,))


# ---- exporting: a Tensor as a DLPack capsule ---------------------------------------------------

_exports = {} # manager_ctx -> (tensor, managed struct, shape array)
_export_ids = itertools.count(1)
_exports_lock = threading.Lock()


def _drop(key):
    try:
        with _exports_lock:
            _exports.pop(key, None)
    except Exception: # interpreter shutdown
        pass


@DELETER
def _deleter(managed):
    _drop(managed.contents.manager_ctx)


@DELETER_V
def _deleter_v(managed):
    _drop(managed.contents.manager_ctx)


@CAPSULE_DESTRUCTOR
def _capsule_destructor(capsule):
    # A capsule that no consumer took still owns its tensor (a consumer renames it)
    try:
        if _capsule_is_valid_raw(capsule, _NAME):
            p = _capsule_get_pointer_raw(capsule, _NAME)
            _drop(ctypes.cast(p, POINTER(DLManagedTensor)).contents.manager_ctx)
        elif _capsule_is_valid_raw(capsule, _NAME_V):
            p = _capsule_get_pointer_raw(capsule, _NAME_V)
            _drop(ctypes.cast(p, POINTER(DLManagedTensorVersioned)).contents.manager_ctx)
    except Exception:
        pass


def _export(t, versioned):
    ndim = len(t.shape)
    shape = (c_int64 * max(ndim, 1))(*t.shape)
    key = next(_export_ids)
    managed = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    dl = managed.dl_tensor
    dl.data = t.data_ptr or None
    dl.device = DLDevice(*t.__dlpack_device__())
    dl.ndim = ndim
    code, bits = DL_OF[t.dtype]
    dl.dtype = DLDataType(code, bits, 1)
    dl.shape = ctypes.cast(shape, POINTER(c_int64))
    dl.strides = None # compact row-major
    dl.byte_offset = 0
    managed.manager_ctx = key
    if versioned:
        managed.version = DLPackVersion(1, 0)
        managed.deleter = _deleter_v
        managed.flags = FLAG_READ_ONLY if t.readonly else 0
    else:
        if t.readonly:
            raise BufferError("a read-only cfx.Tensor can only be exported with DLPack 1.0 "
                              "(max_version=(1, 0)), which can say so")
        managed.deleter = _deleter
    with _exports_lock:
        _exports[key] = (t, managed, shape)
    return _capsule_new(ctypes.addressof(managed), ctypes.addressof(_NAME_V if versioned else _NAME),
                        _capsule_destructor)


# ---- importing: what an input or a kernel's result points at ------------------------------------

HOST, DEVICE, MANAGED = "host", "device", "managed"


class View:
    """Memory of one array: its dtype (cfx's name, or a description such as "uint8"), shape,
    address, where it lives (HOST, DEVICE or MANAGED) and on which device, and what must stay
    alive while it is used."""

    __slots__ = ("dtype", "shape", "address", "where", "device_id", "keep", "readonly")

    def __init__(self, dtype, shape, address, where, device_id, keep, readonly=False):
        self.dtype = dtype
        self.shape = tuple(shape)
        self.address = address
        self.where = where
        self.device_id = device_id
        self.keep = keep
        self.readonly = readonly

    def release(self):
        keep, self.keep = self.keep, None
        if isinstance(keep, _HeldBuffer):
            keep.release()


def dlpack_device(obj):
    """(where, device id) of an object with __dlpack_device__; raises TypeError for a device
    cfx cannot use."""
    kind, device_id = obj.__dlpack_device__()
    kind, device_id = int(kind), int(device_id)
    if kind in (KDL_CPU, KDL_CUDA_HOST):
        return HOST, None
    if kind == KDL_CUDA:
        return DEVICE, device_id
    if kind == KDL_CUDA_MANAGED:
        return MANAGED, device_id
    raise TypeError("DLPack device type %d (neither the host nor CUDA)" % kind)


def _c_contiguous(shape, strides):
    want = 1
    for d, s in zip(reversed(shape), reversed(strides)):
        if d != 1 and s != want:
            return False
        want *= d
    return True


def from_dlpack(obj, stream=None):
    """A View of an object that speaks DLPack. `stream` is the CUDA stream the memory will be
    used on (for a device array: the producer orders its pending work before it)."""
    if isinstance(obj, Tensor):
        where = HOST if obj.device_id is None else DEVICE
        return View(obj.dtype, obj.shape, obj.data_ptr, where, obj.device_id, obj, obj.readonly)
    where, device_id = dlpack_device(obj)
    kwargs = {"stream": stream} if where != HOST and stream is not None else {}
    try:
        capsule = obj.__dlpack__(max_version=(1, 0), **kwargs)
    except TypeError: # a producer older than DLPack 1.0
        capsule = obj.__dlpack__(**kwargs)
    if _capsule_is_valid(capsule, _NAME_V.value):
        managed = ctypes.cast(_capsule_get_pointer(capsule, _NAME_V.value),
                              POINTER(DLManagedTensorVersioned)).contents
        readonly = bool(managed.flags & FLAG_READ_ONLY)
    elif _capsule_is_valid(capsule, _NAME.value):
        managed = ctypes.cast(_capsule_get_pointer(capsule, _NAME.value),
                              POINTER(DLManagedTensor)).contents
        readonly = False
    else:
        raise TypeError("__dlpack__ gave something that is not a DLPack capsule")
    dl = managed.dl_tensor
    shape = tuple(dl.shape[i] for i in range(dl.ndim))
    if dl.strides and not _c_contiguous(shape, [dl.strides[i] for i in range(dl.ndim)]):
        raise ValueError("is not contiguous in memory (strides %s); pass a contiguous copy "
                         "(x.contiguous(), np.ascontiguousarray(x))"
                         % (tuple(dl.strides[i] for i in range(dl.ndim)),))
    dtype = dl_dtype_name(dl.dtype.code, dl.dtype.bits, dl.dtype.lanes)
    address = (dl.data or 0) + dl.byte_offset
    return View(dtype, shape, address, where, device_id, capsule, readonly)


_FORMAT_DTYPE = {"f": "f32", "d": "f64", "?": "bool"}


def _format_dtype(fmt, itemsize):
    code = fmt.lstrip("@=<")
    if fmt[:1] in (">", "!") and sys.byteorder == "little":
        return "big-endian " + code
    if code in _FORMAT_DTYPE and itemsize == _lib.DTYPE_SIZE[_FORMAT_DTYPE[code]]:
        return _FORMAT_DTYPE[code]
    if code in "bhilqn" and len(code) == 1:
        return {1: "int8", 2: "int16", 4: "i32", 8: "i64"}.get(itemsize, "int%d" % (8 * itemsize))
    if code in "BHILQN" and len(code) == 1:
        return "uint%d" % (8 * itemsize)
    if code == "e":
        return "float16"
    return "format %r" % fmt


def from_buffer(obj):
    """A View of an object that exports the buffer protocol (host memory)."""
    mv = memoryview(obj)
    if not mv.c_contiguous:
        raise ValueError("is not contiguous in memory; pass a contiguous copy")
    dtype = _format_dtype(mv.format, mv.itemsize)
    held = _HeldBuffer(obj)
    return View(dtype, mv.shape, held.view.buf or 0, HOST, None, held, mv.readonly)


# ---- Python values: scalars and nested lists, packed ------------------------------------------

def _is_bool(v):
    return isinstance(v, bool) or type(v).__name__ in ("bool_", "bool")


def check_scalar(v, dtype):
    """v as the Python number to store as dtype; TypeError or ValueError saying why not."""
    if dtype == "bool":
        if _is_bool(v):
            return 1 if v else 0
        raise TypeError("wants bool; got %s" % type(v).__name__)
    if _is_bool(v):
        raise TypeError("wants %s; got bool" % dtype)
    if dtype in ("i32", "i64"):
        if not isinstance(v, numbers.Integral):
            raise TypeError("wants %s; got %s %r" % (dtype, type(v).__name__, v))
        v = int(v)
        bits = 32 if dtype == "i32" else 64
        if not -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
            raise ValueError("%d does not fit in %s" % (v, dtype))
        return v
    if isinstance(v, numbers.Real):
        v = float(v)
        if dtype == "f32":
            # as the command line: a finite number that rounds to inf is refused, inf is not
            try:
                struct.pack("<f", v)
            except OverflowError:
                raise ValueError("%r is out of range for f32" % v) from None
        return v
    raise TypeError("wants %s; got %s" % (dtype, type(v).__name__))


def _flatten(v, depth, out):
    """Appends the leaves of nested lists to out; returns the shape."""
    if isinstance(v, (list, tuple)):
        shapes = [_flatten(x, depth + 1, out) for x in v]
        inner = shapes[0] if shapes else ()
        if any(s != inner for s in shapes):
            raise ValueError("is a ragged nested list (rows of different shapes)")
        return (len(v),) + inner
    out.append(v)
    return ()


def is_value(obj):
    """True for what pack() takes: Python numbers and nested lists or tuples of them."""
    return isinstance(obj, (bool, int, float, list, tuple)) or _is_bool(obj)


def pack(obj, dtype, shape=None):
    """A View over a new buffer holding a Python number or nested list as dtype. With `shape`,
    the value must have that shape (a number: shape ())."""
    flat = []
    got = _flatten(obj, 0, flat)
    if shape is not None and got != tuple(shape):
        what = "a Python number" if not got else "a nested list of shape %s" % (list(got),)
        raise ValueError("wants %s; got %s" % (shape_str(dtype, shape), what))
    values = [check_scalar(v, dtype) for v in flat]
    buf = (CTYPE[dtype] * max(len(values), 1))(*values)
    return View(dtype, got, ctypes.addressof(buf), HOST, None, buf)


def host_view(t, readonly):
    """A value over the host memory of a cfx_tensor (a kernel's argument or result) for
    Python code: a numpy array where numpy is installed, else a cfx.Tensor; either is valid
    only during the call."""
    dtype, shape = _lib.type_of(t.type)
    view = Tensor(dtype, shape, t.data or 0, None, None, readonly)
    np = sys.modules.get("numpy")
    if np is None:
        try:
            import numpy as np
        except ImportError:
            return view
    return np.asarray(view)


def import_any(obj, stream=None):
    """A View of an array-like (DLPack first, then the buffer protocol); TypeError for an
    object that is neither."""
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__") and not isinstance(obj, type):
        try:
            return from_dlpack(obj, stream)
        except BufferError as e:
            # numpy before 2 refuses to export read-only arrays (and bools) through DLPack;
            # its buffer protocol has no such gap
            try:
                memoryview(obj)
            except TypeError:
                raise e from None
            return from_buffer(obj)
    try:
        memoryview(obj)
    except TypeError:
        raise TypeError("cannot read a %s: it has neither __dlpack__ nor the buffer protocol"
                        % type(obj).__name__) from None
    return from_buffer(obj)


def copy_into(address, nbytes, view):
    """Copies a host View into host memory at address."""
    ctypes.memmove(address, view.address, nbytes)


__all__ = ["Tensor", "View", "import_any", "pack", "is_value", "count", "shape_str",
           "parse_device", "host_view", "copy_into", "dl_dtype_name", "HOST", "DEVICE",
           "MANAGED"]
