"""_cuda.py: the few CUDA calls the package makes itself, through ctypes.

The CUDA runtime is the one libcfx's CUDA module loaded (found in /proc/self/maps once a CUDA
backend has been asked for), so device pointers, streams and events are shared with the
executors; the driver (libcuda.so.1) and NVRTC serve application kernels written as CUDA C.
Nothing here is loaded until a CUDA path is taken: importing cfx on a machine without CUDA
loads no CUDA library.

What the package needs of them: device memory for the results and staged inputs of a run
whose inputs live on a device (cudaMalloc, cudaMemcpyAsync), events for timings, the
current device, and for register_kernel(cuda_source=...) a PTX compile and a launch.
"""
import contextlib
import ctypes
import os
import threading

from ctypes import POINTER, byref, c_char_p, c_float, c_int, c_size_t, c_uint, c_void_p

from . import _lib

H2D, D2H, D2D = 1, 2, 3
LEGACY_STREAM = 1 # cudaStreamLegacy
STREAM_NON_BLOCKING = 1


class CudaError(RuntimeError):
    """A CUDA call failed, or CUDA is not available."""


def _loaded(fragment):
    """The path of a loaded shared object whose file name starts with fragment, or None."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split(None, 5)[-1].strip()
                if os.path.basename(path).startswith(fragment):
                    return path
    except OSError:
        pass
    return None


def _open(fragment, names):
    """The loaded library whose file name starts with fragment, else the first of names
    that loads; (CDLL, path)."""
    path = _loaded(fragment)
    errors = []
    for name in ([path] if path else []) + names:
        try:
            return ctypes.CDLL(name), name
        except OSError as e:
            errors.append(str(e))
    raise CudaError("cannot load %s (%s)" % (fragment, "; ".join(errors)))


class Runtime:
    """The CUDA runtime calls the package makes."""

    def __init__(self, lib, path):
        self.lib = lib
        self.path = path
        proto = {
            "cudaGetErrorString": (c_char_p, [c_int]),
            "cudaGetDeviceCount": (c_int, [POINTER(c_int)]),
            "cudaGetDevice": (c_int, [POINTER(c_int)]),
            "cudaSetDevice": (c_int, [c_int]),
            "cudaDeviceGetAttribute": (c_int, [POINTER(c_int), c_int, c_int]),
            "cudaRuntimeGetVersion": (c_int, [POINTER(c_int)]),
            "cudaMalloc": (c_int, [POINTER(c_void_p), c_size_t]),
            "cudaFree": (c_int, [c_void_p]),
            "cudaMemcpyAsync": (c_int, [c_void_p, c_void_p, c_size_t, c_int, c_void_p]),
            "cudaStreamSynchronize": (c_int, [c_void_p]),
            "cudaStreamCreateWithFlags": (c_int, [POINTER(c_void_p), c_uint]),
            "cudaStreamDestroy": (c_int, [c_void_p]),
            "cudaEventCreate": (c_int, [POINTER(c_void_p)]),
            "cudaEventRecord": (c_int, [c_void_p, c_void_p]),
            "cudaEventSynchronize": (c_int, [c_void_p]),
            "cudaEventElapsedTime": (c_int, [POINTER(c_float), c_void_p, c_void_p]),
            "cudaEventDestroy": (c_int, [c_void_p]),
            "cudaStreamIsCapturing": (c_int, [c_void_p, POINTER(c_int)]),
        }
        for name, (restype, argtypes) in proto.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        self.streams = {} # device -> the package's own stream, for runs no framework orders

    def check(self, err, what):
        if err != 0:
            text = self.lib.cudaGetErrorString(err)
            raise CudaError("%s: %s" % (what, text.decode() if text else "CUDA error %d" % err))

    def device(self):
        d = c_int(0)
        self.check(self.lib.cudaGetDevice(byref(d)), "cudaGetDevice")
        return d.value

    @contextlib.contextmanager
    def on_device(self, device_id):
        """Makes device_id the current device for the block (None: leave it)."""
        if device_id is None:
            yield
            return
        before = self.device()
        if before != device_id:
            self.check(self.lib.cudaSetDevice(device_id), "cudaSetDevice(%d)" % device_id)
        try:
            yield
        finally:
            if before != device_id:
                self.lib.cudaSetDevice(before)

    def version(self):
        v = c_int(0)
        self.check(self.lib.cudaRuntimeGetVersion(byref(v)), "cudaRuntimeGetVersion")
        return v.value

    def compute_capability(self, device_id):
        major, minor = c_int(0), c_int(0)
        self.check(self.lib.cudaDeviceGetAttribute(byref(major), 75, device_id), "cudaDeviceGetAttribute")
        self.check(self.lib.cudaDeviceGetAttribute(byref(minor), 76, device_id), "cudaDeviceGetAttribute")
        return major.value * 10 + minor.value

    def malloc(self, nbytes):
        p = c_void_p()
        self.check(self.lib.cudaMalloc(byref(p), max(int(nbytes), 1)), "cudaMalloc(%d)" % nbytes)
        return p.value

    def free_quietly(self, address, device_id=None):
        try:
            with self.on_device(device_id):
                self.lib.cudaFree(c_void_p(address))
        except Exception:
            pass

    def copy_async(self, dst, src, nbytes, kind, stream):
        self.check(self.lib.cudaMemcpyAsync(c_void_p(dst), c_void_p(src), nbytes, kind,
                                            c_void_p(stream)), "cudaMemcpyAsync")

    def sync(self, stream):
        self.check(self.lib.cudaStreamSynchronize(c_void_p(stream)), "cudaStreamSynchronize")

    def copy_to_host(self, dst, src, nbytes, device_id, stream=None):
        """Copies device memory to the host and waits for it (on `stream`, else the
        package's own stream of that device)."""
        with self.on_device(device_id):
            s = stream if stream is not None else self.own_stream(device_id)
            self.copy_async(dst, src, nbytes, D2H, s)
            self.sync(s)

    def own_stream(self, device_id):
        """A non-blocking stream of the package's on device_id (runs with no stream of their
        own are ordered on it, and JAX arrays are exported to it)."""
        s = self.streams.get(device_id)
        if s is None:
            p = c_void_p()
            with self.on_device(device_id):
                self.check(self.lib.cudaStreamCreateWithFlags(byref(p), STREAM_NON_BLOCKING),
                           "cudaStreamCreateWithFlags")
            s = self.streams[device_id] = p.value
        return s

    def capturing(self, stream):
        """True while `stream` is being captured into a CUDA graph (torch.cuda.graph, say).
        The legacy and per-thread default streams (0, 1, 2) cannot be, and are not asked: asking
        them while another stream is captured would end that capture."""
        if stream is None or int(stream) in (0, 1, 2):
            return False
        status = c_int(0)
        self.check(self.lib.cudaStreamIsCapturing(c_void_p(stream), byref(status)), "cudaStreamIsCapturing")
        if status.value == 2:
            raise CudaError("the stream's capture was invalidated by an earlier call: end it and capture again")
        return status.value == 1

    def event(self):
        e = c_void_p()
        self.check(self.lib.cudaEventCreate(byref(e)), "cudaEventCreate")
        return e.value

    def record(self, event, stream):
        self.check(self.lib.cudaEventRecord(c_void_p(event), c_void_p(stream)), "cudaEventRecord")

    def elapsed_ms(self, start, end):
        self.check(self.lib.cudaEventSynchronize(c_void_p(end)), "cudaEventSynchronize")
        ms = c_float(0)
        self.check(self.lib.cudaEventElapsedTime(byref(ms), c_void_p(start), c_void_p(end)),
                   "cudaEventElapsedTime")
        return ms.value

    def destroy_event(self, event):
        self.lib.cudaEventDestroy(c_void_p(event))


_lock = threading.Lock()
_runtime = None
_available = None


def available():
    """(True, "") where libcfx has CUDA executors and a device, else (False, why)."""
    global _available
    if _available is None:
        why = ctypes.create_string_buffer(512)
        ok = _lib.lib.cfx_backend_available(_lib.BACKEND_CODE["cuda-host"], why, len(why))
        _available = (bool(ok), why.value.decode("utf-8", "replace"))
    return _available


def runtime():
    """The CUDA runtime that libcfx's CUDA module uses; CudaError where there is none."""
    global _runtime
    with _lock:
        if _runtime is None:
            ok, why = available() # loads the module, and with it the runtime
            if not ok:
                raise CudaError("CUDA is not available: %s" % why)
            _runtime = Runtime(*_open("libcudart.so", ["libcudart.so", "libcudart.so.13",
                                                       "libcudart.so.12", "libcudart.so.11.0"]))
        return _runtime


# ---- the driver and NVRTC: application kernels written as CUDA C ----------------------------

class Driver:
    def __init__(self, lib):
        self.lib = lib
        proto = {
            "cuGetErrorString": (c_int, [c_int, POINTER(c_char_p)]),
            "cuModuleLoadData": (c_int, [POINTER(c_void_p), c_char_p]),
            "cuModuleGetFunction": (c_int, [POINTER(c_void_p), c_void_p, c_char_p]),
            "cuLaunchKernel": (c_int, [c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint,
                                       c_uint, c_void_p, POINTER(c_void_p), POINTER(c_void_p)]),
        }
        for name, (restype, argtypes) in proto.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes

    def check(self, err, what):
        if err != 0:
            s = c_char_p()
            self.lib.cuGetErrorString(err, byref(s))
            raise CudaError("%s: %s" % (what, s.value.decode() if s.value else "CUDA driver error %d" % err))

    def load(self, ptx, lowered_name):
        """The CUfunction of lowered_name in a PTX image, loaded into the current context."""
        module, fn = c_void_p(), c_void_p()
        self.check(self.lib.cuModuleLoadData(byref(module), ptx), "cuModuleLoadData")
        self.check(self.lib.cuModuleGetFunction(byref(fn), module, lowered_name),
                   "cuModuleGetFunction(%s)" % lowered_name.decode())
        return fn.value

    def launch(self, fn, grid, block, shared, stream, params):
        self.check(self.lib.cuLaunchKernel(c_void_p(fn), grid, 1, 1, block, 1, 1, shared,
                                           c_void_p(stream), params, None), "cuLaunchKernel")


class Nvrtc:
    def __init__(self, lib):
        self.lib = lib
        proto = {
            "nvrtcGetErrorString": (c_char_p, [c_int]),
            "nvrtcCreateProgram": (c_int, [POINTER(c_void_p), c_char_p, c_char_p, c_int,
                                           c_void_p, c_void_p]),
            "nvrtcAddNameExpression": (c_int, [c_void_p, c_char_p]),
            "nvrtcCompileProgram": (c_int, [c_void_p, c_int, POINTER(c_char_p)]),
            "nvrtcGetLoweredName": (c_int, [c_void_p, c_char_p, POINTER(c_char_p)]),
            "nvrtcGetProgramLogSize": (c_int, [c_void_p, POINTER(c_size_t)]),
            "nvrtcGetProgramLog": (c_int, [c_void_p, c_char_p]),
            "nvrtcGetPTXSize": (c_int, [c_void_p, POINTER(c_size_t)]),
            "nvrtcGetPTX": (c_int, [c_void_p, c_char_p]),
            "nvrtcDestroyProgram": (c_int, [POINTER(c_void_p)]),
            "nvrtcGetNumSupportedArchs": (c_int, [POINTER(c_int)]),
            "nvrtcGetSupportedArchs": (c_int, [POINTER(c_int)]),
        }
        for name, (restype, argtypes) in proto.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes

    def check(self, err, what):
        if err != 0:
            s = self.lib.nvrtcGetErrorString(err)
            raise CudaError("%s: %s" % (what, s.decode() if s else "NVRTC error %d" % err))

    def arch(self, cc):
        """The newest virtual architecture NVRTC knows that a device of compute capability
        cc runs (its PTX is then compiled by the driver for the device)."""
        n = c_int(0)
        self.check(self.lib.nvrtcGetNumSupportedArchs(byref(n)), "nvrtcGetNumSupportedArchs")
        archs = (c_int * max(n.value, 1))()
        self.check(self.lib.nvrtcGetSupportedArchs(archs), "nvrtcGetSupportedArchs")
        fitting = [a for a in archs[:n.value] if a <= cc]
        if not fitting:
            raise CudaError("NVRTC supports no architecture up to sm_%d" % cc)
        return max(fitting)

    def compile(self, source, name, entry, cc, options=()):
        """(PTX, lowered name of entry); a failed compile raises CudaError with the log."""
        prog = c_void_p()
        self.check(self.lib.nvrtcCreateProgram(byref(prog), source.encode(), (name + ".cu").encode(),
                                               0, None, None), "nvrtcCreateProgram")
        try:
            self.check(self.lib.nvrtcAddNameExpression(prog, entry.encode()), "nvrtcAddNameExpression")
            opts = ["--gpu-architecture=compute_%d" % self.arch(cc)] + list(options)
            arr = (c_char_p * len(opts))(*[o.encode() for o in opts])
            err = self.lib.nvrtcCompileProgram(prog, len(opts), arr)
            size = c_size_t(0)
            self.lib.nvrtcGetProgramLogSize(prog, byref(size))
            log = ctypes.create_string_buffer(max(size.value, 1))
            self.lib.nvrtcGetProgramLog(prog, log)
            if err != 0:
                raise CudaError("NVRTC could not compile kernel '%s':\n%s"
                                % (name, log.value.decode("utf-8", "replace").rstrip()))
            lowered = c_char_p()
            self.check(self.lib.nvrtcGetLoweredName(prog, entry.encode(), byref(lowered)),
                       "nvrtcGetLoweredName(%s)" % entry)
            lowered_name = lowered.value # owned by prog: copy before destroying it
            self.check(self.lib.nvrtcGetPTXSize(prog, byref(size)), "nvrtcGetPTXSize")
            ptx = ctypes.create_string_buffer(size.value)
            self.check(self.lib.nvrtcGetPTX(prog, ptx), "nvrtcGetPTX")
            return ptx.raw, bytes(lowered_name)
        finally:
            self.lib.nvrtcDestroyProgram(byref(prog))


_driver = None
_nvrtc = None


def driver():
    global _driver
    with _lock:
        if _driver is None:
            _driver = Driver(_open("libcuda.so", ["libcuda.so.1", "libcuda.so"])[0])
        return _driver


def nvrtc():
    global _nvrtc
    rt = runtime()
    with _lock:
        if _nvrtc is None:
            # NVRTC of the runtime's major version, looked for beside the runtime first (the
            # toolkit's lib folder is often not on the library path)
            name = "libnvrtc.so.%d" % (rt.version() // 1000)
            beside = os.path.join(os.path.dirname(rt.path), name) if os.sep in rt.path else name
            _nvrtc = Nvrtc(_open("libnvrtc.so", [beside, name, "libnvrtc.so"])[0])
        return _nvrtc
