"""_lib.py: libcfx through ctypes: finding the library, the C types of cfx.h and the
prototype of every function the package calls.

The library is looked for, in order: the path in $CFX_LIBRARY; libcfx.so beside this file
(where `pip install ./python` puts it); libcfx by name (the system's library path). ctypes
releases the GIL around every call into libcfx, so a run on one thread leaves the others
free, and cfx_cancel from another thread reaches it.
"""
import ctypes
import ctypes.util
import os

from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_int, c_int64, c_size_t,
                    c_void_p)

MAX_RANK = 5 # CFX_TYPE_MAX_RANK: the layout of cfx_type (a struct's size is not asked at run time)


class Type(Structure):
    """cfx_type."""
    _fields_ = [("dtype", c_int), ("rank", c_int), ("dims", c_int64 * MAX_RANK)]


class CTensor(Structure):
    """cfx_tensor: one argument or result handed to an application kernel."""
    _fields_ = [("type", Type), ("data", c_void_p)]


CPU_KERNEL = CFUNCTYPE(c_int, c_void_p, c_int, POINTER(CTensor), c_int, POINTER(CTensor))
CUDA_KERNEL = CFUNCTYPE(c_int, c_void_p, c_void_p, c_int, POINTER(CTensor), c_int,
                        POINTER(CTensor))
PRINT_FN = CFUNCTYPE(None, c_void_p, c_char_p)

_PROTOTYPES = {
    # name: (restype, argtypes)
    "cfx_dtype_name": (c_char_p, [c_int]),
    "cfx_dtype_count": (c_int, []),
    "cfx_dtype_size": (c_int, [c_int]),
    "cfx_status_name": (c_char_p, [c_int]),
    "cfx_status_count": (c_int, []),
    "cfx_context_new": (c_void_p, []),
    "cfx_context_free": (None, [c_void_p]),
    "cfx_register_kernel": (c_int, [c_void_p, c_char_p, c_char_p, CPU_KERNEL, CUDA_KERNEL,
                                    c_void_p, POINTER(c_void_p)]),
    "cfx_register_source": (c_int, [c_void_p, c_char_p, c_char_p, c_int, c_char_p, POINTER(c_void_p)]),
    "cfx_compile_file": (c_void_p, [c_void_p, c_char_p, POINTER(c_void_p)]),
    "cfx_compile_string": (c_void_p, [c_void_p, c_char_p, c_char_p, c_size_t, POINTER(c_void_p)]),
    "cfx_module_free": (None, [c_void_p]),
    "cfx_free": (None, [c_void_p]),
    "cfx_graph_count": (c_int, [c_void_p]),
    "cfx_graph_name": (c_char_p, [c_void_p, c_int]),
    "cfx_graph_find": (c_int, [c_void_p, c_char_p]),
    "cfx_input_count": (c_int, [c_void_p, c_int]),
    "cfx_input_name": (c_char_p, [c_void_p, c_int, c_int]),
    "cfx_input_type": (Type, [c_void_p, c_int, c_int]),
    "cfx_input_default": (c_char_p, [c_void_p, c_int, c_int]),
    "cfx_result_count": (c_int, [c_void_p, c_int]),
    "cfx_result_name": (c_char_p, [c_void_p, c_int, c_int]),
    "cfx_result_type": (Type, [c_void_p, c_int, c_int]),
    "cfx_dump": (c_void_p, [c_void_p, c_int]),
    "cfx_backend_name": (c_char_p, [c_int]),
    "cfx_backend_count": (c_int, []),
    "cfx_backend_available": (c_int, [c_int, c_char_p, c_size_t]),
    "cfx_exec_new": (c_void_p, [c_void_p, c_int, c_int, POINTER(c_void_p)]),
    "cfx_exec_free": (None, [c_void_p]),
    "cfx_exec_backend": (c_int, [c_void_p]),
    "cfx_exec_backend_detail": (c_char_p, [c_void_p]),
    "cfx_bind": (c_int, [c_void_p, c_char_p, c_void_p, c_size_t]),
    "cfx_bind_device": (c_int, [c_void_p, c_char_p, c_void_p, c_size_t]),
    "cfx_unbind": (c_int, [c_void_p, c_char_p]),
    "cfx_set_max_iters": (c_int, [c_void_p, c_int64]),
    "cfx_set_stream": (None, [c_void_p, c_void_p]),
    "cfx_set_print": (None, [c_void_p, PRINT_FN, c_void_p]),
    "cfx_set_trace": (c_int, [c_void_p, c_char_p]),
    "cfx_set_persistent_mode": (c_int, [c_void_p, c_int]),
    "cfx_set_option": (c_int, [c_void_p, c_int, c_int64]),
    "cfx_run": (c_int, [c_void_p]),
    "cfx_run_bound": (c_int, [c_void_p, c_void_p, c_void_p, c_int, c_void_p]),
    "cfx_run_async": (c_int, [c_void_p]),
    "cfx_wait": (c_int, [c_void_p]),
    "cfx_prepare": (c_int, [c_void_p]),
    "cfx_cancel": (None, [c_void_p]),
    "cfx_exec_status": (c_int, [c_void_p]),
    "cfx_exec_message": (c_char_p, [c_void_p]),
    "cfx_exec_position": (None, [c_void_p, POINTER(c_int), POINTER(c_int)]),
    "cfx_exec_error": (c_char_p, [c_void_p]),
    "cfx_exec_iterations": (c_int64, [c_void_p]),
    "cfx_exec_hang_report": (c_char_p, [c_void_p]),
}


def _candidates():
    env = os.environ.get("CFX_LIBRARY")
    if env:
        return [env] # named: nowhere else, so a wrong path is an error and not a surprise
    here = os.path.dirname(os.path.abspath(__file__))
    found = [os.path.join(here, "libcfx.so")]
    by_name = ctypes.util.find_library("cfx")
    found += [by_name] if by_name else []
    found += ["libcfx.so.1", "libcfx.so"]
    return found


def _load():
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            errors.append("%s: no such file" % path)
            continue
        try:
            # global, so that a kernel's library may call cfx.h's helpers (cfx_type_count)
            # without linking libcfx itself
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            errors.append(str(e))
            continue
        missing = [name for name in _PROTOTYPES if not hasattr(lib, name)]
        if missing:
            errors.append("%s is an older libcfx (it has no %s)" % (path, ", ".join(missing)))
            continue
        for name, (restype, argtypes) in _PROTOTYPES.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        return lib, path
    raise ImportError("cfx: cannot load libcfx (%s); install the package with "
                      "`python3 -m pip install ./python`, or name the library with "
                      "CFX_LIBRARY=/path/to/libcfx.so" % "; ".join(errors))


lib, path = _load()


def _names(count, name):
    return tuple(name(i).decode() for i in range(count()))


# The enums of cfx.h as the library names them, in the enum's order (the index is the value):
# cfx_dtype with each one's element size, cfx_status, cfx_backend.
DTYPES = _names(lib.cfx_dtype_count, lib.cfx_dtype_name)
DTYPE_SIZE = {name: lib.cfx_dtype_size(i) for i, name in enumerate(DTYPES)}
DTYPE_CODE = {name: i for i, name in enumerate(DTYPES)}
STATUSES = _names(lib.cfx_status_count, lib.cfx_status_name)
OK, ERROR = STATUSES.index("ok"), STATUSES.index("error")
BACKENDS = _names(lib.cfx_backend_count, lib.cfx_backend_name)
BACKEND_CODE = {name: i for i, name in enumerate(BACKENDS)}


def take_string(ptr):
    """The text of a char * that libcfx allocated, which is then freed; "" for NULL."""
    if not ptr:
        return ""
    try:
        return ctypes.string_at(ptr).decode("utf-8", "replace")
    finally:
        lib.cfx_free(ptr)


def text(b):
    """A const char * from libcfx as str ("" for NULL)."""
    return b.decode("utf-8", "replace") if b else ""


def type_of(t):
    """(dtype name, shape tuple) of a cfx_type."""
    rank = max(0, min(t.rank, MAX_RANK))
    dtype = DTYPES[t.dtype] if 0 <= t.dtype < len(DTYPES) else "?"
    return dtype, tuple(int(t.dims[i]) for i in range(rank))
