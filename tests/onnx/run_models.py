#!/usr/bin/env python3
"""run_models.py: the ONNX control-flow models of make_models.py through the cfx command.

    python3 tests/onnx/run_models.py CFX_BINARY_OR_BUILD_DIR [WORK_DIR]

Writes the models (make_models.py) into WORK_DIR (default: a temporary folder), runs each
case with `cfx run MODEL.onnx --backend cpu --in NAME=input_K.npy ... --out NAME=FILE.npy`
and compares with the numpy expectation: integers and bools exactly, reals within a
relative tolerance of 1e-5 (1e-4 for CG). Then `cfx import` of each model: the program it
writes runs as .cfx to the same results (its parameters bound in order). Then
the refusals a bad model must get through the command line: a truncated file, an unknown op
(one line naming the node and its op type, exit 1), a missing input. Last, the transformer
decoder of profiling/onnx_models.py against its numpy loop. Prints one line per case and
`N passed, M failed`; exits 1 when anything failed, 77 (skipped, with the reason) where the
onnx package is missing or this cfx was built without ONNX support (protobuf-c).
The ctest test onnx_models (tests/CMakeLists.txt).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_TIMEOUT_S = 60
RTOL = {"cg": 1e-4, "loop_count": 1e-5, "scan_directions": 1e-5}


def skip(why):
    print("skipped: %s" % why)
    sys.exit(77)


def cfx_binary(arg):
    path = os.path.join(arg, "cfx") if os.path.isdir(arg) else arg
    if not os.access(path, os.X_OK):
        print("no cfx binary at %s" % path, file=sys.stderr)
        sys.exit(2)
    return path


def run(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %d s" % RUN_TIMEOUT_S
    return p.returncode, p.stdout, p.stderr


def onnx_support(cfx, sample):
    """None where this cfx imports ONNX, else why not (for a skip)."""
    rc, out, err = run([cfx, "--version"])
    version = (out + err).lower()
    rc, out, err = run([cfx, "check", sample])
    if rc == 0:
        return None
    text = (out + err).replace(sample, "MODEL").lower()
    if "protobuf-c" in text or ("onnx" in version and ("not built" in version or "without" in version)):
        return "this cfx was built without ONNX support: %s" % (err.strip().splitlines() or [""])[0]
    if re.search(r"\.onnx:\d+:\d+: error: ", err):
        return "this cfx has no ONNX importer (it reads model.onnx as .cfx text)"
    return None # it imports ONNX and refused a good model: that is a failure, reported below


def model_of(case_dir):
    """The model of a case folder: if_nested for if_nested_2."""
    name = os.path.basename(case_dir)
    return name.rsplit("_", 1)[0] if name[-1].isdigit() else name


def first_line(text):
    lines = text.strip().splitlines()
    return lines[0][:300] + (" [%d more lines]" % (len(lines) - 1) if len(lines) > 1 else "") if lines else ""


def compare(np, name, got, want, rtol):
    if want.dtype == np.float16: # cfx gives float32 holding float16 values (docs/onnx.md)
        if got.dtype == np.float32 and np.any(got.astype(np.float16).astype(np.float32) != got):
            return "%s holds values float16 does not: %r" % (name, got)
        want = want.astype(np.float32)
    held = {"int8": "int32", "uint8": "int32", "int16": "int32", "uint16": "int32", "uint32": "int64"}
    if want.dtype.name in held: # cfx gives int32 (uint32: int64) holding the type's values
        info = np.iinfo(want.dtype)
        if got.dtype == held[want.dtype.name] and np.any((got < info.min) | (got > info.max)):
            return "%s holds values %s does not: %r" % (name, want.dtype, got)
        want = want.astype(held[want.dtype.name])
    if got.dtype != want.dtype:
        return "%s is %s, expected %s" % (name, got.dtype, want.dtype)
    if got.shape != want.shape:
        return "%s has shape %s, expected %s" % (name, got.shape, want.shape)
    if want.dtype.kind in "biu":
        bad = got != want
    else:
        bad = ~np.isclose(got, want, rtol=rtol, atol=rtol * 1e-2, equal_nan=True)
    if np.any(bad):
        k = tuple(int(i) for i in np.argwhere(bad)[0]) if got.ndim else ()
        return "%s%s = %r, expected %r (%d of %d differ)" % (
            name, list(k) if k else "", got[k].item(), want[k].item(), int(bad.sum()), bad.size)
    return None


def run_case(np, cfx, d, work):
    with open(os.path.join(d, "case.json")) as f:
        case = json.load(f)
    name = os.path.basename(d)
    cmd = [cfx, "run", os.path.join(d, "model.onnx"), "--backend", "cpu"]
    for k, n in enumerate(case["inputs"]):
        cmd += ["--in", "%s=%s" % (n, os.path.join(d, "input_%d.npy" % k))]
    outs = []
    for k, n in enumerate(case["outputs"]):
        path = os.path.join(work, "%s.got_%d.npy" % (name, k))
        if os.path.exists(path):
            os.remove(path)
        outs.append(path)
        cmd += ["--out", "%s=%s" % (n, path)]
    rc, out, err = run(cmd)
    if rc != 0:
        return "exit %s: %s" % (rc, first_line(err or out))
    rtol = RTOL.get(model_of(d), 1e-5)
    problems = []
    for k, n in enumerate(case["outputs"]):
        if not os.path.exists(outs[k]):
            problems.append("%s: no file written" % n)
            continue
        p = compare(np, n, np.load(outs[k]), np.load(os.path.join(d, "output_%d.npy" % k)), rtol)
        if p:
            problems.append(p)
    return "; ".join(problems) or None


GRAPH_HEADER = re.compile(r"^graph\s+\w+\s*\((.*?)\)\s*->\s*\((.*?)\)\s*\{", re.M)
PARAM_NAME = re.compile(r"(\w+)\s*:")


def import_case(np, cfx, d, work):
    """`cfx import MODEL.onnx -o NAME.cfx` writes a program that compiles and gives the same
    results when run as .cfx (its parameters bound in order: the text names them as
    identifiers, which ONNX names need not be)."""
    with open(os.path.join(d, "case.json")) as f:
        case = json.load(f)
    name = os.path.basename(d)
    out_dir = os.path.join(work, "imported", name)
    os.makedirs(out_dir, exist_ok=True)
    text = os.path.join(out_dir, name + ".cfx")
    # the inputs' files give the shapes the model leaves open (a sequence input's length)
    given = sum((["--in", "%s=%s" % (n, os.path.join(d, "input_%d.npy" % k))] for k, n in enumerate(case["inputs"])), [])
    rc, out, err = run([cfx, "import", os.path.join(d, "model.onnx"), "-o", text] + given)
    if rc != 0:
        return "cfx import: exit %s: %s" % (rc, first_line(err or out))
    with open(text) as f:
        header = GRAPH_HEADER.search(f.read())
    if not header:
        return "no `graph NAME(...) -> (...)` in the imported text"
    params = PARAM_NAME.findall(header.group(1))
    results = PARAM_NAME.findall(header.group(2))
    # inputs and outputs of 0 elements are known at import: no parameters or results of the text
    ins = [k for k in range(len(case["inputs"])) if np.load(os.path.join(d, "input_%d.npy" % k)).size]
    outs = [k for k in range(len(case["outputs"])) if np.load(os.path.join(d, "output_%d.npy" % k)).size]
    if len(params) != len(ins) or len(results) != len(outs):
        return "the imported graph has %d inputs and %d results; the model %d and %d of some elements" % (
            len(params), len(results), len(ins), len(outs))
    cmd = [cfx, "run", text, "--backend", "cpu"]
    for k, n in zip(ins, params):
        cmd += ["--in", "%s=%s" % (n, os.path.join(d, "input_%d.npy" % k))]
    got = []
    for k, n in enumerate(results):
        got.append(os.path.join(out_dir, "got_%d.npy" % k))
        cmd += ["--out", "%s=%s" % (n, got[-1])]
    rc, out, err = run(cmd)
    if rc != 0:
        return "cfx run of the imported text: exit %s: %s" % (rc, first_line(err or out))
    problems = []
    for k, n in enumerate(results):
        p = compare(np, n, np.load(got[k]), np.load(os.path.join(d, "output_%d.npy" % outs[k])),
                    RTOL.get(model_of(d), 1e-5))
        if p:
            problems.append(p)
    return "; ".join(problems) or None


def error_cases(cfx, models, work):
    """(name, problem or None) of each refusal checked through the command line."""
    import numpy as np
    from onnx import TensorProto, helper
    results = []
    good = os.path.join(models, "if_nested_0", "model.onnx")

    def one_line_error(cmd, must_name=()):
        rc, out, err = run(cmd)
        lines = err.strip().splitlines()
        if rc != 1:
            return "exit %s, expected 1 (stderr: %s)" % (rc, first_line(err))
        if len(lines) != 1 or out.strip():
            return "expected one line on stderr and nothing on stdout; got %s" % first_line(err or out)
        for word in must_name:
            if word not in lines[0]:
                return "the message does not name %r: %s" % (word, lines[0])
        return None

    # a truncated protobuf (half the file), and bytes that are no protobuf at all
    with open(good, "rb") as f:
        data = f.read()
    trunc = os.path.join(work, "truncated.onnx")
    with open(trunc, "wb") as f:
        f.write(data[:len(data) // 2])
    results.append(("error_truncated", one_line_error([cfx, "check", trunc], ["truncated.onnx"])))
    junk = os.path.join(work, "junk.onnx")
    with open(junk, "wb") as f:
        f.write(b"\xff\xff\xff\xff not a model \x00\x01")
    results.append(("error_garbage", one_line_error([cfx, "check", junk], ["junk.onnx"])))

    # an unknown op: the message names the node and its op type
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"], name="fine"),
                           helper.make_node("FancyOp", ["r"], ["y"], name="the_bad_node")],
                          "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    unknown = os.path.join(work, "unknown_op.onnx")
    with open(unknown, "wb") as f:
        f.write(m.SerializeToString())
    results.append(("error_unknown_op", one_line_error([cfx, "check", unknown],
                                                       ["the_bad_node", "FancyOp"])))

    # opset 6: a node whose op's definition changed at opset 7 (Add's broadcast attribute), and
    # one whose op came later (Expand, opset 8), refused naming the node, the op and the opsets
    for op, name, words in (("Add", "old_add", ["older than cfx supports", "from opset 7 on"]),
                            ("Expand", "new_expand", ["not in opset 6", "came in opset 8"])):
        g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"], name="fine"),
                               helper.make_node(op, ["r", "x" if op == "Add" else "shape"], ["y"], name=name)],
                              "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
                                    helper.make_tensor_value_info("shape", TensorProto.INT64, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 6)])
        m.ir_version = 3
        path = os.path.join(work, "opset6_%s.onnx" % op)
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        results.append(("error_opset6_" + op, one_line_error([cfx, "check", path],
                                                            [name, op, "opset 6"] + words)))

    # a missing input: `cfx run` without one of the model's inputs
    x = os.path.join(work, "x.npy")
    np.save(x, np.zeros(3, np.float32))
    rc, out, err = run([cfx, "run", good, "--backend", "cpu", "--in", "x=%s" % x])
    problem = None
    if rc != 1:
        problem = "exit %s, expected 1 (stderr: %s)" % (rc, first_line(err))
    elif not re.search(r"\ba\b", err):
        problem = "the message does not name the missing input 'a': %s" % err.strip()
    results.append(("error_missing_input", problem))

    # an input of 0 elements given with another shape or dtype than the model declares: the
    # import is not asked for it again at the run, so it checks it (one line naming both)
    empty = os.path.join(models, "empty_inputs", "model.onnx")
    x = os.path.join(models, "empty_inputs", "input_0.npy")
    e = os.path.join(work, "e_3x0.npy")
    np.save(e, np.zeros((3, 0), np.float32))
    like = os.path.join(work, "like_f32.npy")
    np.save(like, np.zeros(0, np.float32))
    results.append(("error_empty_shape", one_line_error(
        [cfx, "run", empty, "--backend", "cpu", "--in", "x=" + x, "--in", "e=" + e],
        ["'e'", "f32[3, 0]", "f32[2, 0]"])))
    results.append(("error_empty_dtype", one_line_error(
        [cfx, "run", empty, "--backend", "cpu", "--in", "x=" + x, "--in", "like=" + like],
        ["'like'", "f32[0]", "f64[0]"])))
    results.append(("error_empty_value", one_line_error(
        [cfx, "run", empty, "--backend", "cpu", "--in", "x=" + x, "--in", "like=0"], ["like", "f64[0]"])))
    # an input of 0 elements given right, the last --in, and a required input left out: exit 1
    rc, out, err = run([cfx, "run", empty, "--backend", "cpu", "--in",
                        "q=" + os.path.join(models, "empty_inputs", "input_4.npy")])
    problem = None
    if rc != 1:
        problem = "exit %s, expected 1 (stderr: %s)" % (rc, first_line(err))
    elif not re.search(r"\bx\b", err):
        problem = "the message does not name the missing input 'x': %s" % err.strip()
    results.append(("error_empty_then_missing", problem))

    # a sequence input: refused without its items stacked, or with items of another shape
    seq = os.path.join(models, "seq_input", "model.onnx")
    rest = ["--in", "pos=" + os.path.join(models, "seq_input", "input_1.npy"),
            "--in", "b=" + os.path.join(models, "seq_input", "input_2.npy")]
    results.append(("error_seq_not_given", one_line_error([cfx, "run", seq, "--backend", "cpu"] + rest,
                                                          ["'s'", "stacked"])))
    s42 = os.path.join(work, "s_4x2.npy")
    np.save(s42, np.zeros((4, 2), np.float32))
    results.append(("error_seq_item_shape", one_line_error(
        [cfx, "run", seq, "--backend", "cpu", "--in", "s=" + s42] + rest, ["'s'", "f32[4, 2]", "f32[2]"])))
    # given item by item: an item of another shape than the model declares, an item given both
    # ways; a position of run time into items of differing shapes (one line naming the node)
    s3, s4 = os.path.join(work, "s_3.npy"), os.path.join(work, "s_4.npy")
    np.save(s3, np.zeros(3, np.float32))
    np.save(s4, np.zeros(4, np.float32))
    results.append(("error_seq_item_declared", one_line_error(
        [cfx, "run", seq, "--backend", "cpu", "--in", "s[0]=" + s3, "--in", "s[1]=" + s4] + rest,
        ["'s[1]'", "f32[4]"])))
    results.append(("error_seq_both_ways", one_line_error(
        [cfx, "run", seq, "--backend", "cpu", "--in", "s=" + s42, "--in", "s[0]=" + s3] + rest,
        ["'s'", "item by item"])))
    g = helper.make_graph([helper.make_node("SequenceAt", ["s", "pos"], ["y"], name="pick")], "g",
                          [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, [None]),
                           helper.make_tensor_value_info("pos", TensorProto.INT64, [])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    pick = os.path.join(work, "seq_pick.onnx")
    with open(pick, "wb") as f:
        f.write(m.SerializeToString())
    results.append(("error_seq_ragged_pos", one_line_error(
        [cfx, "run", pick, "--backend", "cpu", "--in", "s[0]=" + s3, "--in", "s[1]=" + s4, "--in", "pos=1"],
        ["'pick'", "SequenceAt", "'pos'", "known when the model is imported"])))
    # a Loop that must be unrolled at import (its sequence's items differ in shape) past the bound
    import onnx
    from onnx import numpy_helper
    m = onnx.load(os.path.join(models, "seq_unrolled", "model.onnx"))
    for t in m.graph.initializer:
        if t.name == "trips":
            t.CopyFrom(numpy_helper.from_array(np.array(5000, np.int64), "trips"))
    big = os.path.join(work, "seq_unrolled_5000.onnx")
    onnx.save(m, big)
    results.append(("error_unroll_bound", one_line_error(
        [cfx, "run", big, "--backend", "cpu", "--in", "x=" + os.path.join(models, "seq_unrolled", "input_0.npy")],
        ["'grow'", "Loop", "5000 iterations", "too many to unroll"])))
    return results


def decoder_case(np, cfx, work):
    """profiling/onnx_models.py's transformer decoder (one layer, 16 tokens) against its numpy
    loop: the tokens greedy decoding writes, for 15 steps and for 5 (zeros after)."""
    sys.path.insert(0, os.path.join(HERE, "..", "..", "profiling"))
    import onnx
    import onnx_models
    path = os.path.join(work, "decoder.onnx")
    onnx.save(onnx_models.decoder(64, 32, 2, 1, 16), path)
    wts = onnx_models.decoder_weights(64, 32, 1, 16)
    for steps in (15, 5):
        out = os.path.join(work, "decoder_tokens.npy")
        rc, _, err = run([cfx, "run", path, "--backend", "cpu", "--in", "prompt=3", "--in", "steps=%d" % steps,
                          "--out", "tokens=%s" % out])
        if rc != 0:
            return "steps=%d: exit %d: %s" % (steps, rc, first_line(err))
        problem = compare(np, "tokens", np.load(out), onnx_models.decoder_numpy(wts, 1, 2, 3, steps, 16), 0)
        if problem:
            return "steps=%d: %s" % (steps, problem)
    return None


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        import numpy as np
        import onnx  # noqa: F401
    except ImportError as e:
        skip("%s: python3 -m pip install onnx numpy" % e)
    cfx = cfx_binary(sys.argv[1])
    sys.path.insert(0, HERE)
    import make_models

    work = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="cfx_onnx_")
    own = len(sys.argv) <= 2
    try:
        models = os.path.join(work, "models")
        if os.path.isdir(models):
            shutil.rmtree(models)
        dirs = make_models.write(models, ort=False)
        why = onnx_support(cfx, os.path.join(models, "if_nested_0", "model.onnx"))
        if why:
            skip(why)
        passed = failed = 0
        for d in dirs:
            problem = run_case(np, cfx, d, work)
            print("%-24s %s" % (os.path.basename(d), "FAIL: " + problem if problem else "ok"))
            passed, failed = passed + (problem is None), failed + (problem is not None)
        seen = set()
        for d in dirs:
            if model_of(d) in seen:
                continue # one import per model
            seen.add(model_of(d))
            problem = import_case(np, cfx, d, work)
            name = "import " + os.path.basename(d)
            print("%-24s %s" % (name, "FAIL: " + problem if problem else "ok"))
            passed, failed = passed + (problem is None), failed + (problem is not None)
        for name, problem in error_cases(cfx, models, work):
            print("%-24s %s" % (name, "FAIL: " + problem if problem else "ok"))
            passed, failed = passed + (problem is None), failed + (problem is not None)
        problem = decoder_case(np, cfx, work)
        print("%-24s %s" % ("decoder", "FAIL: " + problem if problem else "ok"))
        passed, failed = passed + (problem is None), failed + (problem is not None)
        print("%d passed, %d failed" % (passed, failed))
        return 1 if failed else 0
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
