#!/usr/bin/env python3
"""node_tests.py: ONNX's own backend node tests through `cfx run MODEL.onnx --backend cpu`.

    python3 tests/onnx/node_tests.py CFX_BINARY_OR_BUILD_DIR [--jobs N] [--filter REGEX]
                                     [--keep DIR] [--ops OP,OP,...] [--control-flow] [--per-op]
                                     [--backends B,B,...] [--standin BUILD/tests] [-v]

The onnx package (1.23) ships the node tests as Python (onnx.backend.test.case.node) and no
longer their data, so the tests are regenerated here: each case's model.onnx and its inputs
and expected outputs as .npy files, into a temporary folder (--keep DIR: into DIR, kept).
Runs every test whose ops (inside If/Loop/Scan bodies and model-local functions too) are all
in the supported list (docs/onnx.md's table of ops; --ops OP,OP,... instead) and whose tensors are all f32, f64, i32, i64
or bool, or float16, bfloat16, the float8 types, float4e2m1 and float8e8m0 (given as float32,
results checked to be float32 holding values of the type), or int8, uint8, int16, uint16, uint32,
int4, uint4, int2 and uint2 (given as int32, uint32 as int64, results checked to be of that holding
dtype with values of the type), or uint64 (given as int64 holding its
bits, `.view(np.int64)`, results checked to be int64 and compared with the expected uint64 viewed
as int64); compares each output as onnx's
backend test runner does (dtype and shape equal, values within the case's rtol/atol, 1e-3/1e-7 by
default; integers and bools exactly).
Sequences and optionals (docs/onnx.md): a sequence input is given as its items stacked along a
new first axis (the import specialises on its length), or item by item as NAME[0], NAME[1], ...
where its items differ in shape; a sequence result is compared as its items stacked along a
new first axis, as cfx gives it, or item by item (NAME[0], ...) where they differ in shape; an
optional input that is None is left out (its parameter defaults to None).

Prints one line per test run (PASS, FAIL, REFUSED with cfx's message), then the tensor-only
control-flow tests (If, Loop or Scan at any depth, no sequences or optionals) and their status,
the refusals grouped by message, and the totals: passed, failed, refused by cfx, skipped
(ops or dtypes outside the list). Exits 1 when a test cfx accepts gives a wrong answer or
stops, or when cfx crashes (an exit status other than 0 and 1, a signal, a timeout);
refusals (exit 1, one line) are counted, not failures. 77 where the onnx package is missing or
this cfx has no ONNX support. At most 2 processes at a time by default (--jobs).

Run by .ci/run after the README's test command; not by ctest (it takes a minute or more).
"""
import argparse
import collections
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings

RUN_TIMEOUT_S = 60

# The supported ops where docs/onnx.md has no table of them (the list); --ops overrides.
SUPPORTED = set("""
If Loop Scan Add Sub Mul Div Reciprocal Exp Sqrt Relu Ceil Floor Sin Cos Tanh Equal Less Greater
LessOrEqual GreaterOrEqual And Or Xor Not Where Cast CastLike ReduceSum ReduceMax ReduceMin
ReduceMean ArgMax ArgMin MatMul Transpose Identity Shape Size Constant ConstantOfShape Reshape
Squeeze Unsqueeze Flatten Expand Concat Split Slice Gather GatherElements Range Softmax Gemm
Sigmoid Pow Min Max Neg Abs Log Clip Mod Sum Mean Erf
""".split())

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "onnx.md")


def ops_of_docs(path):
    """The ops of docs/onnx.md's table (the section `## The ops`, rows whose first cell is
    op names in backquotes), or None where there is no such file or table."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    m = re.search(r"^## The ops\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    ops = set()
    for row in re.findall(r"^\|\s*`([A-Za-z0-9 ]+)`\s*\|", m.group(1) if m else "", re.M):
        ops.update(row.split())
    return ops if ops and CONTROL_FLOW <= ops else None # a table read wrongly is not used


CONTROL_FLOW = {"If", "Loop", "Scan"}

# The domains whose ops docs/onnx.md's table may name: the default one, and the few ops of
# ai.onnx.ml, ai.onnx.preview.training and ai.onnx.preview the import takes (the table names them
# without a domain).
DOMAINS = ("", "ai.onnx", "ai.onnx.ml", "ai.onnx.preview.training", "ai.onnx.preview")

# The 28 tensor-only node tests holding If, Loop or Scan at any depth (issue 30), as onnx
# 1.23 names them; the list printed is computed from the models, and compared with this one.
CONTROL_FLOW_28 = """
test_if test_loop11 test_scan_sum test_scan9_sum test_scan9_scalar test_scan9_multi_state
test_range_float_type_positive_delta_expanded test_range_float16_type_positive_delta_expanded
test_range_bfloat16_type_positive_delta_expanded test_range_int32_type_negative_delta_expanded
test_affine_grid_2d_expanded test_affine_grid_2d_align_corners_expanded
test_affine_grid_3d_expanded test_affine_grid_3d_align_corners_expanded
""".split()

# Tests whose expected values carry more rounding than their atol (1e-7) allows: the inverse DFT
# tests' are numpy's complex64 ifft of values up to 99, 1.9e-7 where the exact value is 0 (the
# float32 error of the sums; cfx's products differ from the f64 result by as much, and
# onnxruntime 1.32 misses 20 of their 200 values)
ATOL = {"test_dft_inverse": 1e-5, "test_dft_inverse_opset19": 1e-5}

# TensorProto.DataType of the dtypes cfx takes: FLOAT, INT32, INT64, BOOL, FLOAT16, DOUBLE,
# BFLOAT16 (the half types held in f32 and rounded after every op: docs/onnx.md), UINT8, INT8,
# UINT16, INT16 (held in i32), UINT32 (held in i64), wrapped after every op, UINT64 (held in i64
# as its bits), FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT4E2M1, FLOAT8E8M0
# (held in f32, as float16), UINT4, INT4, UINT2, INT2 (held in i32)
CFX_ELEM_TYPES = {1, 6, 7, 9, 10, 11, 16, 2, 3, 4, 5, 12, 13, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26}
CFX_NUMPY = {"float32", "float64", "int32", "int64", "bool"}
# the float8 types, float4e2m1 and float8e8m0, as ml_dtypes names them (numpy has no .npy type for
# them, nor for bfloat16): given as float32, results checked as such, the expected ones saved as
# float32 beside a mark naming the type
MINI_NUMPY = {"float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float4_e2m1fn",
              "float8_e8m0fnu"}
HALF_NUMPY = {"float16", "bfloat16"} | MINI_NUMPY # given to cfx as float32, its results checked as such
# the narrow integers: given to cfx as the dtype holding them, its results checked as such (int4,
# uint4, int2 and uint2 saved as int32 beside a mark naming the type)
NARROW_NUMPY = {"int8": "int32", "uint8": "int32", "int16": "int32", "uint16": "int32", "uint32": "int64",
                "uint64": "int64", "int4": "int32", "uint4": "int32", "int2": "int32", "uint2": "int32"}
PACKED_NUMPY = {"int4", "uint4", "int2", "uint2"}
MARKED = {"bfloat16"} | MINI_NUMPY | PACKED_NUMPY # saved converted, beside output_J.TYPE


def skip(why):
    print("skipped: %s" % why)
    sys.exit(77)


# ---- what a model holds ---------------------------------------------------------------------

def graphs_of(graph):
    """The graph and every subgraph inside its nodes' attributes, at any depth."""
    yield graph
    for node in graph.node:
        for a in node.attribute:
            if a.HasField("g"):
                yield from graphs_of(a.g)
            for g in a.graphs:
                yield from graphs_of(g)


class Survey:
    """The ops (domain, op_type), tensor element types and whether the model has sequences or
    optionals, over the main graph, its subgraphs and its model-local functions."""

    def __init__(self, model):
        self.ops = set()
        self.elem_types = set()
        self.non_tensor = False
        # a sequence given as a graph input: given stacked (write_case);
        # an optional tensor input is a parameter that defaults to None, a sequence result is
        # given as its items stacked (docs/onnx.md)
        self.seq_input = any(_holds_sequence(v.type) for v in model.graph.input)
        local = {(f.domain, f.name) for f in model.functions}
        bodies = [g for g in graphs_of(model.graph)]
        nodes = [n for g in bodies for n in g.node]
        for f in model.functions:
            for n in f.node:
                nodes.append(n)
                for a in n.attribute:
                    if a.HasField("g"):
                        bodies.extend(graphs_of(a.g))
                        nodes.extend(x for g in graphs_of(a.g) for x in g.node)
        for g in bodies:
            for v in list(g.input) + list(g.output) + list(g.value_info):
                self._type(v.type)
            for t in g.initializer:
                self.elem_types.add(t.data_type)
        for n in nodes:
            key = (n.domain or "", n.op_type)
            if key in local:
                continue # its body's nodes are in `nodes`
            self.ops.add(key)
            for a in n.attribute:
                if a.HasField("t"):
                    self.elem_types.add(a.t.data_type)
                for t in a.tensors:
                    self.elem_types.add(t.data_type)
                if n.op_type in ("Cast", "EyeLike", "RandomNormal", "RandomUniform") and a.name in ("to", "dtype"):
                    self.elem_types.add(a.i)
            if n.op_type in ("SequenceConstruct", "SequenceEmpty", "Optional", "OptionalGetElement"):
                self.non_tensor = True

    def _type(self, t):
        kind = t.WhichOneof("value")
        if kind == "tensor_type":
            if t.tensor_type.elem_type:
                self.elem_types.add(t.tensor_type.elem_type)
        elif kind is not None:
            self.non_tensor = True

    def control_flow(self):
        return any(op in CONTROL_FLOW for dom, op in self.ops if dom in ("", "ai.onnx"))

    def outside(self, supported):
        """Why the test is skipped (ops or dtypes outside the list), or None."""
        ops = sorted("%s%s" % (dom + "." if dom not in ("", "ai.onnx") else "", op)
                     for dom, op in self.ops if dom not in DOMAINS or op not in supported)
        if ops:
            return "ops " + " ".join(ops)
        bad = self.elem_types - CFX_ELEM_TYPES
        if bad:
            return "dtypes " + " ".join(sorted(_dtype_name(t) for t in bad))
        return None


def _holds_sequence(t):
    kind = t.WhichOneof("value")
    if kind == "sequence_type":
        return True
    if kind == "optional_type":
        return _holds_sequence(t.optional_type.elem_type)
    return False


def seq_item_type(t):
    """(numpy dtype, shape) of the items of a sequence type (through optionals), or None where
    the model leaves them open."""
    from onnx import helper
    while t.WhichOneof("value") in ("optional_type", "sequence_type"):
        t = t.optional_type.elem_type if t.WhichOneof("value") == "optional_type" else t.sequence_type.elem_type
    if t.WhichOneof("value") != "tensor_type" or not t.tensor_type.HasField("shape"):
        return None
    dims = t.tensor_type.shape.dim
    if any(not dim.HasField("dim_value") for dim in dims):
        return None
    return helper.tensor_dtype_to_np_dtype(t.tensor_type.elem_type), tuple(dim.dim_value for dim in dims)


def _dtype_name(t):
    from onnx import TensorProto
    try:
        return TensorProto.DataType.Name(t).lower()
    except ValueError:
        return "type %d" % t


# ---- writing a case and running it ----------------------------------------------------------

def to_array(x):
    import numpy as np
    from onnx import TensorProto, numpy_helper
    if isinstance(x, TensorProto):
        return numpy_helper.to_array(x)
    return np.asarray(x)


def stacked(items):
    """A sequence's items stacked along a new first axis, as cfx gives a sequence result; the
    items as a list where their shapes differ (cfx gives them one by one, NAME[0], ...); None
    where empty."""
    import numpy as np
    arrays = [to_array(x) for x in items]
    if not arrays:
        return None
    if any(a.shape != arrays[0].shape for a in arrays):
        return arrays
    return np.stack(arrays)


def item_files(sd, stem, j):
    """[(name suffix, path)] of value j of a data set: [("", STEM_J.npy)] for a tensor, or
    [("[0]", STEM_J_0.npy), ...] for a sequence given item by item; [] where there is none."""
    path = os.path.join(sd, "%s_%d.npy" % (stem, j))
    if os.path.exists(path):
        return [("", path)]
    found = []
    while os.path.exists(os.path.join(sd, "%s_%d_%d.npy" % (stem, j, len(found)))):
        found.append(("[%d]" % len(found), os.path.join(sd, "%s_%d_%d.npy" % (stem, j, len(found)))))
    return found


def write_case(case, d):
    """model.onnx and one folder per data set (input_J.npy, output_J.npy); the input and
    output names; None where some value is not a plain array of a cfx dtype."""
    import numpy as np
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    inits = {t.name for t in case.model.graph.initializer}
    in_names = [v.name for v in case.model.graph.input if v.name not in inits]
    out_names = [v.name for v in case.model.graph.output]
    sets = []
    for k, (inputs, outputs) in enumerate(case.data_sets):
        sd = os.path.join(d, "data_%d" % k)
        os.makedirs(sd, exist_ok=True)
        # a sequence input is given as its items stacked (the import specialises on its length:
        # docs/onnx.md), an empty one as [0, item dims] where the model declares them
        inputs = list(inputs)
        for j, x in enumerate(inputs):
            if isinstance(x, list):
                arrays = [to_array(a) for a in x]
                if any(a.shape != arrays[0].shape for a in arrays):
                    inputs[j] = arrays # given item by item: NAME[0], NAME[1], ...
                    continue
                if not arrays:
                    item = seq_item_type(case.model.graph.input[[v.name for v in case.model.graph.input].index(
                        in_names[j])].type)
                    if item is None:
                        return "an empty sequence input whose items' type the model leaves open"
                    arrays = [np.zeros((0,) + item[1], item[0])]
                inputs[j] = np.stack(arrays) if arrays[0].shape[:1] != (0,) or len(arrays) > 1 else arrays[0]
        # a sequence result is compared with its items stacked (cfx gives it so: docs/onnx.md);
        # an optional input that is None is left out (the parameter defaults to None)
        outputs = [stacked(x) if isinstance(x, list) else x for x in outputs]
        if any(x is None for x in outputs):
            return None
        # a sequence of items of differing shapes: one file per item, STEM_J_K.npy
        flat = [a for x in inputs + outputs if x is not None for a in (x if isinstance(x, list) else [x])]
        arrays = [to_array(x) for x in flat]
        if any(a.dtype.name not in CFX_NUMPY | HALF_NUMPY | set(NARROW_NUMPY) for a in arrays):
            return None
        for j, x in enumerate(inputs):
            for suffix, a in ([("_%d" % k, a) for k, a in enumerate(x)] if isinstance(x, list) else [("", x)]):
                if a is None:
                    continue
                a = to_array(a)
                if a.dtype.name in HALF_NUMPY:
                    a = a.astype(np.float32)
                if a.dtype.name == "uint64":
                    a = a.view(np.int64)
                elif a.dtype.name in NARROW_NUMPY:
                    a = a.astype(NARROW_NUMPY[a.dtype.name])
                np.save(os.path.join(sd, "input_%d%s.npy" % (j, suffix)), np.array(a, order="C"))
        for j, x in enumerate(outputs):
            for suffix, a in ([("_%d" % k, a) for k, a in enumerate(x)] if isinstance(x, list) else [("", x)]):
                a = to_array(a)
                if a.dtype.name in MARKED: # numpy has no .npy type for it: float32 or int32, and a mark
                    open(os.path.join(sd, "output_%d%s.%s" % (j, suffix, a.dtype.name)), "w").close()
                    a = a.astype(np.int32 if a.dtype.name in PACKED_NUMPY else np.float32)
                np.save(os.path.join(sd, "output_%d%s.npy" % (j, suffix)), np.array(a, order="C"))
        sets.append((sd, len(inputs), len(outputs)))
    return in_names, out_names, sets


def half_problem(np, name, got, half):
    """A float16, bfloat16, float8, float4e2m1 or float8e8m0 result comes as float32 holding values
    of that type (docs/onnx.md): a value the type does not hold was not rounded."""
    if got.dtype != np.float32:
        return "%s is %s, expected float32 holding %s values" % (name, got.dtype, half)
    if half == "float16":
        with np.errstate(over="ignore"):
            held = got.astype(np.float16).astype(np.float32) == got
    elif half in MINI_NUMPY:
        import ml_dtypes
        with np.errstate(over="ignore", invalid="ignore"):
            held = got.astype(getattr(ml_dtypes, half)).astype(np.float32) == got
    else:
        held = (got.view(np.uint32) & 0xFFFF) == 0
    if half != "float4_e2m1fn": # the one without NaN
        held |= np.isnan(got)
    if not np.all(held):
        k = tuple(int(i) for i in np.argwhere(~held)[0]) if got.ndim else ()
        return "%s%s = %r is not a %s value" % (name, list(k) if k else "", got[k].item(), half)
    return None


def narrow_problem(np, name, got, want, packed=None):
    """An int8 ... uint32 result comes as the dtype holding it (int32, uint32's int64) holding
    values of the type (docs/onnx.md): a value outside the type's range was not wrapped. A uint64
    result comes as int64 holding its bits (every int64 is some uint64's). An int4 ... uint2 one
    (packed: its name; want is int32) likewise."""
    held = NARROW_NUMPY[packed or want.dtype.name]
    if got.dtype != held:
        return "%s is %s, expected %s holding %s values" % (name, got.dtype, held, packed or want.dtype)
    if want.dtype.name == "uint64":
        return None
    if packed:
        import ml_dtypes
        info = ml_dtypes.iinfo(getattr(ml_dtypes, packed))
        bad = (got < int(info.min)) | (got > int(info.max))
        if np.any(bad):
            k = tuple(int(i) for i in np.argwhere(bad)[0]) if got.ndim else ()
            return "%s%s = %r is not a %s value" % (name, list(k) if k else "", got[k].item(), packed)
        return None
    info = np.iinfo(want.dtype)
    bad = (got < info.min) | (got > info.max)
    if np.any(bad):
        k = tuple(int(i) for i in np.argwhere(bad)[0]) if got.ndim else ()
        return "%s%s = %r is not a %s value" % (name, list(k) if k else "", got[k].item(), want.dtype)
    return None


def compare(np, name, got, want, rtol, atol, half=None):
    if half in PACKED_NUMPY:
        problem = narrow_problem(np, name, got, want, half)
        if problem:
            return problem
        half = None
    elif want.dtype.name in NARROW_NUMPY:
        problem = narrow_problem(np, name, got, want)
        if problem:
            return problem
        want = want.view(np.int64) if want.dtype.name == "uint64" else want.astype(got.dtype)
    if half:
        problem = half_problem(np, name, got, half)
        if problem:
            return problem
        want = want.astype(np.float32)
        if half == "bfloat16": # as onnx's own backend runner: two bfloat16 steps
            rtol = max(rtol, 2.0 ** -6)
    if got.dtype != want.dtype:
        return "%s is %s, expected %s" % (name, got.dtype, want.dtype)
    if got.shape != want.shape:
        return "%s has shape %s, expected %s" % (name, list(got.shape), list(want.shape))
    if want.dtype.kind in "biu":
        bad = got != want
    else:
        bad = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        bad |= np.isnan(got) != np.isnan(want)
    if np.any(bad):
        k = tuple(int(i) for i in np.argwhere(bad)[0]) if got.ndim else ()
        return "%s%s = %r, expected %r (%d of %d differ)" % (
            name, list(k) if k else "", got[k].item(), want[k].item(), int(bad.sum()), bad.size)
    return None


def first_line(text):
    lines = text.strip().splitlines()
    return lines[0][:300] if lines else ""


def run_case(cfx, case_dir, in_names, out_names, sets, rtol, atol, backend="cpu"):
    """("pass" | "fail" | "refused", detail)."""
    import numpy as np
    model = os.path.join(case_dir, "model.onnx")
    for k, (sd, nin, nout) in enumerate(sets):
        if nin != len(in_names) or nout != len(out_names):
            # a test that leaves trailing optional inputs out: bind what it gives
            pass
        cmd = [cfx, "run", model, "--backend", backend]
        for j in range(nin):
            for suffix, path in item_files(sd, "input", j): # none: None, for an optional input
                cmd += ["--in", "%s%s=%s" % (in_names[j], suffix, path)]
        got = [] # (name, the file cfx writes, the file expected)
        for j in range(nout):
            for suffix, want in item_files(sd, "output", j):
                path = os.path.join(sd, "got_%d%s_%s.npy" % (j, want[len(os.path.join(sd, "output_%d" % j)):-4],
                                                              backend))
                if os.path.exists(path):
                    os.remove(path)
                got.append((out_names[j] + suffix, path, want))
                cmd += ["--out", "%s%s=%s" % (out_names[j], suffix, path)]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return "fail", "timed out after %d s" % RUN_TIMEOUT_S
        if p.returncode == 1:
            return "refused", first_line(p.stderr or p.stdout)
        if p.returncode != 0:
            what = ("killed by signal %d" % -p.returncode if p.returncode < 0
                    else "exit %d" % p.returncode)
            return "fail", "%s: %s" % (what, first_line(p.stderr or p.stdout))
        problems = []
        for name, path, want_path in got:
            if not os.path.exists(path):
                problems.append("%s: no file written" % name)
                continue
            want = np.load(want_path)
            half = "float16" if want.dtype == np.float16 else None
            for mark in MARKED:
                if os.path.exists(want_path[:-len(".npy")] + "." + mark):
                    half = mark
            pr = compare(np, name, np.load(path), want, rtol, atol, half)
            if pr:
                problems.append(pr)
        if problems:
            return "fail", "; ".join(problems)
    return "pass", ""


def graph_params(text):
    """The parameter names of the first graph of a .cfx text, in order."""
    m = re.search(r"^graph\s+\w+\s*\(", text, re.M)
    if not m:
        return []
    depth, cur, names = 0, "", []
    for ch in text[m.end():]:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            names.append(cur.split(":")[0].strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        names.append(cur.split(":")[0].strip())
    return names


def standin_sample(passing, ops_of, work):
    """One passing test per op the passing tests hold, beside the control-flow ones: for each op,
    the test with the least data among those holding it (one that is no function's expansion
    first), unless a test already chosen holds the op. So that every op the import writes runs
    through the stand-ins at least once, in seconds."""
    def data_bytes(name):
        d = os.path.join(work, name)
        return sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(d) for f in files)
    def empty_input(name):  # an input of no elements is known at import: chosen last
        import numpy as np
        d = os.path.join(work, name, "data_0")
        for f in sorted(os.listdir(d)) if os.path.isdir(d) else ():
            if f.startswith("input_") and f.endswith(".npy") and np.load(os.path.join(d, f), mmap_mode="r").size == 0:
                return True
        return False
    size = {n: data_bytes(n) for n in passing}
    order = sorted(passing, key=lambda n: (empty_input(n), n.endswith("_expanded"), size[n], n))
    chosen, covered = [], set()
    for op in sorted(set().union(*(ops_of[n] for n in passing)) if passing else ()):
        if op in covered:
            continue
        name = next(n for n in order if op in ops_of[n])
        chosen.append(name)
        covered |= ops_of[name]
    return sorted(chosen)


def run_standin(tests_dir, cfx, work, names, in_names):
    """The models of the tests `names`, imported to .cfx (on the shapes of their
    first data set, as `cfx run` specialises them) with each data set's inputs as a `# run:`
    line, through test_gen --files (the compiled kernel's generated C and its CUDA C on host
    threads) and test_sched --files (the interpreter's kernel on host threads), against the cpu
    executor. True when both pass (or skip)."""
    d = os.path.join(work, "standin")
    os.makedirs(d, exist_ok=True)
    files = []
    for name in names:
        path = os.path.join(d, name + ".cfx")
        cmd = [cfx, "import", os.path.join(work, name, "model.onnx"), "-o", path]
        d0 = os.path.join(work, name, "data_0")
        for j, n in enumerate(in_names[name]):
            for suffix, first in item_files(d0, "input", j):
                cmd += ["--in", "%s%s=%s" % (n, suffix, first)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        if p.returncode != 0:
            print("stand-in: %s: cfx import failed: %s" % (name, first_line(p.stderr or p.stdout)))
            return False
        with open(path) as f:
            text = f.read()
        params = graph_params(text)
        # inputs of 0 elements are known at import, no parameters (docs/onnx.md)
        import numpy as np
        given = [os.path.basename(f) for j in range(len(in_names[name])) for _, f in item_files(d0, "input", j)
                 if np.load(f, mmap_mode="r").size] # (a sequence's items one by one)
        lines = []
        for sd in sorted(os.listdir(os.path.join(work, name))):
            inputs = [os.path.join(work, name, sd, f) for f in given[:len(params)]]
            if sd.startswith("data_") and all(os.path.exists(x) for x in inputs):
                lines.append("# run: " + " ".join("%s=%s" % (n, x) for n, x in zip(params, inputs)))
        with open(path, "a") as f:
            f.write("\n".join(lines) + "\n")
        files.append(path)
    ok = True
    for test, what in (("test_gen", "generated C and CUDA C on host threads"),
                       ("test_sched", "the interpreter's kernel on host threads")):
        exe = os.path.abspath(os.path.join(tests_dir, test))
        print("\nthe %d tests above, through %s --files (%s, against the cpu "
              "executor):" % (len(files), test, what))
        sys.stdout.flush()
        p = subprocess.run([exe, "--files"] + files, cwd=d, capture_output=True, text=True,
                           timeout=1800)
        for line in (p.stdout + p.stderr).strip().splitlines()[-12:]:
            print("  " + line)
        ok = ok and p.returncode in (0, 77)
    return ok


def onnx_support(cfx, work):
    """None where this cfx imports ONNX, else why not."""
    from onnx import TensorProto, helper
    g = helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = os.path.join(work, "probe.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    p = subprocess.run([cfx, "check", path], capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    if p.returncode == 0:
        return None
    if "protobuf-c" in p.stderr:
        return "this cfx was built without ONNX support: " + first_line(p.stderr)
    if re.search(r"\.onnx:\d+:\d+: error: ", p.stderr):
        return "this cfx has no ONNX importer (it reads model.onnx as .cfx text)"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("cfx")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--filter", default=None, help="only tests whose name matches REGEX")
    ap.add_argument("--keep", default=None, help="write the tests into DIR and keep them")
    ap.add_argument("--ops", default=None, help="the supported ops, comma-separated")
    ap.add_argument("-v", "--verbose", action="store_true", help="print skipped tests too")
    ap.add_argument("--per-op", action="store_true",
                    help="only the control-flow tests and one test per op the others hold (the one of "
                         "least data): every op the import writes, in a fraction of the time")
    ap.add_argument("--control-flow", action="store_true",
                    help="only the tensor-only tests with If, Loop or Scan at any depth")
    ap.add_argument("--backends", default="cpu",
                    help="run each test on these backends, comma-separated (default cpu; a GPU "
                         "machine: cpu,cuda-host,cuda-graph,cuda-persistent); a test passes when it "
                         "passes on every one")
    ap.add_argument("--standin", default=None, metavar="TESTS_DIR",
                    help="also run the control-flow tests that pass, and one passing test per op "
                         "the others hold (the one of least data), imported with `cfx import`, "
                         "through TESTS_DIR/test_gen --files (the compiled kernel's generated C, and "
                         "its CUDA C on host threads) and TESTS_DIR/test_sched --files (the "
                         "interpreter's kernel on host threads), against the cpu executor")
    args = ap.parse_args()
    try:
        import numpy  # noqa: F401
        import onnx
        from onnx.backend.test.case import node as node_cases
    except ImportError as e:
        skip("%s: python3 -m pip install onnx numpy" % e)
    cfx = os.path.join(args.cfx, "cfx") if os.path.isdir(args.cfx) else args.cfx
    if not os.access(cfx, os.X_OK):
        print("no cfx binary at %s" % cfx, file=sys.stderr)
        return 2
    if args.ops:
        supported, source = set(args.ops.split(",")), "--ops"
    else:
        supported, source = ops_of_docs(DOCS), "docs/onnx.md"
        if supported is None:
            supported, source = SUPPORTED, "this script's list"
    work = args.keep or tempfile.mkdtemp(prefix="cfx_onnx_node_")
    os.makedirs(work, exist_ok=True)
    try:
        why = onnx_support(cfx, work)
        if why:
            skip(why)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cases = node_cases.collect_testcases(None)
        if args.filter:
            cases = [c for c in cases if re.search(args.filter, c.name)]
        print("onnx %s: %d node tests; %d supported ops (from %s); backends: %s"
              % (onnx.__version__, len(cases), len(supported), source, args.backends))

        status = {}          # name -> (status, detail)
        control_flow = []    # tensor-only tests with If/Loop/Scan at any depth
        control_flow_seq = [] # the same with sequences or optionals
        jobs = []
        ops_of = {}          # name -> the (domain, op) pairs it holds
        for c in sorted(cases, key=lambda c: c.name):
            s = Survey(c.model)
            ops_of[c.name] = set(s.ops)
            if s.control_flow() and not s.non_tensor:
                control_flow.append(c.name)
            elif s.control_flow():
                control_flow_seq.append(c.name)
            elif args.control_flow:
                continue
            why = s.outside(supported)
            if why is None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    written = write_case(c, os.path.join(work, c.name))
                if written is None:
                    why = "dtypes of its data outside cfx's"
                elif isinstance(written, str):
                    why, written = written, None
            if why is not None:
                status[c.name] = ("skipped", why)
                if args.verbose:
                    print("%-60s skipped: %s" % (c.name, why))
                continue
            jobs.append((c, written))
        if args.per_op:
            sample = set(standin_sample([c.name for c, _ in jobs if c.name not in control_flow], ops_of, work))
            for c, _ in jobs:
                if c.name not in control_flow and c.name not in sample:
                    status[c.name] = ("skipped", "--per-op")
            jobs = [(c, w) for c, w in jobs if c.name in control_flow or c.name in sample]
            print("--per-op: the control-flow tests and %d others, one per op they hold" % len(sample))

        backends = args.backends.split(",")
        rank = {"pass": 0, "refused": 1, "fail": 2}
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(args.jobs, 2))) as pool:
            futures = {pool.submit(run_case, cfx, os.path.join(work, c.name), *w, c.rtol,
                                   max(c.atol, ATOL.get(c.name, 0.0)), b): (c, b)
                       for c, w in jobs for b in backends}
            for fut in concurrent.futures.as_completed(futures):
                c, b = futures[fut]
                st, detail = fut.result()
                if len(backends) > 1 and detail:
                    detail = "%s: %s" % (b, detail)
                # the worst of the backends: a failure over a refusal over a pass
                if c.name not in status or rank[st] > rank[status[c.name][0]]:
                    status[c.name] = (st, detail)
        for c, _ in jobs:
            st, detail = status[c.name]
            print("%-60s %s%s" % (c.name, st.upper(), ": " + detail if detail else ""))

        print("\nthe tensor-only control-flow node tests (If, Loop or Scan at any depth): %d"
              % len(control_flow))
        for name in control_flow:
            st, detail = status[name]
            print("  %-58s %s%s" % (name, st, ": " + detail if detail else ""))
        if control_flow_seq:
            print("the control-flow node tests with sequences or optionals: %d" % len(control_flow_seq))
            for name in control_flow_seq:
                st, detail = status.get(name, ("skipped", "--control-flow"))
                print("  %-58s %s%s" % (name, st, ": " + detail if detail else ""))
        expected_cf = set(CONTROL_FLOW_28) | {c for c in control_flow if c.startswith("test_linear_attention_")}
        if not args.filter and not args.control_flow and set(control_flow) != expected_cf:
            print("  (the issue names 28; here: %d; not found: %s; besides: %s)" % (
                len(control_flow), " ".join(sorted(expected_cf - set(control_flow))) or "-",
                " ".join(sorted(set(control_flow) - expected_cf)) or "-"))

        reasons = collections.Counter()
        for st, detail in status.values():
            if st == "refused":
                # group by the message without the model's path and node names
                key = re.sub(r"^.*?\.onnx:?\s*", "", detail)
                key = re.sub(r"node '[^']*'", "node", key)
                key = re.sub(r"'[^']*'", "'...'", key)
                reasons[key[:120]] += 1
        if reasons:
            print("\nrefusals by message:")
            for key, n in reasons.most_common(25):
                print("  %4d  %s" % (n, key))

        count = collections.Counter(st for st, _ in status.values())
        failed = [n for n, (st, _) in sorted(status.items()) if st == "fail"]
        if args.standin:
            passing = [n for n in control_flow if status[n][0] == "pass"]
            others = [c.name for c, _ in jobs if c.name not in control_flow and status[c.name][0] == "pass"]
            sample = standin_sample(others, ops_of, work)
            print("\nthe stand-ins: the %d control-flow tests that pass and %d others, one per op they hold "
                  "(the one of least data): %s" % (len(passing), len(sample), " ".join(sample)))
            in_names = {c.name: w[0] for c, w in jobs}
            if not run_standin(args.standin, cfx, work, passing + sample, in_names):
                failed.append("(the stand-in run of the control-flow tests and one test per op)")
        print("\n%d passed, %d failed, %d refused by cfx (unsupported), %d skipped (ops or dtypes "
              "outside the list); control flow: %d of %d passed"
              % (count["pass"], count["fail"], count["refused"], count["skipped"],
                 sum(status[n][0] == "pass" for n in control_flow), len(control_flow)))
        if failed:
            print("failed: " + " ".join(failed))
        return 1 if failed else 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
