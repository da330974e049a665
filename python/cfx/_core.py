"""_core.py: compiling, graphs and runs: what `import cfx` offers, over libcfx.

A Module owns a compiled cfx_module; each Graph of it keeps one executor per backend (and
CUDA device), created on first use. A call of a graph names its inputs, checks each one's
dtype and shape against the graph's declaration before anything runs, then hands libcfx the
address of every input and result in one call (cfx_run_bound: bound in place, run, unbound), so
the executor never keeps a pointer into an array the caller may free. The executor's settings
(stream, budget, print hook) are set when they change, not at every call.

Where arrays live decides the run:
- every input on the host (numpy, torch CPU, Python numbers): host buffers, on the backend
  asked for ("auto": cfx picks, cuda-persistent where there is a GPU); cfx copies to and from
  the device itself;
- an input on a CUDA device (torch, CuPy, JAX, cfx.Tensor): a device run, on that device and
  on the caller's stream. Host inputs (a Python number for a step count, say) are copied to a
  device buffer the graph keeps; device inputs and results are bound where they lie.
"""
import collections
import ctypes
import importlib.util
import os
import re
import sys
import threading
import weakref

from . import _dlpack, _lib
from ._dlpack import DEVICE, HOST, Tensor, shape_str
from ._lib import lib

# ---- errors -------------------------------------------------------------------------------

Diagnostic = collections.namedtuple("Diagnostic", "file line col message")
_DIAG = re.compile(r"^(.*?):(\d+):(\d+): error: (.*)$")


class Error(RuntimeError):
    """A failure of cfx that is not a stopped run: a backend that is unavailable or failed,
    misuse of an executor."""


class CompileError(Error):
    """The source did not compile. str() is every diagnostic, each `FILE:LINE:COL: error:
    MESSAGE` with its source line and caret; .diagnostics lists them as (file, line, col,
    message)."""

    def __init__(self, text):
        super().__init__(text.rstrip("\n"))
        self.text = text
        self.diagnostics = []
        for line in text.splitlines():
            m = _DIAG.match(line)
            if m:
                self.diagnostics.append(Diagnostic(m.group(1), int(m.group(2)), int(m.group(3)),
                                                   m.group(4)))


class RunStopped(Error):
    """A run stopped before its end. .status is the status name (assert, index, divide,
    value, limit, cancelled, or kernel: a Python kernel of register_kernel raised, or returned
    a result of the wrong count, shape or dtype; the message says what, and the exception is
    the RunStopped's __cause__); .message the one-line message `FILE:LINE:COL: run stopped:
    STATUS: ...`; .file, .line, .col the position of the statement that stopped it (line 0
    where there is none); .iterations the loop iterations it ran; .hang_report, for a
    cancelled run of cuda-persistent's interpreter, where each block stood and which blocks
    waited at which grid barrier ("" otherwise)."""

    def __init__(self, status, message, file, line, col, iterations, hang_report=""):
        super().__init__(message)
        self.hang_report = hang_report
        self.status = status
        self.message = message
        self.file = file
        self.line = line
        self.col = col
        self.iterations = iterations


# ---- application kernels --------------------------------------------------------------------

class _KernelFailure(threading.local):
    exc = None # the exception a Python kernel raised during this thread's run


_kernel_failure = _KernelFailure()


def _fail_in_kernel(e):
    if _kernel_failure.exc is None:
        _kernel_failure.exc = e
    return 1


def _take_kernel_failure():
    e = _kernel_failure.exc
    if e is not None:
        _kernel_failure.exc = None
    return e


def _function_pointer(f, proto, what):
    """A C function pointer of type proto from a ctypes function (from a loaded library) or
    an address; None for a NULL one."""
    if f is None:
        return ctypes.cast(None, proto)
    if isinstance(f, int) and not isinstance(f, bool):
        return proto(f)
    if isinstance(f, ctypes._CFuncPtr):
        return ctypes.cast(f, proto)
    raise TypeError("%s must be a function of a loaded library (ctypes), its address or None; "
                    "got %s" % (what, type(f).__name__))


class Kernel:
    """An application kernel registered in a Context: graphs compiled with that context call
    it like an op. See Context.register_kernel."""

    def __init__(self, name, signature):
        self.name = name
        self.signature = signature
        self._cpu = None
        self._cuda = None
        self._callbacks = [] # ctypes objects that must live as long as any module using them
        self._ptx = None     # CUDA C: (PTX, lowered name), and a CUfunction per device
        self._functions = {}
        self._launch = (256, None, 0)

    def __repr__(self):
        return "cfx.Kernel(%r, %r)" % (self.name, self.signature)

    # -- a Python function on the cpu backend
    def _python_cpu(self, fn):
        def call(user, nargs, args, nresults, results):
            try:
                values = [_dlpack.host_view(args[i], True) for i in range(nargs)]
                out = fn(*values)
                if nresults == 1 and not isinstance(out, tuple):
                    out = (out,)
                if not isinstance(out, tuple) or len(out) != nresults:
                    raise ValueError("kernel '%s' must return %d result%s, as its signature "
                                     "says" % (self.name, nresults, "s" if nresults > 1 else ""))
                for k in range(nresults):
                    _write_result(self.name, k, results[k], out[k])
                return 0
            except BaseException as e:
                return _fail_in_kernel(e)
        return _lib.CPU_KERNEL(call)

    # -- CUDA C compiled with NVRTC, launched on the run's stream
    def _compile_cuda(self, source, entry, options):
        from . import _cuda
        rt = _cuda.runtime()
        cc = rt.compute_capability(rt.device())
        self._ptx = _cuda.nvrtc().compile(source, self.name, entry, cc, options)

    def prepare(self):
        """Loads a CUDA C kernel into the current device's context (before a run, so that
        nothing is loaded while a stream is being captured)."""
        if self._ptx is None:
            return
        from . import _cuda
        device = _cuda.runtime().device()
        if device not in self._functions:
            self._functions[device] = _cuda.driver().load(*self._ptx)

    def _cuda_launcher(self):
        def call(user, stream, nargs, args, nresults, results):
            try:
                from . import _cuda
                device = _cuda.runtime().device()
                if device not in self._functions:
                    self.prepare()
                pointers = [ctypes.c_void_p(args[i].data) for i in range(nargs)]
                pointers += [ctypes.c_void_p(results[i].data) for i in range(nresults)]
                n = ctypes.c_longlong(_dlpack.count(_lib.type_of(results[0].type)[1]))
                params = (ctypes.c_void_p * (len(pointers) + 1))(
                    *[ctypes.addressof(p) for p in pointers], ctypes.addressof(n))
                block, grid, shared = self._launch
                if grid is None:
                    grid = max(1, (n.value + block - 1) // block)
                elif callable(grid):
                    grid = int(grid(n.value))
                _cuda.driver().launch(self._functions[device], grid, block, shared, stream or 0,
                                      params)
                return 0
            except BaseException as e:
                return _fail_in_kernel(e)
        return _lib.CUDA_KERNEL(call)


def _write_result(kernel, k, t, value):
    """Copies what a Python kernel returned into its result k (host memory)."""
    dtype, shape = _lib.type_of(t.type)
    try:
        view = _dlpack.pack(value, dtype, shape) if _dlpack.is_value(value) else _dlpack.import_any(value)
        if view.where == DEVICE:
            raise ValueError("is on a CUDA device; a cpu kernel returns host arrays")
        if view.dtype != dtype:
            raise TypeError("wants %s; got %s" % (shape_str(dtype, shape), view.dtype))
        if view.shape != shape:
            raise ValueError("wants %s; got shape %s" % (shape_str(dtype, shape), list(view.shape)))
        _dlpack.copy_into(t.data, _dlpack.count(shape) * _lib.DTYPE_SIZE[dtype], view)
        view.release()
    except (TypeError, ValueError) as e:
        raise type(e)("kernel '%s' result %d %s" % (kernel, k, e)) from None


class Context:
    """Where application kernels are registered; graphs compiled with a context may call its
    kernels. cfx.register_kernel and cfx.compile use a default one."""

    def __init__(self):
        self._ptr = lib.cfx_context_new()
        if not self._ptr:
            raise MemoryError("cfx_context_new")
        self.kernels = {}
        self._finalizer = weakref.finalize(self, lib.cfx_context_free, self._ptr)

    def register_kernel(self, name, signature, cpu=None, cuda=None, *, cuda_source=None,
                        entry=None, block=256, grid=None, shared_mem=0, options=(), user=None):
        """Registers `name` with `signature` (the language's type syntax,
        "(f32[4], f32) -> (f32[4])"), so that graphs compiled with this context call it.

        cpu: a Python function, called with the arguments as numpy arrays (read-only; cfx
          Tensors without numpy), returning the result or a tuple of them; or a function of a
          loaded library (ctypes) or its address, of C type cfx_cpu_kernel (cfx.h).
        cuda: a function of a loaded library or its address, of C type cfx_cuda_kernel: it
          enqueues its work on the stream it is given. Or a string: CUDA C source, as
          cuda_source.
        cuda_source: CUDA C compiled with NVRTC. Its kernel, `entry` (default: name), takes
          one pointer per argument then one per result, in the signature's order, then a
          `long long n`, the element count of the first result:
              extern "C" __global__ void scale(const float *x, const float *s, float *y,
                                               long long n)
          It is launched with `block` threads per block and `grid` blocks (default
          ceil(n / block); an int, or a function of n), `shared_mem` bytes of shared memory.
        user: the `void *user` handed to C functions (an int).
        Raises ValueError for a bad name or signature, cfx.Error when CUDA C does not compile.
        """
        if isinstance(cuda, str):
            cuda_source, cuda = cuda, None
        k = Kernel(name, signature)
        if cpu is not None and not isinstance(cpu, (int, ctypes._CFuncPtr)) and callable(cpu):
            k._cpu = k._python_cpu(cpu)
        else:
            k._cpu = _function_pointer(cpu, _lib.CPU_KERNEL, "cpu")
        if cuda_source is not None:
            if cuda is not None:
                raise TypeError("give cuda or cuda_source, not both")
            from . import _cuda
            try:
                k._compile_cuda(cuda_source, entry or name, list(options))
            except _cuda.CudaError as e:
                raise Error(str(e)) from None
            k._launch = (int(block), grid, int(shared_mem))
            k._cuda = k._cuda_launcher()
        else:
            k._cuda = _function_pointer(cuda, _lib.CUDA_KERNEL, "cuda")
        k._callbacks += [k._cpu, k._cuda, cpu, cuda]
        err = ctypes.c_void_p()
        rc = lib.cfx_register_kernel(self._ptr, name.encode(), signature.encode(), k._cpu,
                                     k._cuda, user, ctypes.byref(err))
        if rc != 0:
            raise ValueError(_lib.take_string(err.value) or "cfx_register_kernel failed")
        self.kernels[name] = k
        return k

    def register_source(self, name, signature, source, form="elements"):
        """Registers `name` with `signature` by its source: one function in the C of cfx's
        own op bodies (cfx_register_source in cfx.h), which cuda-persistent's compiled kernel
        calls inline, with no launch, and every other executor runs too. form "elements":
            CFX_HD void name(int64_t lo, int64_t hi, const float *x, ..., float *y, ...)
        writes elements [lo, hi) of every result; form "whole":
            CFX_HD void name(const float *x, ..., float *y, ...)
        computes every result in one call. Needs a C compiler at run time (cc, or CFX_CC).
        Raises ValueError with the compiler's log for a source that does not compile, a
        function of another signature, a name that is taken or no C compiler."""
        forms = {"elements": 1, "whole": 2}
        if form not in forms:
            raise ValueError("form must be 'elements' or 'whole', not %r" % (form,))
        k = Kernel(name, signature)
        err = ctypes.c_void_p()
        rc = lib.cfx_register_source(self._ptr, name.encode(), signature.encode(), forms[form],
                                     source.encode(), ctypes.byref(err))
        if rc != 0:
            raise ValueError(_lib.take_string(err.value) or "cfx_register_source failed")
        self.kernels[name] = k
        return k

    def compile(self, source, filename=None):
        return compile(source, filename=filename, context=self)


_default_context = None


def default_context():
    global _default_context
    if _default_context is None:
        _default_context = Context()
    return _default_context


def register_kernel(name, signature, cpu=None, cuda=None, **options):
    """Context.register_kernel on the default context, which cfx.compile uses."""
    return default_context().register_kernel(name, signature, cpu, cuda, **options)


def register_source(name, signature, source, form="elements"):
    """Context.register_source on the default context, which cfx.compile uses."""
    return default_context().register_source(name, signature, source, form)


# ---- compiling ------------------------------------------------------------------------------

# accumulate=: the cpu executor's CFX_OPTION_ACCUMULATE (cfx.h)
_OPTION_ACCUMULATE = 5
_OPTION_THREADS = 6 # threads=: CFX_OPTION_THREADS
_ACCUMULATE = {"fast": 0, "f64": 1}


def _accumulate_code(value, what):
    """The cfx_accumulate of an accumulate= value (None: the default); ValueError otherwise."""
    if value is None:
        return None
    code = _ACCUMULATE.get(value) if isinstance(value, str) else None
    if code is None:
        raise ValueError("%s: accumulate is 'fast' or 'f64', not %r" % (what, value))
    return code


def compile(source, *, filename=None, context=None, accumulate=None):
    """Compiles a .cfx file or source text into a Module.

    source: a path (str or os.PathLike) or the text itself (str or bytes; a str with a
    newline or a `{`, or "", is text). filename names text in messages (default "<string>").
    accumulate: how the cpu executor's sums, dots and products of reals accumulate, for every
    call of the module's graphs that does not say otherwise: "fast" (f32 in f32 through the
    BLAS, as numpy and PyTorch do) or "f64" (the reference: f32 accumulated in double and
    rounded once); None: $CFX_ACCUMULATE, else "fast" (docs/language.md, "Arithmetic rules").
    The CUDA executors keep their own rule.
    Raises CompileError with every diagnostic, FileNotFoundError for a missing file."""
    _accumulate_code(accumulate, "cfx.compile")
    ctx = context if context is not None else default_context()
    diags = ctypes.c_void_p()
    is_path = isinstance(source, os.PathLike) or (
        isinstance(source, str) and source != "" and "\n" not in source and "{" not in source)
    if is_path:
        path = os.fspath(source)
        if not os.path.exists(path):
            raise FileNotFoundError(2, "No such file", path)
        name = filename or path
        ptr = lib.cfx_compile_file(ctx._ptr, os.fsencode(path), ctypes.byref(diags))
    else:
        data = source.encode() if isinstance(source, str) else bytes(source)
        name = filename or "<string>"
        ptr = lib.cfx_compile_string(ctx._ptr, name.encode(), data, len(data), ctypes.byref(diags))
    if not ptr:
        raise CompileError(_lib.take_string(diags.value) or "%s: compilation failed\n" % name)
    _lib.take_string(diags.value)
    return Module(ptr, name, ctx, accumulate)


def _free_module(ptr, execs):
    for e in execs:
        lib.cfx_exec_free(e)
    execs.clear()
    lib.cfx_module_free(ptr)


class Module:
    """A compiled .cfx file: its graphs by name (.graphs, in the file's order), the entry
    graph (.entry, the first) and graph(name). Calling the module calls its entry graph."""

    def __init__(self, ptr, filename, context, accumulate=None):
        self._ptr = ptr
        self.filename = filename
        self.context = context # its Python kernels must live as long as the module
        self.accumulate = accumulate # the cpu executors' mode, None: $CFX_ACCUMULATE or fast
        self._execs = []       # every executor of every graph, freed before the module
        self._half_inputs = {} # an ONNX model's float16, bfloat16 (held in f32) and narrow integer
                               # inputs (held in i32, i64): {name: the numpy dtypes taken}
        self._known_inputs = {}  # an ONNX model's inputs and outputs of 0 elements, known at
        self._known_results = {} # import (entry graph): {name: Param}
        self._seq_items = {}     # an ONNX model's sequence inputs given item by item, and its sequence
        self._seq_results = {}   # results of items of differing shapes (NAME[0], ...): {name: items}
        self._finalizer = weakref.finalize(self, _free_module, ptr, self._execs)
        self.graphs = collections.OrderedDict()
        for i in range(lib.cfx_graph_count(ptr)):
            g = Graph(self, i)
            self.graphs[g.name] = g

    @property
    def entry(self):
        return next(iter(self.graphs.values()))

    def __call__(self, *args, **kwargs):
        """Runs the entry graph: m(x, n) is m.entry(x, n), options included."""
        return self.entry(*args, **kwargs)

    def graph(self, name=None):
        """The graph called name (the entry graph for None); KeyError naming the graphs."""
        if name is None:
            return self.entry
        try:
            return self.graphs[name]
        except KeyError:
            raise KeyError("%s has no graph '%s' (it has %s)"
                           % (self.filename, name, ", ".join(self.graphs))) from None

    def close(self):
        """Frees the executors and the module now (else when it is collected)."""
        self._finalizer()

    def __repr__(self):
        return "cfx.Module(%r, graphs=[%s])" % (self.filename, ", ".join(self.graphs))


class Param(collections.namedtuple("Param", "name dtype shape")):
    """An input or a result of a graph: its name, dtype ("f32"...) and shape (() for a scalar)."""

    def __str__(self):
        return "%s: %s" % (self.name, shape_str(self.dtype, self.shape))

    @property
    def nbytes(self):
        return _dlpack.count(self.shape) * _lib.DTYPE_SIZE[self.dtype]


class Results(collections.OrderedDict):
    """The results of a run, by name in the graph's order; .iterations (loop iterations the
    run took) and .backend (the backend that ran it)."""
    iterations = 0
    backend = ""


# ---- frameworks: what an array is, the caller's stream, and results of the caller's type ------

_FRAMEWORKS = ("numpy", "torch", "cupy", "jax", "tensor")
RESULT_KINDS = ("auto",) + _FRAMEWORKS + ("python",)


def _framework(obj):
    if isinstance(obj, Tensor):
        return "tensor"
    top = type(obj).__module__.split(".", 1)[0]
    if top == "jaxlib":
        return "jax"
    return top if top in _FRAMEWORKS else None


def stream_handle(stream):
    """A cudaStream_t as an int from an int, a torch.cuda.Stream (.cuda_stream), a CuPy
    stream (.ptr) or anything with __cuda_stream__; 0, the legacy default stream, is given as
    1 (cudaStreamLegacy), as DLPack has it, since cfx reads NULL as its own stream."""
    if stream is None:
        return None
    if hasattr(stream, "__cuda_stream__"):
        handle = stream.__cuda_stream__()[1]
    elif hasattr(stream, "cuda_stream"):
        handle = stream.cuda_stream
    elif hasattr(stream, "ptr"):
        handle = stream.ptr
    elif isinstance(stream, int) and not isinstance(stream, bool):
        handle = stream
    else:
        raise TypeError("stream must be a cudaStream_t (int), a torch.cuda.Stream, a CuPy "
                        "stream or have __cuda_stream__; got %s" % type(stream).__name__)
    handle = int(handle)
    return 1 if handle == 0 else handle


def _framework_stream(fw, device_id):
    """The current stream of a framework on a device, or None where it has none."""
    if fw == "torch":
        import torch
        return stream_handle(torch.cuda.current_stream(device_id))
    if fw == "cupy":
        import cupy
        with cupy.cuda.Device(device_id):
            return stream_handle(cupy.cuda.get_current_stream())
    return None


_NUMPY_DTYPE = {"f32": "float32", "f64": "float64", "i32": "int32", "i64": "int64",
                "bool": "bool"}


def _empty(fw, dtype, shape, device_id):
    """(array, address) of a new result of the framework, on the device (None: the host)."""
    if fw == "numpy" and device_id is None:
        import numpy
        a = numpy.empty(shape, dtype=_NUMPY_DTYPE[dtype])
        return a, a.__array_interface__["data"][0]
    if fw == "torch":
        import torch
        a = torch.empty(shape, dtype=getattr(torch, _NUMPY_DTYPE[dtype]),
                        device="cpu" if device_id is None else torch.device("cuda", device_id))
        return a, a.data_ptr()
    if fw == "cupy" and device_id is not None:
        import cupy
        with cupy.cuda.Device(device_id):
            a = cupy.empty(shape, dtype=_NUMPY_DTYPE[dtype])
        return a, a.data.ptr
    t = Tensor.empty(dtype, shape, device_id) # jax, tensor, python; numpy and cupy elsewhere
    return t, t.data_ptr


def _convert(fw, obj):
    """A result allocated by _empty as the framework's array."""
    if not isinstance(obj, Tensor) or fw == "tensor":
        return obj
    if fw == "python":
        return obj.tolist()
    if fw == "numpy":
        import numpy
        return numpy.asarray(obj.to_host())
    if fw == "jax":
        import jax.dlpack
        try:
            return jax.dlpack.from_dlpack(obj)
        except TypeError: # a JAX that takes capsules only
            return jax.dlpack.from_dlpack(obj.__dlpack__())
    if fw == "cupy":
        import cupy
        if obj.device_id is not None:
            return cupy.from_dlpack(obj)
        import numpy
        return cupy.asarray(numpy.asarray(obj))
    if fw == "torch":
        import torch
        return torch.from_dlpack(obj)
    return obj


def _have_numpy():
    return "numpy" in sys.modules or importlib.util.find_spec("numpy") is not None


# ---- graphs ---------------------------------------------------------------------------------

class _Exec:
    """One executor of a graph: its pointer, backend, device and the device buffers that
    stand in for host inputs of device runs; the settings last given to it (set again only
    when a call changes them), and the arrays of addresses cfx_run_bound takes."""

    def __init__(self, ptr, backend, device_id, ninputs, nresults):
        self.ptr = ptr
        self.backend = backend
        self.device_id = device_id
        self.staging = {}
        self.trace = None
        self.mode = None
        self.threads = None  # the cpu backend's thread count, None: as cfx_exec_new leaves it
        self.max_iters = 0   # the executor's defaults, as cfx_exec_new leaves them
        self.stream = None
        self.accumulate = None # a cpu executor's mode (a cfx_accumulate code), and its default:
        self.accumulate_default = None # what a call without accumulate= runs with
        self.ins = (ctypes.c_void_p * max(ninputs, 1))()
        self.outs = (ctypes.c_void_p * max(nresults, 1))()
        self.iterations = ctypes.c_int64(0) # the last run's, which cfx_run_bound writes
        self.iterations_ref = ctypes.byref(self.iterations)


def _default_value(dtype, text):
    """The Python value of a default as cfx_input_default writes it ("2.5", "true", "None")."""
    if text == "None":
        return None
    if dtype == "bool":
        return text == "true"
    if dtype in ("i32", "i64"):
        return int(text)
    return float(text)


def _filled(dtype, shape, value):
    """A host View of shape with every element `value` (an input's default)."""
    n = _dlpack.count(shape)
    v = _dlpack.check_scalar(value, dtype)
    buf = (_dlpack.CTYPE[dtype] * max(n, 1))(*([v] * n))
    return _dlpack.View(dtype, shape, ctypes.addressof(buf), HOST, None, buf)


# the keyword options of calling a graph, with their defaults
_CALL_OPTIONS = {"backend": "auto", "max_iters": 0, "stream": None, "results": "auto",
                 "out": None, "on_print": None, "persistent_mode": None, "trace": None,
                 "accumulate": None, "threads": None}


def _given(value, default):
    """Whether an option was given a value other than its default (an array is never one)."""
    if default is None or not isinstance(value, (str, int)):
        return value is not default
    return value != default


class Graph:
    """One graph of a module: .name, .inputs and .results (lists of Param with name, dtype,
    shape), .defaults ({input name: its default} for the inputs declared with one; None for
    `= None`). Call it to run: g(x=..., steps=5) or g(x, 5), returning Results, a mapping from
    result names to arrays. An input with a default may be left out; one that defaults to None
    may be left out or given as None."""

    def __init__(self, module, index):
        self.module = module
        self.index = index
        m = module._ptr
        self.name = _lib.text(lib.cfx_graph_name(m, index))
        self.inputs = [Param(_lib.text(lib.cfx_input_name(m, index, i)),
                             *_lib.type_of(lib.cfx_input_type(m, index, i)))
                       for i in range(lib.cfx_input_count(m, index))]
        # the defaults of inputs that have one: a Python value, None for `= None`
        self.defaults = {}
        for i, p in enumerate(self.inputs):
            text = lib.cfx_input_default(m, index, i)
            if text is not None:
                self.defaults[p.name] = _default_value(p.dtype, _lib.text(text))
        self.results = [Param(_lib.text(lib.cfx_result_name(m, index, i)),
                              *_lib.type_of(lib.cfx_result_type(m, index, i)))
                        for i in range(lib.cfx_result_count(m, index))]
        self._names = {p.name: p.name.encode() for p in self.inputs + self.results}
        self._input_index = {p.name: i for i, p in enumerate(self.inputs)}
        self._quick_plan = None # _quick's, made at its first call
        self._execs = {}
        self._lock = threading.RLock() # a print callback that calls the graph gets an error, not a deadlock
        self._running = None
        self._cancel_lock = threading.Lock() # _running and _cancel_pending, for cancel()
        self._cancel_pending = False
        self._on_print = None
        self._print_fn = _lib.PRINT_FN(self._print)
        self.last_backend = None
        self.last_stream = None # the stream and device of the last run (None: the host)
        self.last_device = None

    def __repr__(self):
        return "cfx.Graph(%s(%s) -> (%s))" % (self.name, ", ".join(map(str, self.inputs)),
                                             ", ".join(map(str, self.results)))

    def dump(self):
        """The graph's compiled records, as `cfx dump` prints them."""
        return _lib.take_string(lib.cfx_dump(self.module._ptr, self.index))

    def _print(self, user, line):
        text = line.decode("utf-8", "replace")
        try:
            if self._on_print is not None:
                self._on_print(text)
            else:
                sys.stdout.write(text + "\n")
        except BaseException as e:
            _fail_in_kernel(e)

    # -- executors
    def _exec(self, backend, device_id):
        key = (backend, device_id)
        x = self._execs.get(key)
        if x is not None:
            return x
        if backend != "cpu":
            # CUDA C kernels are loaded into the device's context before the executor exists:
            # an executor may capture its kernels' launches into a graph as it is created,
            # and nothing may be loaded while a stream is capturing
            for k in self.module.context.kernels.values():
                k.prepare()
        err = ctypes.c_void_p()
        ptr = lib.cfx_exec_new(self.module._ptr, self.index, _lib.BACKEND_CODE[backend],
                               ctypes.byref(err))
        if not ptr:
            raise Error("%s: %s" % (self.name, _lib.take_string(err.value)))
        self.module._execs.append(ptr)
        lib.cfx_set_print(ptr, self._print_fn, None) # once: _print reads self._on_print
        # Ctrl-C during a run on the main thread cancels it, and Python's handler then raises
        # KeyboardInterrupt as usual (Python runs handlers only between bytecodes, so it would
        # otherwise wait for the run to end); libcfx installs its handler for the run's length
        lib.cfx_cancel_on_sigint(ptr, 1)
        resolved = _lib.BACKENDS[lib.cfx_exec_backend(ptr)]
        x = _Exec(ptr, resolved, device_id, len(self.inputs), len(self.results))
        if resolved == "cpu":
            # the mode cfx_exec_new took ($CFX_ACCUMULATE, checked there), or the module's
            env = os.environ.get("CFX_ACCUMULATE") or "fast"
            x.accumulate = x.accumulate_default = _ACCUMULATE.get(env, 0)
            code = _accumulate_code(self.module.accumulate, self.name)
            if code is not None and code != x.accumulate:
                if lib.cfx_set_option(ptr, _OPTION_ACCUMULATE, code) != 0:
                    raise Error("%s: %s" % (self.name, _lib.text(lib.cfx_exec_error(ptr))))
                x.accumulate = x.accumulate_default = code
        self._execs[key] = x
        return x

    def backend_detail(self, backend="auto"):
        """One line on the path the executor of `backend` takes (cfx_exec_backend_detail)."""
        for (b, _), x in self._execs.items():
            if b == backend:
                return _lib.text(lib.cfx_exec_backend_detail(x.ptr))
        return _lib.text(lib.cfx_exec_backend_detail(self._exec(backend, None).ptr))

    def close(self):
        """Frees the graph's executors now (else with the module)."""
        for x in self._execs.values():
            if x.ptr in self.module._execs:
                self.module._execs.remove(x.ptr)
                lib.cfx_exec_free(x.ptr)
            x.staging.clear()
        self._execs.clear()

    def cancel(self):
        """Asks the run in flight (from another thread) to stop with status cancelled; with
        no run in flight, the graph's next run (as cfx_cancel keeps a cancel for the next run)."""
        with self._cancel_lock:
            if self._running:
                lib.cfx_cancel(self._running)
            else:
                self._cancel_pending = True

    # -- running
    def _run_bound(self, e, x, ins, outs, flags):
        """One run through cfx_run_bound (inputs and results bound by their addresses), as the
        run in flight for cancel(); raises on a stop, or what a print or kernel callback raised."""
        with self._cancel_lock:
            self._running = e
            if self._cancel_pending:
                self._cancel_pending = False
                lib.cfx_cancel(e)
        try:
            status = lib.cfx_run_bound(e, ins, outs, flags, x.iterations_ref)
        finally:
            # no lock: a cancel() that read _running before this still cancels e, as it would
            # have under the lock (the run in C has ended either way: the cancel is kept for
            # e's next run, cfx.h); one that reads None sets the pending cancel
            self._running = None
        self.last_backend = x.backend
        if status != _lib.OK:
            self._raise_stopped(e, status)
        failure = _take_kernel_failure() # a print to stdout or an on_print that raised
        if failure is not None:
            raise failure

    def __call__(self, *args, backend="auto", max_iters=0, stream=None, results="auto",
                 out=None, on_print=None, persistent_mode=None, trace=None, accumulate=None,
                 threads=None, **inputs):
        """Runs the graph on its inputs (positional in declaration order, or by name) and
        returns Results. Options (keyword-only; for an input whose name is one of them, use
        run()):
          backend: "auto" (cuda-persistent for device inputs; else cfx picks), "cpu",
            "cuda-host", "cuda-graph", "cuda-persistent".
          max_iters: a budget of loop iterations, all loops together (0: none); a run that
            spends it stops with RunStopped(status "limit").
          stream: the CUDA stream to run on (int, torch.cuda.Stream, CuPy stream); default
            the current stream of the inputs' framework.
          results: "auto" (the type of the first array input; numpy, else cfx.Tensor, when
            there is none), "numpy", "torch", "cupy", "jax", "tensor", "python".
          out: {result name: array} to write results into, in place.
          on_print: a function called with each line the graph prints (default: stdout).
          persistent_mode: "compiled" or "interp" for cuda-persistent.
          trace: a path to write a Chrome trace of the run to.
          accumulate: "fast" or "f64", the cpu executor's accumulation for this call (see
            cfx.compile); None: the module's. The CUDA executors keep their own rule.
          threads: how many threads the cpu backend runs on (1 to 256; 1: the calling thread
            alone); kept for the graph's later calls, ignored where auto picks a GPU.
            Default: $CFX_NUM_THREADS where set, else the cores available.
        Raises TypeError (a missing or unknown input, a wrong dtype), ValueError (a wrong
        shape) naming the input before anything runs; RunStopped for a run that stopped;
        Error for a backend that cannot run it."""
        if (not inputs and len(args) == len(self.inputs) and max_iters == 0 and stream is None
                and on_print is None and persistent_mode is None and trace is None
                and accumulate is None and threads is None
                and (results == "auto" or results == "numpy") and (out is None or type(out) is dict)):
            res = self._quick(args, backend, out)
            if res is not None:
                return res
        if len(args) > len(self.inputs):
            raise TypeError("%s takes %d inputs; %d were given positionally"
                            % (self.name, len(self.inputs), len(args)))
        values = {}
        for p, v in zip(self.inputs, args):
            values[p.name] = v
        for name, v in inputs.items():
            if name in values:
                raise TypeError("%s: input '%s' given twice" % (self.name, name))
            values[name] = v
        given = {"backend": backend, "max_iters": max_iters, "stream": stream,
                 "results": results, "out": out, "on_print": on_print,
                 "persistent_mode": persistent_mode, "trace": trace, "accumulate": accumulate,
                 "threads": threads}
        for p in self.inputs:
            # an input named like an option: name=... is the option, so say so rather than
            # take the value silently as the option and then miss the input
            if p.name in _CALL_OPTIONS and p.name not in values and (
                    p.name not in self.defaults or _given(given[p.name], _CALL_OPTIONS[p.name])):
                raise TypeError("%s: '%s' is both an input of the graph and an option of the call, "
                                "and %s=... gives the option: pass the input positionally or with "
                                "%s.run({'%s': ...}, ...)" % (self.name, p.name, p.name, self.name,
                                                              p.name))
        return self.run(values, backend=backend, max_iters=max_iters, stream=stream,
                        results=results, out=out, on_print=on_print,
                        persistent_mode=persistent_mode, trace=trace, accumulate=accumulate,
                        threads=threads)

    def _quick(self, args, backend, out):
        """The common call, every input a numpy array on the host of its declared dtype and shape,
        given positionally, with no option but the backend and out= (numpy arrays too, writable),
        once an earlier call made the executor: what _run does for it, with only the checks that
        can fail here between the call and cfx_run_bound. None: not such a call (nothing done);
        _run takes it."""
        plan = self._quick_plan
        if plan is None:
            plan = self._quick_plan = _quick_plan(self)
        x = self._execs.get((backend, None))
        if not plan or x is None or self._running:
            return None
        ndarray, empty, offset, specs, rspecs, res_names = plan
        for a, (dtype, shape) in zip(args, specs):
            if type(a) is not ndarray or a.dtype is not dtype or a.shape != shape or not a.flags.c_contiguous:
                return None
        with self._lock:
            # a budget, a stream or an accumulation that another call left (set under this
            # lock): _run sets them back; a print callback calling the graph: _run says why not
            if (self._running or x.max_iters != 0 or x.stream is not None
                    or x.accumulate != x.accumulate_default):
                return None
            e, ins, outs = x.ptr, x.ins, x.outs
            # each array's data pointer field, which cfx_run_bound reads (CFX_BOUND_INDIRECT):
            # args and res hold the arrays until it returns
            for i, a in enumerate(args):
                ins[i] = id(a) + offset
            res = Results()
            if out:
                if not res_names.issuperset(out):
                    return None # an unknown name: _run says so
                for i, (name, dtype, shape) in enumerate(rspecs):
                    r = out.get(name)
                    if r is None:
                        r = empty(shape, dtype)
                    else:
                        if type(r) is not ndarray or r.dtype is not dtype or r.shape != shape:
                            return None
                        flags = r.flags
                        if not flags.c_contiguous or not flags.writeable:
                            return None
                    res[name] = r
                    outs[i] = id(r) + offset
            else:
                for i, (name, dtype, shape) in enumerate(rspecs):
                    r = res[name] = empty(shape, dtype)
                    outs[i] = id(r) + offset
            self._on_print = None
            self.last_stream = self.last_device = None
            self._run_bound(e, x, ins, outs, _lib.BOUND_INDIRECT) # (it takes a kernel's failure)
            res.iterations = x.iterations.value
            res.backend = x.backend
            return res

    def run(self, inputs, *, backend="auto", max_iters=0, stream=None, results="auto",
            out=None, on_print=None, persistent_mode=None, trace=None, accumulate=None,
            threads=None):
        """As calling the graph, with the inputs as one mapping {name: value}."""
        inputs = dict(inputs)
        items = self.module._seq_items if self.index == 0 else {}
        for name in [n for n in inputs if n in items]: # a list of its items: NAME[0], NAME[1], ...
            given = inputs.pop(name)
            if not isinstance(given, (list, tuple)) or len(given) != items[name]:
                raise TypeError("%s: input '%s' is a sequence imported item by item: give a list of its %d "
                                "items" % (self.name, name, items[name]))
            for k, v in enumerate(given):
                inputs["%s[%d]" % (name, k)] = v
        known = self.module._known_inputs if self.index == 0 else {}
        for name in [n for n in inputs if n in known]:
            _check_known(self.name, known[name], inputs.pop(name))
        with self._lock:
            if self._running:
                raise Error("%s is running: a print or kernel callback cannot run it again "
                            "(compile the source again for a second graph)" % self.name)
            res = self._run(inputs, backend, max_iters, stream, results, out or {},
                            on_print, persistent_mode, trace, accumulate, threads)
        for p in (self.module._known_results if self.index == 0 else {}).values():
            res[p.name] = _empty_result(results, res, p)
        for name, n in (self.module._seq_results if self.index == 0 else {}).items():
            res[name] = [res.pop("%s[%d]" % (name, k)) for k in range(n)]
        return res

    def _classify(self, values, out):
        """(where, device id) of each input and out= array, without importing anything;
        TypeError for an unknown or missing input."""
        declared = {p.name for p in self.inputs}
        unknown = [n for n in values if n not in declared]
        if unknown:
            raise TypeError("%s has no input '%s' (its inputs: %s)"
                            % (self.name, unknown[0], ", ".join(map(str, self.inputs))))
        for p in self.inputs:
            # None for an input that defaults to None is the input left out
            if p.name in values and values[p.name] is None:
                if p.name in self.defaults and self.defaults[p.name] is None:
                    del values[p.name]
                else:
                    raise TypeError("%s: input '%s' is %s; got None (only an input declared "
                                    "`= None` may be None)" % (self.name, p.name,
                                                               shape_str(p.dtype, p.shape)))
        missing = [p for p in self.inputs if p.name not in values and p.name not in self.defaults]
        if missing:
            raise TypeError("%s: missing input%s %s" % (self.name, "s" if len(missing) > 1 else "",
                                                         ", ".join("'%s'" % str(p) for p in missing)))
        results = {p.name for p in self.results}
        for n in out:
            if n not in results:
                raise TypeError("%s has no result '%s' (its results: %s)"
                                % (self.name, n, ", ".join(map(str, self.results))))
        places = {}
        for kind, items in (("input", values.items()), ("result", out.items())):
            for name, v in items:
                where, device_id = HOST, None
                if isinstance(v, Tensor):
                    where, device_id = (HOST, None) if v.device_id is None else (DEVICE, v.device_id)
                elif hasattr(v, "__dlpack_device__") and not isinstance(v, type):
                    try:
                        where, device_id = _dlpack.dlpack_device(v)
                    except TypeError as e:
                        raise TypeError("%s: %s '%s' lives on %s" % (self.name, kind, name, e)) from None
                places[(kind, name)] = (where, device_id)
        return places

    def _import(self, kind, p, v, stream):
        """A View of value v for the input or result p, checked against its declaration."""
        what = "%s: %s '%s'" % (self.name, kind, p.name)
        if kind == "input" and p.name in self.module._half_inputs and hasattr(v, "astype") and \
                getattr(getattr(v, "dtype", None), "name", None) in self.module._half_inputs[p.name]:
            # their values, which it holds exactly; uint64's bits (docs/onnx.md)
            v = v.view(_NUMPY_DTYPE[p.dtype]) if v.dtype.name == "uint64" else v.astype(_NUMPY_DTYPE[p.dtype])
        try:
            if _dlpack.is_value(v):
                if kind == "result":
                    raise TypeError("must be an array to write into; got %s" % type(v).__name__)
                return _dlpack.pack(v, p.dtype, p.shape)
            view = _dlpack.import_any(v, stream)
        except (TypeError, ValueError, BufferError) as e:
            raise (ValueError if isinstance(e, BufferError) else type(e))("%s %s" % (what, e)) from None
        if view.dtype != p.dtype:
            view.release()
            raise TypeError("%s is %s; got %s %s" % (what, shape_str(p.dtype, p.shape), view.dtype,
                                                     type(v).__name__))
        if view.shape != p.shape:
            view.release()
            raise ValueError("%s is %s; got shape %s" % (what, shape_str(p.dtype, p.shape),
                                                         list(view.shape)))
        if kind == "result" and view.readonly:
            view.release()
            raise ValueError("%s is read-only" % what)
        return view

    def _run(self, values, backend, max_iters, stream, results, out, on_print, persistent_mode,
             trace, accumulate=None, threads=None):
        if backend not in _lib.BACKEND_CODE:
            raise ValueError("unknown backend %r (one of %s)" % (backend, ", ".join(_lib.BACKENDS)))
        if results not in RESULT_KINDS:
            raise ValueError("unknown results %r (one of %s)" % (results, ", ".join(RESULT_KINDS)))
        if int(max_iters) < 0:
            raise ValueError("max_iters must be 0 (no limit) or positive, got %d" % max_iters)
        accumulate = _accumulate_code(accumulate, self.name)
        if threads is not None:
            # the cpu backend's; ignored where auto picks a GPU, as cfx run's --threads
            if type(threads) is not int or not 1 <= threads <= 256:
                raise ValueError("threads is a count from 1 to 256, not %r" % (threads,))
            if backend not in ("auto", "cpu"):
                raise ValueError("threads applies to the cpu backend, not %s" % backend)
        places = self._classify(values, out)

        # a device run? on which device, and which stream
        devices = {}
        for (kind, name), (where, device_id) in places.items():
            if where == DEVICE:
                devices.setdefault(device_id, "%s '%s'" % (kind, name))
        if len(devices) > 1:
            raise ValueError("%s: arrays on several devices: %s" % (self.name, ", ".join(
                "%s on cuda:%d" % (what, d) for d, what in sorted(devices.items()))))
        device_id = next(iter(devices)) if devices else None
        on_device = device_id is not None
        if on_device and backend == "cpu":
            raise ValueError("%s: %s is on cuda:%d, and the cpu backend reads host memory: move "
                             "it to the host or run on a CUDA backend"
                             % (self.name, devices[device_id], device_id))
        # the kinds of array among the inputs, those on the run's device first
        frameworks = [_framework(values[p.name]) for p in self.inputs
                      if on_device and p.name in values and places[("input", p.name)][0] == DEVICE]
        frameworks += [_framework(values[p.name]) for p in self.inputs if p.name in values]
        frameworks = [f for f in frameworks if f]
        if results == "auto":
            results = frameworks[0] if frameworks else ("numpy" if _have_numpy() else "tensor")
        rt = None
        handle = stream_handle(stream)
        if on_device:
            from . import _cuda
            try:
                rt = _cuda.runtime()
            except _cuda.CudaError as e:
                raise Error("%s: %s is on cuda:%d: %s" % (self.name, devices[device_id], device_id, e)) from None
            if handle is None:
                for fw in frameworks:
                    handle = _framework_stream(fw, device_id)
                    if handle is not None:
                        break
            if handle is None:
                handle = rt.own_stream(device_id)
            if backend == "auto":
                backend = "cuda-persistent"
        # inside the caller's CUDA graph capture (torch.cuda.graph): only the run's own work may
        # be enqueued, so everything that allocates, copies from the host or builds must have
        # happened at an earlier call outside the capture
        capturing = on_device and rt.capturing(handle)
        if capturing:
            self._check_capturable(values, places, backend, device_id, results, out, trace)

        # inputs and out= arrays: every one checked before anything is bound, copied or run
        views = []
        x = None
        bound = False # bound by name (a captured run)
        try:
            staged = []
            for p in self.inputs:
                if p.name not in values:
                    # left out: a run over host buffers takes the default itself (and tells
                    # a parameter defaulting to None apart); a device run gets it staged
                    if not on_device or self.defaults[p.name] is None:
                        continue
                    view = _filled(p.dtype, p.shape, self.defaults[p.name])
                    views.append(view)
                    staged.append((p, view))
                    continue
                where = places[("input", p.name)][0]
                view = self._import("input", p, values[p.name], handle if where != HOST else None)
                views.append(view)
                staged.append((p, view))
            outs = {}
            for p in self.results:
                if p.name not in out:
                    continue
                view = self._import("result", p, out[p.name], handle)
                views.append(view)
                if (view.where == HOST) == on_device:
                    raise ValueError("%s: result '%s' is on %s, and this run's arrays are on %s"
                                     % (self.name, p.name, _place(view.where, view.device_id),
                                        _place(DEVICE if on_device else HOST, device_id)))
                outs[p.name] = (out[p.name], view.address)
            self.last_stream, self.last_device = handle, device_id
            with (rt.on_device(device_id) if on_device else _nothing()):
                x = self._exec(backend, device_id)
                e = x.ptr
                for p in self.results:
                    if p.name not in outs:
                        outs[p.name] = _empty(results, p.dtype, p.shape, device_id)
                ins = x.ins
                for i in range(len(self.inputs)):
                    ins[i] = None # left out: unbound
                for p, view in staged:
                    address = view.address
                    if on_device and view.where == HOST:
                        # a Python number or a host array in a device run: copied to a device
                        # buffer the executor keeps (ordered on the run's stream)
                        buf = x.staging.get(p.name)
                        if buf is None:
                            buf = x.staging[p.name] = Tensor.empty(p.dtype, p.shape, device_id)
                        rt.copy_async(buf.data_ptr, address, p.nbytes, _cuda_h2d(), handle)
                        address = buf.data_ptr
                    ins[self._input_index[p.name]] = address
                for i, p in enumerate(self.results):
                    x.outs[i] = outs[p.name][1]
                self._configure(x, max_iters, handle, on_print, persistent_mode, trace, accumulate,
                                threads)
                _take_kernel_failure()
                if capturing:
                    # cfx_run_async records the run into the capture: bound by name, as it
                    # reads the bindings
                    bound = True
                    lib.cfx_unbind(e, None)
                    for i, p in enumerate(self.inputs):
                        if ins[i] is not None:
                            self._bind(e, lib.cfx_bind_device, p, ins[i])
                    for i, p in enumerate(self.results):
                        self._bind(e, lib.cfx_bind_device, p, x.outs[i])
                    return self._run_captured(e, x, outs, out, results)
                self._run_bound(e, x, x.ins, x.outs, _lib.BOUND_DEVICE if on_device else 0)
                res = Results()
                for p in self.results:
                    obj = outs[p.name][0]
                    res[p.name] = obj if p.name in out else _convert(results, obj)
                res.iterations = x.iterations.value
                res.backend = x.backend
                return res
        finally:
            if bound:
                lib.cfx_unbind(x.ptr, None)
            for v in views:
                v.release()

    def _check_capturable(self, values, places, backend, device_id, results, out, trace):
        """Why this call cannot be recorded into the stream capture in progress (an Error), or
        nothing: it needs the executor a call outside the capture made (with the kernels it
        built), device tensors for every input (read at each replay) and results that the
        capture can hold (torch's and CuPy's allocate from their graph-aware pools; out= arrays
        otherwise)."""
        if (backend, device_id) not in self._execs:
            raise Error("%s: called inside a CUDA graph capture before any call outside it: call it once "
                        "first with the same arrays' shapes (a warm-up), so that the executor is made and "
                        "its kernels built before the capture" % self.name)
        for p in self.inputs:
            if places[("input", p.name)][0] != DEVICE:
                raise Error("%s: input '%s' is on the host, and inside a CUDA graph capture every input "
                            "must be a device array (its values are read at each replay)" % (self.name, p.name))
        missing = [p.name for p in self.results if p.name not in out]
        if missing and results not in ("torch", "cupy"):
            raise Error("%s: inside a CUDA graph capture the results must be arrays the capture can keep: "
                        "pass out= arrays for %s, or torch or CuPy inputs" % (self.name, ", ".join(
                            "'%s'" % n for n in missing)))
        if trace:
            raise Error("%s: a traced run cannot be captured into a CUDA graph" % self.name)

    def _run_captured(self, e, x, outs, out, results):
        """The run recorded into the capture: cfx_run_async only (cfx_run would wait). The
        results are the arrays the replays write; a replay's status is cfx_wait's, which
        Graph.captured_status reads after the application has synchronized its replay."""
        if lib.cfx_run_async(e) != 0:
            raise Error("%s: %s" % (self.name, _lib.text(lib.cfx_exec_error(e))))
        self.last_backend = x.backend
        res = Results()
        for p in self.results:
            obj = outs[p.name][0]
            res[p.name] = obj if p.name in out else _convert(results, obj)
        res.iterations = None # known at each replay, not at the capture
        res.backend = x.backend
        return res

    def captured_status(self, backend="auto"):
        """After a call captured into a CUDA graph and a replay of that graph that the caller has
        synchronized: None when the replay ran to the end, else raises RunStopped (or Error) as
        a call does."""
        for (b, _), x in self._execs.items():
            if b == backend or backend == "auto":
                status = lib.cfx_wait(x.ptr)
                if status != _lib.OK:
                    self._raise_stopped(x.ptr, status)
                return None
        raise Error("%s: no executor of backend %s has run" % (self.name, backend))

    def _configure(self, x, max_iters, handle, on_print, persistent_mode, trace, accumulate=None,
                   threads=None):
        e = x.ptr
        if x.accumulate is not None: # a cpu executor: this call's mode, else the module's
            code = x.accumulate_default if accumulate is None else accumulate
            if code != x.accumulate:
                if lib.cfx_set_option(e, _OPTION_ACCUMULATE, code) != 0:
                    raise Error("%s: %s" % (self.name, _lib.text(lib.cfx_exec_error(e))))
                x.accumulate = code
        if threads is not None and threads != x.threads and x.backend == "cpu":
            if lib.cfx_set_option(e, _OPTION_THREADS, threads) != 0:
                raise Error("%s: %s" % (self.name, _lib.text(lib.cfx_exec_error(e))))
            x.threads = threads
        max_iters = int(max_iters)
        if max_iters != x.max_iters:
            lib.cfx_set_max_iters(e, max_iters)
            x.max_iters = max_iters
        if handle != x.stream:
            lib.cfx_set_stream(e, handle)
            x.stream = handle
        self._on_print = on_print
        if trace != x.trace:
            if lib.cfx_set_trace(e, os.fsencode(trace) if trace else None) != 0:
                raise Error("%s: %s" % (self.name, _lib.text(lib.cfx_exec_error(e))))
            x.trace = trace
        if persistent_mode is not None and persistent_mode != x.mode:
            mode = {"compiled": 0, "interp": 1}.get(persistent_mode)
            if mode is None:
                raise ValueError("persistent_mode is 'compiled' or 'interp', not %r"
                                 % (persistent_mode,))
            if lib.cfx_set_persistent_mode(e, mode) < 0:
                raise Error("%s: %s" % (self.name, _lib.text(lib.cfx_exec_error(e))))
            x.mode = persistent_mode

    def _bind(self, e, bind, p, address):
        if bind(e, self._names[p.name], address, p.nbytes) != 0:
            raise Error("%s: %s" % (self.name, _lib.text(lib.cfx_exec_error(e))))

    def _raise_stopped(self, e, status):
        failure = _take_kernel_failure()
        line, col = ctypes.c_int(0), ctypes.c_int(0)
        if status == _lib.ERROR or status < 0 or status >= len(_lib.STATUSES):
            text = _lib.text(lib.cfx_exec_message(e)) or _lib.text(lib.cfx_exec_error(e))
            # text is `FILE:LINE:COL: run stopped: error: ...` or an executor's own message
            if failure is not None:
                if isinstance(failure, (KeyboardInterrupt, SystemExit)):
                    raise failure
                if " run stopped: error: kernel '" not in text:
                    raise Error(text) from failure # a print callback's
                # a Python kernel that raised: what it raised, rather than what the C
                # callback returned for it
                text = re.sub(r" \(it returned -?\d+\)$", "", text)
                text = text.replace(" run stopped: error: ", " run stopped: kernel: ", 1)
                lib.cfx_exec_position(e, ctypes.byref(line), ctypes.byref(col))
                raise RunStopped("kernel", "%s: %s: %s" % (text, type(failure).__name__, failure),
                                 self.module.filename, line.value, col.value,
                                 lib.cfx_exec_iterations(e)) from failure
            raise Error(text)
        lib.cfx_exec_position(e, ctypes.byref(line), ctypes.byref(col))
        message = _lib.text(lib.cfx_exec_message(e))
        raise RunStopped(_lib.STATUSES[status], message, self.module.filename, line.value,
                         col.value, lib.cfx_exec_iterations(e), _lib.text(lib.cfx_exec_hang_report(e)))

    # -- timing
    def benchmark(self, *args, warmup=3, repeat=20, **kwargs):
        """Runs the graph `warmup` times, then `repeat` times timed, and returns a Timing
        (medians in milliseconds; CUDA events on the run's stream for a device run, the
        wall clock otherwise) with .results, the last run's results. Takes the same
        arguments as calling the graph."""
        from ._bench import bench_graph
        return bench_graph(self, args, kwargs, warmup, repeat)


_address_at = ctypes.c_void_p.from_address


def _numpy_data_offset(numpy):
    """Where a numpy array object holds the address of its first element: numpy's C API reads it
    (PyArray_DATA) from the field right after CPython's object header, which is what this reads
    too, for the quick call; checked against the array interface on a probe, and None (no quick
    call) where it does not hold."""
    if sys.implementation.name != "cpython":
        return None
    offset = object.__basicsize__
    probe = numpy.arange(3.0)[1:]
    try:
        ok = _address_at(id(probe) + offset).value == probe.__array_interface__["data"][0]
    except (ValueError, OSError, AttributeError):
        ok = False
    return offset if ok else None


def _check_known(graph, p, v):
    """An input of an ONNX model known at import (0 elements): taken by name, its dtype and
    shape checked against the import's, its (no) data not read."""
    dtype = {"float32": "f32", "float64": "f64", "int32": "i32", "int64": "i64", "bool": "bool",
             "torch.float32": "f32", "torch.float64": "f64", "torch.int32": "i32",
             "torch.int64": "i64", "torch.bool": "bool", "float16": "f32", "bfloat16": "f32",
             "int8": "i32", "uint8": "i32", "int16": "i32", "uint16": "i32", "uint32": "i64",
             "uint64": "i64"}.get(str(getattr(v, "dtype", None))) # (the types held in another)
    shape = tuple(getattr(v, "shape", (None,)))
    if dtype != p.dtype or shape != tuple(p.shape):
        raise (TypeError if dtype != p.dtype else ValueError)(
            "%s: input '%s' is %s, 0 elements, known when the model was imported; got %s %s (load "
            "the model again for another shape)" % (graph, p.name, shape_str(p.dtype, p.shape),
                                                     getattr(v, "dtype", type(v).__name__), list(shape)))


def _empty_result(kind, res, p):
    """A result of an ONNX model known at import (0 elements): an empty array, numpy's unless
    the results are torch's (asked for, or the other results')."""
    import numpy
    a = numpy.empty(p.shape, _NUMPY_DTYPE[p.dtype])
    if kind == "python":
        return a.tolist()
    if kind == "torch" or (kind == "auto" and any(type(r).__module__.startswith("torch") for r in res.values())):
        import torch
        return torch.from_numpy(a)
    return a


def _quick_plan(g):
    """What Graph._quick needs of numpy and of the graph's declarations, or False (numpy not
    imported by the caller, or its arrays' layout not the one read)."""
    if g.index == 0 and (g.module._known_results or g.module._seq_results):
        return False # its results of 0 elements, or a sequence's items as a list, are added by run()
    numpy = sys.modules.get("numpy")
    global _NUMPY_OFFSET
    if numpy is None:
        return None # asked again at the next call: the caller may import numpy later
    if _NUMPY_OFFSET is False:
        _NUMPY_OFFSET = _numpy_data_offset(numpy)
    if _NUMPY_OFFSET is None:
        return False
    specs = tuple((numpy.dtype(_NUMPY_DTYPE[p.dtype]), p.shape) for p in g.inputs)
    rspecs = tuple((p.name, numpy.dtype(_NUMPY_DTYPE[p.dtype]), p.shape) for p in g.results)
    return numpy.ndarray, numpy.empty, _NUMPY_OFFSET, specs, rspecs, frozenset(p.name for p in g.results)


_NUMPY_OFFSET = False # not yet asked


def _cuda_h2d():
    from . import _cuda
    return _cuda.H2D


def _place(where, device_id):
    return "the host" if where == HOST else "cuda:%d" % device_id


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def backends():
    """{backend name: (available, why not)} on this machine; asking loads CUDA's libraries
    where cfx was built with them."""
    found = collections.OrderedDict()
    for i, name in enumerate(_lib.BACKENDS):
        why = ctypes.create_string_buffer(512)
        ok = lib.cfx_backend_available(i, why, len(why))
        found[name] = (bool(ok), why.value.decode("utf-8", "replace"))
    return found
