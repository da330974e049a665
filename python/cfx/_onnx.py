"""_onnx.py: ONNX models (and PyTorch modules exported to ONNX) as cfx modules.

The import itself is libcfx's (cfx_import_onnx, in C): this file hands it the model's bytes
and the types of symbolic inputs, and wraps what comes back as the Module cfx.compile gives.
The onnx package is imported only to serialize an onnx.ModelProto handed in; torch only by
from_torch. A libcfx built without protobuf-c (or older than the importer) loads as usual:
onnx_available() is then False and load_onnx raises cfx.Error saying how to get it.
"""
import ctypes
import os
import re

from . import _core, _lib
from ._core import CompileError, Error, Module, default_context
from ._lib import lib

# Optional symbols: not in _lib's prototypes, so that a libcfx without them still loads.
_ONNX_PROTOTYPES = {
    "cfx_onnx_available": (ctypes.c_int, []),
    "cfx_import_onnx": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p,
                                          ctypes.c_size_t, ctypes.c_void_p, ctypes.c_int,
                                          ctypes.POINTER(ctypes.c_void_p)]),
}
_bound = None


class InputType(ctypes.Structure):
    """cfx_input_shape: an input's name and the type that fixes its symbolic dimensions (and
    no value)."""
    _fields_ = [("name", ctypes.c_char_p), ("type", _lib.Type), ("value", ctypes.c_void_p)]


# The inputs and outputs of 0 elements an import knows (optional: an older libcfx has none).
_KNOWN_PROTOTYPES = {
    "cfx_known_input_count": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    "cfx_known_input_name": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]),
    "cfx_known_input_type": (_lib.Type, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]),
    "cfx_known_result_count": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    "cfx_known_result_name": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]),
    "cfx_known_result_type": (_lib.Type, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]),
}


def _known(ptr, kind):
    """{name: Param} of the entry graph's inputs or results (kind) of 0 elements."""
    fns = {}
    for name, (restype, argtypes) in _KNOWN_PROTOTYPES.items():
        if name.startswith("cfx_known_" + kind):
            if not hasattr(lib, name):
                return {}
            fns[name[len("cfx_known_" + kind) + 1:]] = fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
    found = {}
    for i in range(fns["count"](ptr, 0)):
        name = _lib.text(fns["name"](ptr, 0, i))
        found[name] = _core.Param(name, *_lib.type_of(fns["type"](ptr, 0, i)))
    return found


def _functions():
    """{name: ctypes function} of the importer's entry points, or None where this libcfx has
    none of them."""
    global _bound
    if _bound is None:
        found = {}
        for name, (restype, argtypes) in _ONNX_PROTOTYPES.items():
            if not hasattr(lib, name):
                _bound = {}
                return None
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
            found[name] = fn
        _bound = found
    return _bound or None


def onnx_available():
    """True where this libcfx imports ONNX models (it was built with protobuf-c)."""
    fns = _functions()
    return bool(fns and fns["cfx_onnx_available"]())


# ---- the input types a model declares, read from its bytes (no onnx package needed) ---------

# TensorProto.DataType -> cfx dtype (those cfx takes; float16 and bfloat16 are held in f32, and
# such an input takes float16 or bfloat16 arrays too; int8, uint8, int16, uint16 in i32 and uint32
# in i64, and such an input takes arrays of those dtypes too; uint64 in i64 as its bits, and such
# an input takes uint64 arrays, viewed as int64)
_ONNX_DTYPE = {1: "f32", 6: "i32", 7: "i64", 9: "bool", 10: "f16", 11: "f64", 16: "bf16",
               2: "u8", 3: "i8", 4: "u16", 5: "i16", 12: "u32", 13: "u64",
               17: "f8e4m3fn", 18: "f8e4m3fnuz", 19: "f8e5m2", 20: "f8e5m2fnuz", 23: "f4e2m1", 24: "f8e8m0",
               21: "u4", 22: "i4", 25: "u2", 26: "i2"}
# the float8 types and float4e2m1 held in f32 (ml_dtypes' arrays of them taken), the 4- and 2-bit
# integers in i32
# the declared dtypes held in another, and the numpy dtypes such an input takes and widens
_HELD = {"f16": "f32", "bf16": "f32", "u8": "i32", "i8": "i32", "u16": "i32", "i16": "i32", "u32": "i64",
         "u64": "i64", "f8e4m3fn": "f32", "f8e4m3fnuz": "f32", "f8e5m2": "f32", "f8e5m2fnuz": "f32",
         "f4e2m1": "f32", "f8e8m0": "f32", "u4": "i32", "i4": "i32", "u2": "i32", "i2": "i32"}
_HELD_NUMPY = {"f32": ("float16", "bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                       "float4_e2m1fn", "float8_e8m0fnu"),
               "i32": ("int8", "uint8", "int16", "uint16", "int4", "uint4", "int2", "uint2"),
               "i64": ("uint32", "uint64")}


def _varint(buf, i):
    shift = value = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ValueError("truncated varint")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7


def _fields(buf):
    """(field number, wire type, value) of each field of a protobuf message: an int for a
    varint or fixed field, a memoryview for a length-delimited one."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 1:
            value, i = int.from_bytes(buf[i:i + 8], "little"), i + 8
        elif wire == 5:
            value, i = int.from_bytes(buf[i:i + 4], "little"), i + 4
        elif wire == 2:
            n, i = _varint(buf, i)
            if i + n > len(buf):
                raise ValueError("truncated field")
            value, i = buf[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wire)
        yield number, wire, value


def _declared_dtypes(data):
    """{input name: cfx dtype name or None} of the main graph's inputs (ModelProto.graph = 7,
    GraphProto.input = 11, ValueInfoProto.name = 1 and .type = 2, TypeProto.tensor_type = 1,
    TypeProto.Tensor.elem_type = 1); {} where the bytes do not parse."""
    found = {}
    try:
        buf = memoryview(data)
        for n, w, graph in _fields(buf):
            if n != 7 or w != 2:
                continue
            for gn, gw, vi in _fields(graph):
                if gn != 11 or gw != 2:
                    continue
                name, elem = None, None
                for vn, vw, v in _fields(vi):
                    if vn == 1 and vw == 2:
                        name = bytes(v).decode("utf-8", "replace")
                    elif vn == 2 and vw == 2:
                        for tn, tw, t in _fields(v):
                            if tn == 1 and tw == 2:
                                for en, ew, e in _fields(t):
                                    if en == 1 and ew == 0:
                                        elem = e
                if name is not None:
                    found[name] = _ONNX_DTYPE.get(elem)
    except ValueError:
        return {}
    return found


def _type_of(name, spec, declared):
    """The _lib.Type of shapes[name]: an array (its dtype and shape), a (dtype, shape) pair,
    or a shape alone (the dtype the model declares)."""
    dtype = shape = None
    if hasattr(spec, "shape") and hasattr(spec, "dtype"):
        dtype, shape = str(spec.dtype), tuple(spec.shape)
        dtype = {"float32": "f32", "float64": "f64", "int32": "i32", "int64": "i64",
                 "float16": "f32", "bfloat16": "f32", "int8": "i32", "uint8": "i32", "int16": "i32",
                 "uint16": "i32", "uint32": "i64", "uint64": "i64", "float8_e4m3fn": "f32",
                 "float8_e4m3fnuz": "f32", "float8_e5m2": "f32", "float8_e5m2fnuz": "f32",
                 "float4_e2m1fn": "f32", "float8_e8m0fnu": "f32", "int4": "i32", "uint4": "i32",
                 "int2": "i32", "uint2": "i32",
                 "torch.float32": "f32", "torch.float64": "f64", "torch.int32": "i32",
                 "torch.int64": "i64", "torch.bool": "bool", "torch.float16": "f32",
                 "torch.bfloat16": "f32"}.get(dtype, dtype)
    elif (isinstance(spec, (tuple, list)) and len(spec) == 2 and isinstance(spec[0], str)):
        dtype, shape = spec[0], tuple(spec[1])
    elif isinstance(spec, (tuple, list)):
        shape = tuple(spec)
        dtype = declared.get(name)
        dtype = _HELD.get(dtype, dtype)
        if dtype is None:
            raise TypeError("shapes['%s']: the model declares no input '%s' of a cfx dtype; "
                            "give (dtype, shape) or an example array" % (name, name))
    else:
        raise TypeError("shapes['%s'] must be a shape tuple, a (dtype, shape) pair or an "
                        "array; got %s" % (name, type(spec).__name__))
    if dtype not in _lib.DTYPE_CODE:
        raise TypeError("shapes['%s']: cfx has no dtype %s (it has %s)"
                        % (name, dtype, ", ".join(_lib.DTYPES)))
    if len(shape) > _lib.MAX_RANK:
        raise ValueError("shapes['%s']: rank %d; cfx takes at most %d dimensions"
                         % (name, len(shape), _lib.MAX_RANK))
    t = _lib.Type()
    t.dtype = _lib.DTYPE_CODE[dtype]
    t.rank = len(shape)
    for i, d in enumerate(shape):
        d = int(d)
        if d < 0:
            raise ValueError("shapes['%s']: dimension %d is %d" % (name, i, d))
        t.dims[i] = d
    return t


def _model_bytes(model):
    """(path or None, bytes or None, display name) of a model given as a path, bytes or an
    onnx.ModelProto."""
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if not os.path.exists(path):
            raise FileNotFoundError(2, "No such file", path)
        return path, None, path
    if isinstance(model, (bytes, bytearray, memoryview)):
        return None, bytes(model), "model.onnx"
    if hasattr(model, "SerializeToString"): # an onnx.ModelProto (any protobuf message)
        return None, model.SerializeToString(), "model.onnx"
    raise TypeError("cfx.load_onnx takes a path, the model's bytes or an onnx.ModelProto; "
                    "got %s" % type(model).__name__)


def load_onnx(model, shapes=None, context=None, *, accumulate=None):
    """Imports an ONNX model as a Module, as cfx.compile gives one: one graph, named after
    the model's graph, whose inputs and results are the ONNX graph's inputs (initializers
    excluded) and outputs under their ONNX names (call it with g(**{"input.1": x}) where a
    name is not an identifier).

    model: a path (str or os.PathLike; external data is read from beside it), the
      serialized model (bytes), or an onnx.ModelProto (serialized here).
    shapes: {input name: shape} fixing symbolic dimensions: a shape tuple (the dtype the
      model declares), a (dtype, shape) pair ("f32", (1, 16)), or an example array (its
      dtype and shape). None: the model's declared shapes must be static. An input given a
      shape of 0 elements is known at import (docs/onnx.md): no positional input of the
      graph, it may still be passed by name (its dtype and shape are checked), and an output
      of 0 elements comes back as an empty array. A sequence input: the shape of its items
      stacked along a new first axis, or a list of its items' specs (arrays or (dtype, shape)
      pairs; they may differ in shape), the graph then taking a list of the items under its
      name; a sequence result whose items differ in shape comes back as a list of arrays.
    Raises CompileError (one line naming the node: name, op type, domain, opset) for a model
    cfx cannot import, FileNotFoundError for a missing file, Error where this libcfx was
    built without ONNX support.
    accumulate: the cpu executor's accumulation, "fast" or "f64", as for cfx.compile."""
    _core._accumulate_code(accumulate, "cfx.load_onnx")
    fns = _functions()
    if fns is None:
        raise Error("this libcfx (%s) has no ONNX importer: rebuild cfx from a version with "
                    "host/front/onnx.c" % _lib.path)
    path, data, name = _model_bytes(model)
    ctx = context if context is not None else default_context()
    entries, keep = None, []
    n = 0
    if data is None:
        with open(path, "rb") as f:
            declared = _declared_dtypes(f.read())
    else:
        declared = _declared_dtypes(data)
    items = {}
    if shapes:
        # a sequence given item by item: a list of its items' shapes, NAME[0], NAME[1], ...
        flat = {}
        for input_name, spec in shapes.items():
            if isinstance(spec, list) and spec and not isinstance(spec[0], (int, str)):
                items[str(input_name)] = len(spec)
                for k, item in enumerate(spec):
                    flat["%s[%d]" % (input_name, k)] = item
            else:
                flat[input_name] = spec
        shapes = flat
        n = len(shapes)
        entries = (InputType * n)()
        for k, (input_name, spec) in enumerate(shapes.items()):
            b = os.fsencode(input_name) if isinstance(input_name, os.PathLike) else str(input_name).encode()
            keep.append(b)
            entries[k].name = b
            entries[k].type = _type_of(input_name, spec, declared)
    diags = ctypes.c_void_p()
    ptr = fns["cfx_import_onnx"](ctx._ptr, os.fsencode(path) if path else None, data,
                                 len(data) if data is not None else 0,
                                 ctypes.cast(entries, ctypes.c_void_p) if entries is not None else None,
                                 n, ctypes.byref(diags))
    if not ptr:
        text = _lib.take_string(diags.value) or "%s: import failed\n" % name
        if not fns["cfx_onnx_available"]():
            raise Error(text.rstrip("\n"))
        raise CompileError(text)
    _lib.take_string(diags.value)
    module = Module(ptr, name, ctx, accumulate)
    # {input name: the numpy dtypes it takes and widens}: float16 and the narrow integers
    module._half_inputs = {k: _HELD_NUMPY[_HELD[v]] for k, v in declared.items() if v in _HELD}
    # inputs of 0 elements (their shape given here): taken by name, checked, not read; outputs of
    # 0 elements: handed back as empty arrays
    module._known_inputs = _known(module._ptr, "input")
    module._known_results = _known(module._ptr, "result")
    # a sequence given item by item takes a list; a sequence result of items of differing shapes
    # (NAME[0], NAME[1], ...) comes back as a list
    module._seq_items = {k: v for k, v in items.items() if "%s[0]" % k in module.entry._input_index}
    names = [p.name for p in module.entry.results]
    for name in names:
        m = re.match(r"^(.*)\[0\]$", name)
        if m and m.group(1) not in names:
            count = 0
            while "%s[%d]" % (m.group(1), count) in names:
                count += 1
            module._seq_results[m.group(1)] = count
    return module


def from_torch(module, example_args, *, shapes=None, context=None, accumulate=None, **export_kwargs):
    """Exports a PyTorch module with torch.onnx.export(module, example_args, dynamo=True)
    in memory (no file, no external data) and imports it with load_onnx. example_args: a
    tuple of the forward's arguments (a single tensor is taken as a 1-tuple); export_kwargs
    go to torch.onnx.export (input_names=, opset_version=, ...). The graph's inputs are the
    exported model's input names (for dynamo export, the forward's parameter names), in the
    forward's order, so g(*example_args) runs it. An export with dynamic_shapes= is imported
    for the example arguments' shapes unless shapes= gives others. Raises ImportError without
    torch."""
    try:
        import torch
        import torch.onnx
    except ImportError as e:
        raise ImportError("cfx.from_torch needs PyTorch (python3 -m pip install torch) and the "
                          "onnx package torch's exporter uses (python3 -m pip install onnx "
                          "onnxscript): %s" % e) from None
    if not isinstance(example_args, tuple):
        example_args = (example_args,)
    export_kwargs.setdefault("dynamo", True)
    if export_kwargs.get("external_data"):
        raise ValueError("cfx.from_torch keeps the model in memory: external_data is not taken")
    try:
        program = torch.onnx.export(module, example_args, **export_kwargs)
    except Exception as e:
        program = _export_uninlined(torch, module, example_args, export_kwargs, e)
    if program is None:
        raise Error("torch.onnx.export returned no ONNXProgram (use a torch with "
                    "dynamo=True export: 2.5 or later)")
    proto = getattr(program, "model_proto", None)
    if proto is None:
        raise Error("torch.onnx.export's ONNXProgram has no model_proto (torch 2.5 or later)")
    if shapes is None and export_kwargs.get("dynamic_shapes") is not None:
        shapes = _example_shapes(torch, proto, example_args)
    return load_onnx(proto.SerializeToString(), shapes, context=context, accumulate=accumulate)


def _example_shapes(torch, proto, example_args):
    """{input name: example tensor}: an export with dynamic_shapes leaves symbolic dimensions,
    which the import fixes to the example arguments' (load again with shapes= for others). None
    where the graph's inputs are not the example tensors one for one."""
    inits = {t.name for t in proto.graph.initializer}
    names = [i.name for i in proto.graph.input if i.name not in inits]
    if len(names) != len(example_args) or not all(isinstance(a, torch.Tensor) for a in example_args):
        return None
    return dict(zip(names, example_args))


# Keyword arguments of torch.onnx.export that _export_uninlined passes on unchanged.
_UNINLINED_KWARGS = ("input_names", "output_names", "dynamic_shapes", "verbose")


def _export_uninlined(torch, module, example_args, export_kwargs, error):
    """The ONNXProgram of torch's exporter without its inlining passes, where torch.onnx.export
    failed in them; else raises `error` again.

    PyTorch 2.15 (with onnxscript 0.7) cannot export a torch.cond inside a torch.while_loop:
    the call of the loop body's function gets the ONNX opset's version (20) for the domain
    pkg.torch.__subgraph__ while the body imports that domain at version 1, and the inliner
    that torch.onnx.export always runs (its version conversion, then its optimizer) refuses
    the mismatch ("Opset mismatch when inlining function"). The graph before those passes is
    sound, and cfx imports model-local functions itself, so it is taken from torch's exporter
    with no conversion and no optimization (torch.onnx._internal: a private entry point,
    tried only for this failure)."""
    e, seen = error, set()
    while e is not None and id(e) not in seen:
        if "Opset mismatch when inlining function" in str(e):
            break
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    else:
        raise error
    if not export_kwargs.get("dynamo", True) or set(export_kwargs) - {"dynamo", *_UNINLINED_KWARGS}:
        raise error
    try:
        from torch.onnx._internal.exporter import _core
    except ImportError:
        raise error from None
    kwargs = {k: export_kwargs[k] for k in _UNINLINED_KWARGS if k in export_kwargs}
    return _core.export(module, example_args, optimize=False, opset_version=None, **kwargs)
