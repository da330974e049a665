"""make_models.py: a small set of ONNX control-flow models built with onnx.helper, each with
inputs and the outputs it must give, computed by a numpy function written here for the
purpose (never by cfx; onnxruntime, where installed, is only asked to agree, which checks the
models themselves).

    python3 tests/onnx/make_models.py OUT_DIR [--no-ort]

writes OUT_DIR/NAME/model.onnx, input_K.npy and output_K.npy (K in the graph's order) and
case.json ({"inputs": [names], "outputs": [names], "tolerance": rtol}) for each model. Used by
run_models.py (the ctest test onnx_models) and as the seed corpus of tests/fuzz/fuzz_onnx.c.
Needs the onnx package (python3 -m pip install onnx) and numpy.
"""
import json
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8

F32, F64, I32, I64, BOOL = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT32,
                            TensorProto.INT64, TensorProto.BOOL)
F16, BF16 = TensorProto.FLOAT16, TensorProto.BFLOAT16


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, value):
    """A Constant node giving the numpy value `value`."""
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value), name))


def init(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def model(graph):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="cfx tests/onnx/make_models.py")
    m.ir_version = IR_VERSION
    return m


# ---- the models: each returns (model, {input: array}, {output: array}) -----------------------

def if_outer():
    """If whose branches read outer-scope values (x, an initializer w), with two outputs that
    join and are used after it; input and output names that are not identifiers."""
    then_g = helper.make_graph(
        [helper.make_node("Mul", ["input.1", "two"], ["t_y"]),
         helper.make_node("ReduceSum", ["t_y"], ["t_s"], keepdims=0)],
        "then", [], [vi("t_y", F32, [4]), vi("t_s", F32, [])],
        [init("two", np.float32(2))])
    else_g = helper.make_graph(
        [helper.make_node("Sub", ["input.1", "w"], ["e_y"]),
         helper.make_node("ReduceMax", ["e_y"], ["e_s"], keepdims=0)],
        "else", [], [vi("e_y", F32, [4]), vi("e_s", F32, [])])
    nodes = [helper.make_node("If", ["c:0"], ["y", "s"], name="branch", then_branch=then_g,
                              else_branch=else_g),
             helper.make_node("Add", ["y", "input.1"], ["out/z"]),
             helper.make_node("Mul", ["s", "s"], ["out/s2"])]
    w = np.array([1.0, -2.0, 0.5, 4.0], np.float32)
    g = helper.make_graph(nodes, "if_outer", [vi("input.1", F32, [4]), vi("c:0", BOOL, [])],
                          [vi("out/z", F32, [4]), vi("out/s2", F32, [])], [init("w", w)])
    x = np.array([1.5, -3.0, 2.0, 0.25], np.float32)
    cases = []
    for c in (True, False):
        y = x * 2 if c else x - w
        s = y.sum() if c else y.max()
        cases.append(({"input.1": x, "c:0": np.array(c)},
                      {"out/z": y + x, "out/s2": np.float32(s * s)}))
    return model(g), cases


def if_nested():
    """If inside If: a > 0 ? (a > 5 ? 3x : x + 1) : -x."""
    inner_then = helper.make_graph([helper.make_node("Mul", ["x", "three"], ["it"])], "it", [],
                                   [vi("it", F32, [3])], [init("three", np.float32(3))])
    inner_else = helper.make_graph([helper.make_node("Add", ["x", "one"], ["ie"])], "ie", [],
                                   [vi("ie", F32, [3])], [init("one", np.float32(1))])
    outer_then = helper.make_graph(
        [helper.make_node("Greater", ["a", "five"], ["big"]),
         helper.make_node("If", ["big"], ["ot"], name="inner", then_branch=inner_then,
                          else_branch=inner_else)],
        "ot", [], [vi("ot", F32, [3])], [init("five", np.int64(5))])
    outer_else = helper.make_graph([helper.make_node("Neg", ["x"], ["oe"])], "oe", [],
                                   [vi("oe", F32, [3])])
    nodes = [const("zero", np.int64(0)),
             helper.make_node("Greater", ["a", "zero"], ["pos"]),
             helper.make_node("If", ["pos"], ["y"], name="outer", then_branch=outer_then,
                              else_branch=outer_else)]
    g = helper.make_graph(nodes, "if_nested", [vi("x", F32, [3]), vi("a", I64, [])],
                          [vi("y", F32, [3])])
    x = np.array([0.5, -1.0, 2.0], np.float32)
    cases = []
    for a in (7, 2, -1):
        y = (3 * x if a > 5 else x + 1) if a > 0 else -x
        cases.append(({"x": x, "a": np.array(a, np.int64)}, {"y": y.astype(np.float32)}))
    return model(g), cases


def loop_count():
    """Loop with a trip count M given as an input and no condition; a loop-carried [2, 3]
    tensor: acc = acc * 0.5 + x * i."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Cast", ["i"], ["fi"], to=F32),
         helper.make_node("Mul", ["x", "fi"], ["xi"]),
         helper.make_node("Mul", ["acc", "half"], ["ah"]),
         helper.make_node("Add", ["ah", "xi"], ["acc_out"])],
        "body", [vi("i", I64, []), vi("cond_in", BOOL, []), vi("acc", F32, [2, 3])],
        [vi("cond_out", BOOL, []), vi("acc_out", F32, [2, 3])], [init("half", np.float32(0.5))])
    nodes = [helper.make_node("Loop", ["n", "", "acc0"], ["acc_final"], name="count", body=body)]
    g = helper.make_graph(nodes, "loop_count",
                          [vi("x", F32, [2, 3]), vi("acc0", F32, [2, 3]), vi("n", I64, [])],
                          [vi("acc_final", F32, [2, 3])])
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    acc0 = np.full((2, 3), 1.0, np.float32)
    cases = []
    for n in (5, 0, 1):
        acc = acc0.copy()
        for i in range(n):
            acc = acc * np.float32(0.5) + x * np.float32(i)
        cases.append(({"x": x, "acc0": acc0, "n": np.array(n, np.int64)}, {"acc_final": acc}))
    return model(g), cases


def loop_while():
    """Loop with a condition only (a while loop): s doubles while s < limit; k counts."""
    body = helper.make_graph(
        [helper.make_node("Mul", ["s", "two"], ["s2"]),
         helper.make_node("Add", ["k", "one"], ["k2"]),
         helper.make_node("Less", ["s2", "limit"], ["c2"])],
        "body", [vi("i", I64, []), vi("c", BOOL, []), vi("s", I64, []), vi("k", I32, [])],
        [vi("c2", BOOL, []), vi("s2", I64, []), vi("k2", I32, [])],
        [init("two", np.int64(2)), init("one", np.int32(1))])
    nodes = [helper.make_node("Less", ["s0", "limit"], ["c0"]),
             const("k0", np.int32(0)),
             helper.make_node("Loop", ["", "c0", "s0", "k0"], ["s", "k"], name="while", body=body)]
    g = helper.make_graph(nodes, "loop_while", [vi("s0", I64, []), vi("limit", I64, [])],
                          [vi("s", I64, []), vi("k", I32, [])])
    cases = []
    for s0, limit in ((3, 100), (200, 100), (1, 1 << 40)):
        s, k = s0, 0
        while s < limit:
            s, k = s * 2, k + 1
        cases.append(({"s0": np.array(s0, np.int64), "limit": np.array(limit, np.int64)},
                      {"s": np.array(s, np.int64), "k": np.array(k, np.int32)}))
    return model(g), cases


def loop_both():
    """Loop with a trip count (a constant, 10) and a condition: acc += i + 0.5 until acc >= t."""
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=F32),
         helper.make_node("Add", ["fi", "half"], ["d"]),
         helper.make_node("Add", ["acc", "d"], ["acc2"]),
         helper.make_node("Less", ["acc2", "t"], ["c2"])],
        "body", [vi("i", I64, []), vi("c", BOOL, []), vi("acc", F32, [])],
        [vi("c2", BOOL, []), vi("acc2", F32, [])], [init("half", np.float32(0.5))])
    nodes = [const("m", np.int64(10)), const("acc0", np.float32(0)), const("yes", np.array(True)),
             helper.make_node("Loop", ["m", "yes", "acc0"], ["acc"], name="both", body=body)]
    g = helper.make_graph(nodes, "loop_both", [vi("t", F32, [])], [vi("acc", F32, [])])
    cases = []
    for t in (7.0, 1000.0, -1.0):
        acc, c = np.float32(0), True
        for i in range(10):
            if not c:
                break
            acc = np.float32(acc + np.float32(i + 0.5))
            c = acc < t
        cases.append(({"t": np.array(t, np.float32)}, {"acc": np.array(acc, np.float32)}))
    return model(g), cases


def loop_scan():
    """Loop with scan outputs: the carried [2] vector stacked to [5, 2], and a 0-d value
    (its sum) stacked to [5]."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c2"]),
         helper.make_node("Mul", ["v", "r"], ["vr"]),
         helper.make_node("Add", ["vr", "b"], ["v2"]),
         helper.make_node("ReduceSum", ["v2"], ["s"], keepdims=0),
         helper.make_node("Identity", ["v2"], ["v_scan"])],
        "body", [vi("i", I64, []), vi("c", BOOL, []), vi("v", F32, [2])],
        [vi("c2", BOOL, []), vi("v2", F32, [2]), vi("v_scan", F32, [2]), vi("s", F32, [])])
    nodes = [helper.make_node("Loop", ["M", "", "v0"], ["v", "vs", "ss"], name="scan", body=body)]
    g = helper.make_graph(nodes, "loop_scan",
                          [vi("v0", F32, [2]), vi("r", F32, [2]), vi("b", F32, [2])],
                          [vi("v", F32, [2]), vi("vs", F32, [5, 2]), vi("ss", F32, [5])],
                          [init("M", np.int64(5))])
    v0 = np.array([1.0, -1.0], np.float32)
    r = np.array([0.5, 2.0], np.float32)
    b = np.array([1.0, 0.25], np.float32)
    v, vs, ss = v0, [], []
    for _ in range(5):
        v = v * r + b
        vs.append(v)
        ss.append(v.sum())
    return model(g), [({"v0": v0, "r": r, "b": b},
                       {"v": v, "vs": np.stack(vs), "ss": np.array(ss, np.float32)})]


def scan_directions():
    """Scan: one scan input forward along axis 0, one reversed along axis 1; a state; one
    scan output forward along axis 0, one reversed along axis 1."""
    body = helper.make_graph(
        [helper.make_node("Mul", ["xt", "yt"], ["p"]),
         helper.make_node("Add", ["s", "p"], ["s2"]),
         helper.make_node("Identity", ["s2"], ["o1"]),
         helper.make_node("Sub", ["xt", "yt"], ["o2"])],
        "body", [vi("s", F32, [2]), vi("xt", F32, [2]), vi("yt", F32, [2])],
        [vi("s2", F32, [2]), vi("o1", F32, [2]), vi("o2", F32, [2])])
    nodes = [helper.make_node("Scan", ["s0", "X", "Y"], ["s", "O1", "O2"], name="scan",
                              body=body, num_scan_inputs=2, scan_input_directions=[0, 1],
                              scan_input_axes=[0, 1], scan_output_directions=[0, 1],
                              scan_output_axes=[0, 1])]
    g = helper.make_graph(nodes, "scan_directions",
                          [vi("s0", F32, [2]), vi("X", F32, [4, 2]), vi("Y", F32, [2, 4])],
                          [vi("s", F32, [2]), vi("O1", F32, [4, 2]), vi("O2", F32, [2, 4])])
    s0 = np.array([0.5, -0.5], np.float32)
    X = np.arange(8, dtype=np.float32).reshape(4, 2) * 0.5 - 1
    Y = np.arange(8, dtype=np.float32).reshape(2, 4) * 0.25 + 1
    s, o1, o2 = s0, [], []
    for t in range(4):
        xt, yt = X[t], Y[:, 3 - t]
        s = s + xt * yt
        o1.append(s)
        o2.append(xt - yt)
    O1 = np.stack(o1)                     # forward, axis 0
    O2 = np.stack(o2[::-1], axis=1)       # reversed, axis 1: the last iteration's first
    return model(g), [({"s0": s0, "X": X, "Y": Y}, {"s": s, "O1": O1, "O2": O2})]


def if_in_loop():
    """If inside a Loop's body, on the iteration number: even i adds i, odd i doubles;
    integer Mod (fmod 0)."""
    then_g = helper.make_graph([helper.make_node("Add", ["x", "i"], ["a"])], "t", [],
                               [vi("a", I64, [])])
    else_g = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["b"])], "e", [],
                               [vi("b", I64, [])], [init("two", np.int64(2))])
    body = helper.make_graph(
        [helper.make_node("Mod", ["i", "two_l"], ["r"]),
         helper.make_node("Equal", ["r", "zero"], ["even"]),
         helper.make_node("If", ["even"], ["x2"], name="parity", then_branch=then_g,
                          else_branch=else_g),
         helper.make_node("Identity", ["c"], ["c2"])],
        "body", [vi("i", I64, []), vi("c", BOOL, []), vi("x", I64, [])],
        [vi("c2", BOOL, []), vi("x2", I64, [])],
        [init("two_l", np.int64(2)), init("zero", np.int64(0))])
    nodes = [const("m", np.int64(6)),
             helper.make_node("Loop", ["m", "", "x0"], ["x"], name="loop", body=body)]
    g = helper.make_graph(nodes, "if_in_loop", [vi("x0", I64, [])], [vi("x", I64, [])])
    cases = []
    for x0 in (1, -3):
        x = x0
        for i in range(6):
            x = x + i if i % 2 == 0 else x * 2
        cases.append(({"x0": np.array(x0, np.int64)}, {"x": np.array(x, np.int64)}))
    return model(g), cases


V, D, MAXLEN = 6, 4, 8


def _decoder_weights():
    rng = np.random.default_rng(7)
    emb = rng.standard_normal((V, D)).astype(np.float32)
    w = rng.standard_normal((D, V)).astype(np.float32)
    return emb, w


def greedy_decode():
    """A greedy-decoding loop: the token's embedding row (Gather), logits (MatMul), the next
    token (ArgMax, i64), written into a fixed buffer (Where over a Range), stopping early at
    end_token (Equal, Not) or after MAXLEN steps. Weights are initializers."""
    body = helper.make_graph(
        [helper.make_node("Gather", ["emb", "tok"], ["e"], axis=0),
         helper.make_node("Unsqueeze", ["e", "ax0"], ["e2"]),
         helper.make_node("MatMul", ["e2", "w"], ["logits"]),
         helper.make_node("ArgMax", ["logits"], ["nxt1"], axis=1, keepdims=0),
         helper.make_node("Squeeze", ["nxt1", "ax0"], ["nxt"]),
         helper.make_node("Equal", ["pos", "i"], ["here"]),
         helper.make_node("Where", ["here", "nxt", "toks"], ["toks2"]),
         helper.make_node("Add", ["i", "one"], ["len2"]),
         helper.make_node("Equal", ["nxt", "end_token"], ["stop"]),
         helper.make_node("Not", ["stop"], ["c2"])],
        "step", [vi("i", I64, []), vi("c", BOOL, []), vi("tok", I64, []),
                 vi("toks", I64, [MAXLEN]), vi("len", I64, [])],
        [vi("c2", BOOL, []), vi("nxt", I64, []), vi("toks2", I64, [MAXLEN]), vi("len2", I64, [])])
    emb, w = _decoder_weights()
    nodes = [const("m", np.int64(MAXLEN)), const("yes", np.array(True)),
             const("len0", np.int64(0)),
             helper.make_node("Range", ["r0", "m", "one"], ["pos"]),
             helper.make_node("ConstantOfShape", ["shape_m"], ["toks0"],
                              value=numpy_helper.from_array(np.array([-1], np.int64))),
             helper.make_node("Loop", ["m", "yes", "start", "toks0", "len0"],
                              ["last", "tokens", "length"], name="decode", body=body)]
    g = helper.make_graph(nodes, "greedy_decode",
                          [vi("start", I64, []), vi("end_token", I64, [])],
                          [vi("tokens", I64, [MAXLEN]), vi("length", I64, []), vi("last", I64, [])],
                          [init("emb", emb), init("w", w), init("ax0", np.array([0], np.int64)),
                           init("one", np.int64(1)), init("r0", np.int64(0)),
                           init("shape_m", np.array([MAXLEN], np.int64))])
    # expected: the decode in numpy, an end token chosen so that it stops early for one start
    table = np.argmax(emb @ w, axis=1)    # the next token of each token

    def decode(start, end):
        toks, tok, n = np.full(MAXLEN, -1, np.int64), start, 0
        for i in range(MAXLEN):
            tok = int(table[tok])
            toks[i], n = tok, i + 1
            if tok == end:
                break
        return toks, n, tok
    cases = []
    for start in range(V):
        end = int(table[table[start]])   # reached at the second step
        toks, n, last = decode(start, end)
        cases.append(({"start": np.array(start, np.int64), "end_token": np.array(end, np.int64)},
                      {"tokens": toks, "length": np.array(n, np.int64), "last": np.array(last, np.int64)}))
        if len(cases) == 2:
            break
    toks, n, last = decode(0, V) # an end token never produced: all MAXLEN steps
    cases.append(({"start": np.array(0, np.int64), "end_token": np.array(V, np.int64)},
                  {"tokens": toks, "length": np.array(n, np.int64), "last": np.array(last, np.int64)}))
    return model(g), cases


N_CG, MAX_CG = 6, 20


def cg():
    """Conjugate gradients with a tolerance: MatMul, ReduceSum, Div, Sqrt, Less, a Loop with
    both a trip count and a condition; outputs x and the iterations taken."""
    body = helper.make_graph(
        [helper.make_node("MatMul", ["A", "p"], ["Ap"]),
         helper.make_node("Mul", ["p", "Ap"], ["pAp_e"]),
         helper.make_node("ReduceSum", ["pAp_e"], ["pAp"], keepdims=0),
         helper.make_node("Div", ["rs", "pAp"], ["alpha"]),
         helper.make_node("Mul", ["alpha", "p"], ["ap"]),
         helper.make_node("Add", ["x", "ap"], ["x2"]),
         helper.make_node("Mul", ["alpha", "Ap"], ["aAp"]),
         helper.make_node("Sub", ["r", "aAp"], ["r2"]),
         helper.make_node("Mul", ["r2", "r2"], ["rr_e"]),
         helper.make_node("ReduceSum", ["rr_e"], ["rs2"], keepdims=0),
         helper.make_node("Div", ["rs2", "rs"], ["beta"]),
         helper.make_node("Mul", ["beta", "p"], ["bp"]),
         helper.make_node("Add", ["r2", "bp"], ["p2"]),
         helper.make_node("Add", ["k", "one"], ["k2"]),
         helper.make_node("Sqrt", ["rs2"], ["norm"]),
         helper.make_node("Less", ["tol", "norm"], ["c2"])],
        "iteration",
        [vi("i", I64, []), vi("c", BOOL, []), vi("x", F32, [N_CG]), vi("r", F32, [N_CG]),
         vi("p", F32, [N_CG]), vi("rs", F32, []), vi("k", I64, [])],
        [vi("c2", BOOL, []), vi("x2", F32, [N_CG]), vi("r2", F32, [N_CG]), vi("p2", F32, [N_CG]),
         vi("rs2", F32, []), vi("k2", I64, [])],
        [init("one", np.int64(1))])
    nodes = [helper.make_node("Mul", ["b", "b"], ["bb"]),
             helper.make_node("ReduceSum", ["bb"], ["rs0"], keepdims=0),
             helper.make_node("Sqrt", ["rs0"], ["n0"]),
             helper.make_node("Less", ["tol", "n0"], ["c0"]),
             helper.make_node("Mul", ["b", "zero"], ["x0"]),
             helper.make_node("Loop", ["max_iter", "c0", "x0", "b", "b", "rs0", "k0"],
                              ["x", "r", "p", "rs", "iterations"], name="cg", body=body)]
    g = helper.make_graph(nodes, "cg", [vi("A", F32, [N_CG, N_CG]), vi("b", F32, [N_CG]),
                                        vi("tol", F32, [])],
                          [vi("x", F32, [N_CG]), vi("iterations", I64, [])],
                          [init("max_iter", np.int64(MAX_CG)), init("zero", np.float32(0)),
                           init("k0", np.int64(0))])
    rng = np.random.default_rng(3)
    q = rng.standard_normal((N_CG, N_CG))
    A = (q @ q.T + N_CG * np.eye(N_CG)).astype(np.float32)
    b = rng.standard_normal(N_CG).astype(np.float32)
    tol = np.float32(1e-5)
    # the same iteration in float32, recording the residual norms to check the stop has margin
    x, r, p = np.zeros(N_CG, np.float32), b.copy(), b.copy()
    rs, k, norms = np.float32(b @ b), 0, [np.sqrt(np.float32(b @ b))]
    while k < MAX_CG and tol < norms[-1]:
        Ap = A @ p
        alpha = rs / np.float32((p * Ap).sum())
        x = x + alpha * p
        r = r - alpha * Ap
        rs2 = np.float32((r * r).sum())
        p = r + (rs2 / rs) * p
        rs, k = rs2, k + 1
        norms.append(np.sqrt(rs))
    # the stopping decision is far from the tolerance, so float rounding cannot move it
    assert norms[-1] < tol / 10 and all(nm > tol * 10 for nm in norms[:-1]), norms
    assert np.allclose(x, np.linalg.solve(A.astype(np.float64), b), rtol=1e-3, atol=1e-4)
    return model(g), [({"A": A, "b": b, "tol": np.array(tol)},
                       {"x": x.astype(np.float32), "iterations": np.array(k, np.int64)})]


def onnx_semantics():
    """Ops whose ONNX meaning differs from C's: integer Div truncating toward zero, Mod with
    fmod 0 (the divisor's sign) and 1 (the dividend's), Cast from float to int (toward
    zero), ArgMax giving i64 (the first of equal maxima)."""
    nodes = [helper.make_node("Div", ["a", "b"], ["q"]),
             helper.make_node("Mod", ["a", "b"], ["m0"], fmod=0),
             helper.make_node("Mod", ["a", "b"], ["m1"], fmod=1),
             helper.make_node("Mod", ["f", "g"], ["fm"], fmod=1),
             helper.make_node("Cast", ["f"], ["fi"], to=I32),
             helper.make_node("ArgMax", ["h"], ["am"], axis=1, keepdims=0),
             helper.make_node("Div", ["a64", "b64"], ["q64"])]
    g = helper.make_graph(nodes, "onnx_semantics",
                          [vi("a", I32, [6]), vi("b", I32, [6]), vi("f", F32, [6]),
                           vi("g", F32, [6]), vi("h", F32, [2, 4]), vi("a64", I64, [4]),
                           vi("b64", I64, [4])],
                          [vi("q", I32, [6]), vi("m0", I32, [6]), vi("m1", I32, [6]),
                           vi("fm", F32, [6]), vi("fi", I32, [6]), vi("am", I64, [2]),
                           vi("q64", I64, [4])])
    a = np.array([7, -7, 7, -7, 0, 13], np.int32)
    b = np.array([2, 2, -2, -2, 3, -5], np.int32)
    f = np.array([2.7, -2.7, 5.5, -5.5, 0.25, -0.75], np.float32)
    gg = np.array([2.0, 2.0, -2.0, -2.0, 0.1, 0.5], np.float32)
    h = np.array([[1, 3, 3, 0], [-1, -2, -0.5, -0.5]], np.float32)
    a64 = np.array([-9, 9, -1, (1 << 40) + 1], np.int64)
    b64 = np.array([4, -4, 3, 2], np.int64)
    trunc = lambda x, y: (np.abs(x) // np.abs(y) * np.sign(x) * np.sign(y)).astype(x.dtype)
    expected = {"q": trunc(a, b), "m0": np.mod(a, b), "m1": np.fmod(a, b),
                "fm": np.fmod(f, gg), "fi": np.trunc(f).astype(np.int32),
                "am": np.argmax(h, axis=1).astype(np.int64), "q64": trunc(a64, b64)}
    assert list(expected["q"]) == [3, -3, -3, 3, 0, -2]
    assert list(expected["m0"]) == [1, 1, -1, -1, 0, -2]
    assert list(expected["fi"]) == [2, -2, 5, -5, 0, 0]
    return model(g), [({"a": a, "b": b, "f": f, "g": gg, "h": h, "a64": a64, "b64": b64},
                       expected)]


def bf16_of(v):
    """float32 values rounded to bfloat16's (halves to even), as float32: by the bits."""
    u = np.asarray(v, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def half_loop():
    """float16 all through a Loop: acc = acc + x * w, each op rounding to float16 (x an input,
    w and the start an initializer), then acc through bfloat16 (Cast to BFLOAT16 and back to
    FLOAT). cfx holds them in f32 and rounds after each op; numpy computes in float16."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Mul", ["x", "w"], ["xw"]),
         helper.make_node("Add", ["acc", "xw"], ["acc_out"])],
        "body", [vi("i", I64, []), vi("cond_in", BOOL, []), vi("acc", F16, [4])],
        [vi("cond_out", BOOL, []), vi("acc_out", F16, [4])])
    w = np.array([0.1, 0.2, 0.3, 0.7], np.float16)
    acc0 = np.array([0, 1000, 2048, -3], np.float16)
    nodes = [helper.make_node("Loop", ["n", "", "acc0"], ["acc"], name="accumulate", body=body),
             helper.make_node("Cast", ["acc"], ["acc_b"], to=BF16),
             helper.make_node("Cast", ["acc_b"], ["acc_bf"], to=F32)]
    g = helper.make_graph(nodes, "half_loop", [vi("x", F16, [4]), vi("n", I64, [])],
                          [vi("acc", F16, [4]), vi("acc_bf", F32, [4])],
                          [init("w", w), init("acc0", acc0)])
    x = np.array([1.0, 0.333, 1.0, 0.01], np.float16)
    cases = []
    for n in (7, 300):
        acc = acc0.copy()
        for _ in range(n):
            acc = acc + x * w # each op float16, rounded (numpy)
        cases.append(({"x": x, "n": np.array(n, np.int64)},
                      {"acc": acc, "acc_bf": bf16_of(acc.astype(np.float32))}))
    # the sums stall where float16's spacing passes twice the step: 2048 + 0.3 is 2048
    assert cases[1][1]["acc"][2] == 2048
    return model(g), cases


# ---- recurrent ops: LSTM and GRU, each a cfx for loop over the sequence -----------------------

def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_lstm(x, w, r, b, h0, c0, p, lens, reverse=False):
    """ONNX's LSTM of one direction in float64: x [seq, batch, in], w [4h, in] and r [4h, h] in
    gate order i, o, f, c, b [8h] (input then recurrence biases), p [3h] peepholes i, o, f,
    lens [batch] each sequence's length (1 or more; reverse reads a sequence from its last
    step). Returns Y [seq, batch, h] (0 past a sequence's length), the last h and c."""
    x, w, r, b, p = (np.asarray(v, np.float64) for v in (x, w, r, b, p))
    h, c = np.asarray(h0, np.float64), np.asarray(c0, np.float64)
    n = r.shape[1]
    ys = [None] * len(x)
    for t in (range(len(x) - 1, -1, -1) if reverse else range(len(x))):
        live = (t < np.asarray(lens))[:, None]
        g = x[t] @ w.T + h @ r.T + b[:4 * n] + b[4 * n:]
        i = _sigmoid(g[:, :n] + p[:n] * c)
        f = _sigmoid(g[:, 2 * n:3 * n] + p[2 * n:] * c)
        c_new = f * c + i * np.tanh(g[:, 3 * n:])
        o = _sigmoid(g[:, n:2 * n] + p[n:2 * n] * c_new)
        h = np.where(live, o * np.tanh(c_new), h)
        c = np.where(live, c_new, c)
        ys[t] = np.where(live, h, 0)
    return np.stack(ys), h, c


def lstm_bidirectional():
    """A bidirectional LSTM with initial states and sequence_lens (inputs), biases and
    peepholes (initializers), all three results: the two directions step in one cfx loop. The
    sequences have their full length, then lengths that differ (the states stop at each)."""
    rng = np.random.default_rng(7)
    seq, batch, nin, n = 5, 3, 4, 3
    w = (0.6 * rng.standard_normal((2, 4 * n, nin))).astype(np.float32)
    r = (0.6 * rng.standard_normal((2, 4 * n, n))).astype(np.float32)
    b = (0.3 * rng.standard_normal((2, 8 * n))).astype(np.float32)
    p = (0.3 * rng.standard_normal((2, 3 * n))).astype(np.float32)
    node = helper.make_node("LSTM", ["x", "w", "r", "b", "lens", "h0", "c0", "p"], ["y", "y_h", "y_c"],
                            name="lstm", hidden_size=n, direction="bidirectional")
    g = helper.make_graph([node], "lstm_bidirectional",
                          [vi("x", F32, [seq, batch, nin]), vi("lens", I32, [batch]),
                           vi("h0", F32, [2, batch, n]), vi("c0", F32, [2, batch, n])],
                          [vi("y", F32, [seq, 2, batch, n]), vi("y_h", F32, [2, batch, n]),
                           vi("y_c", F32, [2, batch, n])],
                          [init("w", w), init("r", r), init("b", b), init("p", p)])
    x = rng.standard_normal((seq, batch, nin)).astype(np.float32)
    h0 = rng.standard_normal((2, batch, n)).astype(np.float32)
    c0 = rng.standard_normal((2, batch, n)).astype(np.float32)
    cases = []
    for lens in (np.full(batch, seq, np.int32), np.array([2, seq, 1], np.int32)):
        yf, hf, cf = np_lstm(x, w[0], r[0], b[0], h0[0], c0[0], p[0], lens)
        yb, hb, cb = np_lstm(x, w[1], r[1], b[1], h0[1], c0[1], p[1], lens, reverse=True)
        out = {"y": np.stack([yf, yb], axis=1), "y_h": np.stack([hf, hb]), "y_c": np.stack([cf, cb])}
        cases.append(({"x": x, "lens": lens, "h0": h0, "c0": c0},
                      {k: v.astype(np.float32) for k, v in out.items()}))
    return model(g), cases


def gru_linear_before_reset():
    """A reverse GRU as PyTorch's (linear_before_reset = 1), with clip and the activations
    given: HardSigmoid (alpha, beta) for the gates, Softsign for the candidate."""
    rng = np.random.default_rng(8)
    seq, batch, nin, n, clip = 6, 2, 3, 4, 1.5
    w = (0.8 * rng.standard_normal((1, 3 * n, nin))).astype(np.float32)
    r = (0.8 * rng.standard_normal((1, 3 * n, n))).astype(np.float32)
    b = (0.5 * rng.standard_normal((1, 6 * n))).astype(np.float32)
    node = helper.make_node("GRU", ["x", "w", "r", "b"], ["y", "y_h"], name="gru", hidden_size=n,
                            direction="reverse", linear_before_reset=1, clip=clip,
                            activations=["HardSigmoid", "Softsign"], activation_alpha=[0.3],
                            activation_beta=[0.45])
    g = helper.make_graph([node], "gru_linear_before_reset", [vi("x", F32, [seq, batch, nin])],
                          [vi("y", F32, [seq, 1, batch, n]), vi("y_h", F32, [1, batch, n])],
                          [init("w", w), init("r", r), init("b", b)])
    x = (2 * rng.standard_normal((seq, batch, nin))).astype(np.float32)
    # numpy, float64: z, r gates and the candidate h~, with r applied after R's product
    W, R, B = (np.asarray(v[0], np.float64) for v in (w, r, b))
    f = lambda v: np.clip(0.3 * v + 0.45, 0, 1)
    c = lambda v: np.clip(v, -clip, clip)
    h = np.zeros((batch, n))
    ys = [None] * seq
    for t in range(seq - 1, -1, -1):
        xw = x[t] @ W.T + B[:3 * n]
        hr = h @ R.T + B[3 * n:]
        z = f(c(xw[:, :n] + hr[:, :n]))
        rg = f(c(xw[:, n:2 * n] + hr[:, n:2 * n]))
        cand = c(xw[:, 2 * n:] + rg * hr[:, 2 * n:])
        cand = cand / (1 + np.abs(cand))
        h = (1 - z) * cand + z * h
        ys[t] = h
    return model(g), [({"x": x}, {"y": np.stack(ys)[:, None].astype(np.float32),
                                  "y_h": h[None].astype(np.float32)})]


D_ATT, T_ATT = 4, 5


def attention_loop():
    """Attention (opset 23) inside a Loop, a decoder's cached step: each iteration writes the
    state's key and value into row i of fixed caches (Where over positions), attends with two
    query heads over the one cached head (grouped-query) under a bool attn_mask of run time
    (the keys up to i), and mixes the heads' sum into the state. numpy computes it in f64."""
    D, T = D_ATT, T_ATT
    body = helper.make_graph(
        [helper.make_node("Mul", ["h", "wk"], ["k_new"]),
         helper.make_node("Add", ["h", "bv"], ["hv"]),
         helper.make_node("Tanh", ["hv"], ["v_new"]),
         helper.make_node("Equal", ["pos4", "i"], ["here"]),
         helper.make_node("Where", ["here", "k_new", "kc"], ["kc2"]),
         helper.make_node("Where", ["here", "v_new", "vc"], ["vc2"]),
         helper.make_node("LessOrEqual", ["pos2", "i"], ["mask"]),
         helper.make_node("Mul", ["h", "wq"], ["q2"]),
         helper.make_node("Concat", ["h", "q2"], ["q"], axis=1),
         helper.make_node("Attention", ["q", "kc2", "vc2", "mask"], ["y"], name="attend"),
         helper.make_node("ReduceSum", ["y", "ax1"], ["ys"], keepdims=1),
         helper.make_node("Add", ["ys", "h"], ["hs"]),
         helper.make_node("Mul", ["hs", "half"], ["h2"]),
         helper.make_node("Identity", ["c"], ["c2"])],
        "step", [vi("i", I64, []), vi("c", BOOL, []), vi("h", F32, [1, 1, 1, D]),
                 vi("kc", F32, [1, 1, T, D]), vi("vc", F32, [1, 1, T, D])],
        [vi("c2", BOOL, []), vi("h2", F32, [1, 1, 1, D]), vi("kc2", F32, [1, 1, T, D]),
         vi("vc2", F32, [1, 1, T, D])])
    rng = np.random.default_rng(23)
    wk, wq, bv = (rng.standard_normal(D).astype(np.float32) for _ in range(3))
    zeros = np.zeros((1, 1, T, D), np.float32)
    nodes = [const("m", np.int64(T)),
             helper.make_node("Loop", ["m", "", "h0", "kc0", "vc0"], ["h", "kc", "vc"],
                              name="decode", body=body)]
    g = helper.make_graph(nodes, "attention_loop", [vi("h0", F32, [1, 1, 1, D])],
                          [vi("h", F32, [1, 1, 1, D]), vi("kc", F32, [1, 1, T, D])],
                          [init("wk", wk), init("wq", wq), init("bv", bv), init("kc0", zeros),
                           init("vc0", zeros), init("half", np.float32(0.5)),
                           init("ax1", np.array([1], np.int64)),
                           init("pos4", np.arange(T, dtype=np.int64).reshape(1, 1, T, 1)),
                           init("pos2", np.arange(T, dtype=np.int64).reshape(1, T))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)],
                          producer_name="cfx tests/onnx/make_models.py")
    m.ir_version = 10
    cases = []
    for seed in (1, 2):
        h0 = np.random.default_rng(seed).standard_normal((1, 1, 1, D)).astype(np.float32)
        h, kc, vc = h0.reshape(D).astype(np.float64), np.zeros((T, D)), np.zeros((T, D))
        for t in range(T):
            kc[t], vc[t] = h * wk, np.tanh(h + bv)
            ys = np.zeros(D)
            for q in (h, h * wq):   # both query heads read the one cached head
                s = kc[:t + 1] @ q / np.sqrt(D)
                p = np.exp(s - s.max())
                ys += (p / p.sum()) @ vc[:t + 1]
            h = (ys + h) * 0.5
        cases.append(({"h0": h0}, {"h": h.reshape(1, 1, 1, D).astype(np.float32),
                                   "kc": kc.reshape(1, 1, T, D).astype(np.float32)}))
    return m, cases


# ---- ops that move values (ScatterElements, Tile, Pad, TopK of rank 3, ReduceProd, ArgMax's
# select_last_index, BatchNormalization, Einsum), with the data of run time -------------------

def np_pad(x, before, after, mode, value=0):
    """numpy's pad of x, a negative entry cropping first (ONNX's Pad)."""
    sl = tuple(slice(max(0, -b), x.shape[d] - max(0, -a)) for d, (b, a) in enumerate(zip(before, after)))
    width = [(max(0, b), max(0, a)) for b, a in zip(before, after)]
    kw = {"constant_values": value} if mode == "constant" else {}
    return np.pad(x[sl], width, mode, **kw)


def moves():
    """Each op on a run-time x with its shape arguments known (initializers): Pad in its four
    modes (pads wider than the data, a crop, a constant of run time), Tile (a few copies and a
    loop of them), TopK along the middle axis of a 3-D tensor, ReduceProd, ArgMax and ArgMin
    with select_last_index (ties), BatchNormalization, Einsum, and ScatterElements with indices
    of run time (negative ones, repeated ones under `add`)."""
    nodes = [helper.make_node("Pad", ["x", "pads_r", "", "axes_r"], ["p_reflect"], mode="reflect"),
             helper.make_node("Pad", ["x", "pads_e"], ["p_edge"], mode="edge"),
             helper.make_node("Pad", ["x", "pads_w"], ["p_wrap"], mode="wrap"),
             helper.make_node("Pad", ["x", "pads_c", "value"], ["p_const"]),
             helper.make_node("Tile", ["x", "reps"], ["tiled"]),
             helper.make_node("TopK", ["x", "k"], ["top_v", "top_i"], axis=1),
             helper.make_node("ReduceProd", ["x", "prod_axes"], ["prod"], keepdims=0),
             helper.make_node("ArgMax", ["ties"], ["amax_last"], axis=1, select_last_index=1),
             helper.make_node("ArgMin", ["ties"], ["amin_last"], axis=0, keepdims=0, select_last_index=1),
             helper.make_node("BatchNormalization", ["x", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"], epsilon=1e-3),
             helper.make_node("Einsum", ["x", "w"], ["ein"], equation="bij,bkj->bik"),
             helper.make_node("ScatterElements", ["x", "idx", "upd"], ["scat"], axis=2),
             helper.make_node("Slice", ["upd", "s0", "s2", "s1"], ["upd2"]),
             helper.make_node("ScatterElements", ["x", "dup", "upd2"], ["scat_add"], axis=1, reduction="add")]
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    ties = np.array([[1, 3, 3, 0], [2, 2, 2, 2], [0, 5, 1, 5]], np.float32)
    w = rng.standard_normal((2, 5, 4)).astype(np.float32)
    bn = {k: rng.standard_normal(3).astype(np.float32) for k in ("bn_s", "bn_b", "bn_m")}
    bn["bn_v"] = (rng.random(3) + 0.5).astype(np.float32)
    idx = np.array([[[3, -4, 1], [-1, 0, 2], [2, 1, 0]], [[0, 1, -2], [3, 2, 1], [-3, -2, -1]]], np.int64)
    dup = np.array([[[0, 2, 2], [2, 2, -3]], [[1, 1, 1], [0, -1, 0]]], np.int64)
    upd = rng.standard_normal((2, 3, 3)).astype(np.float32)
    inits = {"pads_r": np.array([2, 2, 1, 1], np.int64), "axes_r": np.array([-1, 1], np.int64),
             "pads_e": np.array([1, 0, 0, 0, 2, 1], np.int64), "pads_w": np.array([0, -1, 6, 0, 2, 5], np.int64),
             "pads_c": np.array([0, 1, -1, 1, 0, 2], np.int64), "reps": np.array([2, 1, 17], np.int64),
             "k": np.array([2], np.int64), "prod_axes": np.array([0, 2], np.int64),
             "s0": np.array([0], np.int64), "s2": np.array([2], np.int64), "s1": np.array([1], np.int64)}
    inits.update(bn)
    outs = {"p_reflect": np_pad(x, [0, 2, 2], [0, 1, 1], "reflect"),
            "p_edge": np_pad(x, [1, 0, 0], [0, 2, 1], "edge"),
            "p_wrap": np_pad(x, [0, -1, 6], [0, 2, 5], "wrap"),
            "p_const": np_pad(x, [0, 1, -1], [1, 0, 2], "constant", np.float32(-2.5)),
            "tiled": np.tile(x, (2, 1, 17))}
    order = np.argsort(-x, axis=1, kind="stable")[:, :2]
    outs["top_v"] = np.take_along_axis(x, order, 1)
    outs["top_i"] = order.astype(np.int64)
    outs["prod"] = np.prod(x, axis=(0, 2))
    outs["amax_last"] = (3 - np.argmax(ties[:, ::-1], axis=1, keepdims=True)).astype(np.int64)
    outs["amin_last"] = (2 - np.argmin(ties[::-1], axis=0)).astype(np.int64)
    r = lambda v: v.reshape(3, 1)
    outs["bn"] = r(bn["bn_s"]) * ((x - r(bn["bn_m"])) / np.sqrt(r(bn["bn_v"]) + np.float32(1e-3))) + r(bn["bn_b"])
    outs["ein"] = np.einsum("bij,bkj->bik", x, w)
    scat = x.copy()
    scat_add = x.copy()
    for a in range(2):
        for b in range(3):
            for c in range(3):
                scat[a, b, idx[a, b, c]] = upd[a, b, c]
                if b < 2:
                    scat_add[a, dup[a, b, c], c] += upd[a, b, c]
    outs["scat"], outs["scat_add"] = scat, scat_add
    assert list(outs["amax_last"].ravel()) == [2, 3, 3] and list(outs["amin_last"]) == [2, 1, 2, 0]
    ins = {"x": x, "value": np.array(-2.5, np.float32), "ties": ties, "w": w, "idx": idx, "dup": dup, "upd": upd}
    ins_vi = [vi(k, F32 if v.dtype == np.float32 else I64, v.shape) for k, v in ins.items()]
    outs = {k: np.asarray(v) for k, v in outs.items()}
    out_vi = [vi(k, F32 if v.dtype == np.float32 else I64, v.shape) for k, v in outs.items()]
    g = helper.make_graph(nodes, "moves", ins_vi, out_vi, [init(k, v) for k, v in inits.items()])
    m = model(g)
    m.opset_import[0].version = 19 # Pad's wrap mode
    return m, [(ins, outs)]


def scatter_decode():
    """A decode loop that writes each step's token into column i of a [2, 6] tensor carried by
    the Loop (`tokens[:, i] = tok` as PyTorch exports it: ScatterElements with indices of run
    time), written in place; the token is the argmax of a row of a table picked by the last
    token. A start token past the table's rows is caught by Gather's index check."""
    V, M = 5, 6
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Gather", ["table", "tok"], ["rows"], axis=0),
         helper.make_node("ArgMax", ["rows"], ["nxt"], axis=1),
         helper.make_node("Reshape", ["i", "one_one"], ["i11"]),
         helper.make_node("Expand", ["i11", "b1"], ["col"]),
         helper.make_node("ScatterElements", ["tokens", "col", "nxt"], ["tokens_out"], axis=1),
         helper.make_node("Reshape", ["nxt", "flat"], ["tok_out"])],
        "body", [vi("i", I64, []), vi("cond_in", BOOL, []), vi("tok", I64, [2]), vi("tokens", I64, [2, M])],
        [vi("cond_out", BOOL, []), vi("tok_out", I64, [2]), vi("tokens_out", I64, [2, M])],
        [init("one_one", np.array([1, 1], np.int64)), init("b1", np.array([2, 1], np.int64)),
         init("flat", np.array([2], np.int64))])
    rng = np.random.default_rng(3)
    table = rng.standard_normal((V, V)).astype(np.float32)
    nodes = [helper.make_node("Loop", ["m", "", "start", "tokens0"], ["last", "tokens"], name="decode", body=body)]
    g = helper.make_graph(nodes, "scatter_decode", [vi("start", I64, [2]), vi("m", I64, [])],
                          [vi("last", I64, [2]), vi("tokens", I64, [2, M])],
                          [init("table", table), init("tokens0", np.full((2, M), -1, np.int64))])
    cases = []
    for start, m in (([0, 3], M), ([4, 1], 2)):
        tok = np.array(start, np.int64)
        tokens = np.full((2, M), -1, np.int64)
        for i in range(m):
            tok = np.argmax(table[tok], axis=1).astype(np.int64)
            tokens[:, i] = tok
        cases.append(({"start": np.array(start, np.int64), "m": np.array(m, np.int64)},
                      {"last": tok, "tokens": tokens}))
    return model(g), cases


def seq_build():
    """A Loop that grows a sequence with SequenceInsert each iteration (from SequenceEmpty, a
    list carried by the Loop and appended in place), reads its last item and its length in the
    body, and is made one tensor after the loop by ConcatFromSequence three ways (stacked on a
    new first axis, on a new last axis, and joined along the items' axis)."""
    M = 4
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Cast", ["i"], ["fi"], to=F32),
         helper.make_node("Mul", ["x", "fi"], ["xi"]),
         helper.make_node("Add", ["xi", "w"], ["item"]),
         helper.make_node("SequenceInsert", ["seq", "item"], ["seq_out"]),
         helper.make_node("SequenceAt", ["seq_out", "last"], ["back"]),
         helper.make_node("SequenceLength", ["seq_out"], ["n"]),
         helper.make_node("Cast", ["n"], ["fn"], to=F32),
         helper.make_node("Mul", ["back", "fn"], ["scaled"]),
         helper.make_node("Add", ["acc", "scaled"], ["acc_out"])],
        "body", [vi("i", I64, []), vi("cond_in", BOOL, []),
                 helper.make_tensor_sequence_value_info("seq", F32, [3]), vi("acc", F32, [3])],
        [vi("cond_out", BOOL, []), helper.make_tensor_sequence_value_info("seq_out", F32, [3]),
         vi("acc_out", F32, [3])],
        [init("last", np.array(-1, np.int64))])
    nodes = [helper.make_node("SequenceEmpty", [], ["seq0"], dtype=F32),
             helper.make_node("Loop", ["m", "", "seq0", "acc0"], ["seq", "acc"], name="grow", body=body),
             helper.make_node("ConcatFromSequence", ["seq"], ["rows"], axis=0, new_axis=1),
             helper.make_node("ConcatFromSequence", ["seq"], ["cols"], axis=1, new_axis=1),
             helper.make_node("ConcatFromSequence", ["seq"], ["flat"], axis=0)]
    g = helper.make_graph(nodes, "seq_build", [vi("x", F32, [3]), vi("w", F32, [3])],
                          [vi("rows", F32, [M, 3]), vi("cols", F32, [3, M]), vi("flat", F32, [3 * M]),
                           vi("acc", F32, [3])],
                          [init("m", np.array(M, np.int64)), init("acc0", np.zeros(3, np.float32))])
    cases = []
    for x, w in (([1.0, -2.0, 0.5], [0.25, 1.0, -3.0]), ([0.0, 3.0, -1.5], [2.0, 2.0, 2.0])):
        x, w = np.array(x, np.float32), np.array(w, np.float32)
        seq, acc = [], np.zeros(3, np.float32)
        for i in range(M):
            seq.append(x * np.float32(i) + w)
            acc = acc + seq[-1] * np.float32(len(seq))
        cases.append(({"x": x, "w": w}, {"rows": np.stack(seq), "cols": np.stack(seq, axis=1),
                                         "flat": np.concatenate(seq), "acc": acc}))
    return model(g), cases


def seq_map():
    """SplitToSequence of a matrix into its rows, SequenceMap over them with a tensor given to
    every item (two results per row), then SequenceInsert at a position, SequenceErase of the
    first item and SequenceAt from the end (copies of the list), and ConcatFromSequence."""
    body = helper.make_graph(
        [helper.make_node("Mul", ["row", "b"], ["rb"]),
         helper.make_node("Add", ["rb", "one"], ["mapped"]),
         helper.make_node("ReduceSum", ["row"], ["total"], keepdims=0)],
        "map_body", [vi("row", F32, [3]), vi("b", F32, [3])], [vi("mapped", F32, [3]), vi("total", F32, [])],
        [init("one", np.float32(1.0))])
    nodes = [helper.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
             helper.make_node("SequenceMap", ["rows", "b"], ["mapped", "totals"], body=body),
             helper.make_node("SequenceInsert", ["mapped", "c", "at1"], ["inserted"]),
             helper.make_node("SequenceErase", ["inserted", "at0"], ["erased"]),
             helper.make_node("SequenceAt", ["erased", "back2"], ["picked"]),
             helper.make_node("ConcatFromSequence", ["mapped"], ["out_mapped"], axis=0, new_axis=1),
             helper.make_node("ConcatFromSequence", ["totals"], ["out_totals"], axis=0, new_axis=1),
             helper.make_node("ConcatFromSequence", ["erased"], ["out_edited"], axis=0, new_axis=1)]
    g = helper.make_graph(nodes, "seq_map", [vi("x", F32, [4, 3]), vi("b", F32, [3]), vi("c", F32, [3])],
                          [vi("out_mapped", F32, [4, 3]), vi("out_totals", F32, [4]),
                           vi("out_edited", F32, [4, 3]), vi("picked", F32, [3])],
                          [init("at1", np.array(1, np.int64)), init("at0", np.array(0, np.int64)),
                           init("back2", np.array(-2, np.int64))])
    x = (np.arange(12, dtype=np.float32).reshape(4, 3) - 5) * np.float32(0.5)
    b = np.array([2.0, -1.0, 0.5], np.float32)
    c = np.array([9.0, 8.0, 7.0], np.float32)
    mapped = [row * b + np.float32(1.0) for row in x]
    totals = [np.float32(row.sum()) for row in x]
    edited = (mapped[:1] + [c] + mapped[1:])[1:]
    return model(g), [({"x": x, "b": b, "c": c},
                       {"out_mapped": np.stack(mapped), "out_totals": np.stack(totals).astype(np.float32),
                        "out_edited": np.stack(edited), "picked": edited[-2]})]


MODELS = [if_outer, if_nested, loop_count, loop_while, loop_both, loop_scan, scan_directions,
          if_in_loop, greedy_decode, cg, onnx_semantics, half_loop,
          lstm_bidirectional, gru_linear_before_reset, attention_loop, moves, scatter_decode,
          seq_build, seq_map]

# ---- conv_loop: a WaveNet-style generator, a Loop whose body runs Conv1d over a carried state ----

def np_conv1d(x, w, b, before, after, stride=1, dilation=1):
    """ONNX's Conv of [N, C, L] by [M, C, K] with zero pads, written out as sums."""
    n, c, length = x.shape
    m, _, k = w.shape
    xp = np.concatenate([np.zeros((n, c, before), x.dtype), x, np.zeros((n, c, after), x.dtype)], axis=2)
    out = (length + before + after - (k - 1) * dilation - 1) // stride + 1
    y = np.zeros((n, m, out), np.float64)
    for o in range(out):
        for j in range(k):
            y[:, :, o] += xp[:, :, o * stride + j * dilation] @ w[:, :, j].T.astype(np.float64)
    return (y + b[None, :, None]).astype(x.dtype)


def conv_loop():
    """h carried through m steps: t = tanh(Conv(h; 4 channels, kernel 3, causal pads [2, 0])),
    h = h + Conv(t; 3 channels, kernel 2, dilation 2, causal pads [2, 0]); each step's MaxPool
    (kernel 2, stride 2) of h and a strided Conv (kernel 3, stride 2, pads 1) are scan outputs."""
    C, L = 3, 8
    rng = np.random.default_rng(11)
    w1 = (rng.standard_normal((4, C, 3)) * 0.5).astype(np.float32)
    b1 = rng.standard_normal(4).astype(np.float32)
    w2 = (rng.standard_normal((C, 4, 2)) * 0.5).astype(np.float32)
    b2 = rng.standard_normal(C).astype(np.float32)
    w3 = (rng.standard_normal((2, C, 3)) * 0.5).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Conv", ["h", "w1", "b1"], ["c1"], kernel_shape=[3], pads=[2, 0]),
         helper.make_node("Tanh", ["c1"], ["t"]),
         helper.make_node("Conv", ["t", "w2", "b2"], ["c2"], dilations=[2], pads=[2, 0]),
         helper.make_node("Add", ["h", "c2"], ["h_out"]),
         helper.make_node("MaxPool", ["h_out"], ["pooled"], kernel_shape=[2], strides=[2]),
         helper.make_node("Conv", ["h_out", "w3"], ["strided"], strides=[2], pads=[1, 1])],
        "body", [vi("i", I64, []), vi("cond_in", BOOL, []), vi("h", F32, [1, C, L])],
        [vi("cond_out", BOOL, []), vi("h_out", F32, [1, C, L]), vi("pooled", F32, [1, C, L // 2]),
         vi("strided", F32, [1, 2, L // 2])],
        [init("w1", w1), init("b1", b1), init("w2", w2), init("b2", b2), init("w3", w3)])
    nodes = [helper.make_node("Loop", ["m", "", "h0"], ["h", "pools", "strides"], name="generate", body=body)]
    g = helper.make_graph(nodes, "conv_loop", [vi("h0", F32, [1, C, L]), vi("m", I64, [])],
                          [vi("h", F32, [1, C, L]), vi("pools", F32, [4, 1, C, L // 2]),
                           vi("strides", F32, [4, 1, 2, L // 2])])
    h = rng.standard_normal((1, C, L)).astype(np.float32)
    h0 = h.copy()
    pools, strided = [], []
    for _ in range(4):
        t = np.tanh(np_conv1d(h, w1, b1, 2, 0))
        h = h + np_conv1d(t, w2, b2, 2, 0, dilation=2)
        pools.append(np.maximum(h[:, :, 0::2], h[:, :, 1::2]))
        strided.append(np_conv1d(h, w3, np.zeros(2, np.float32), 1, 1, stride=2))
    return model(g), [({"h0": h0, "m": np.array(4, np.int64)},
                       {"h": h, "pools": np.stack(pools), "strides": np.stack(strided)})]


MODELS += [conv_loop]


def np_log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    d = x - m
    return d - np.log(np.exp(d).sum(axis=axis, keepdims=True))


def np_nll(lp, t, w=None, ii=None, reduction="mean"):
    """ONNX's NegativeLogLikelihoodLoss of lp [N, C, ...] at targets t [N, ...], written out:
    -lp at each target's class times its weight, 0 where the target is ii; the mean divides by
    the weights picked where there are weights or an ii."""
    keep = t != ii if ii is not None else np.ones(t.shape, bool)
    loss = np.zeros(t.shape, lp.dtype)
    picked = np.zeros(t.shape, lp.dtype)
    for pos in np.ndindex(*t.shape):
        if keep[pos]:
            c = int(t[pos])
            picked[pos] = (w[c] if w is not None else 1.0)
            loss[pos] = -lp[(pos[0], c) + pos[1:]] * picked[pos]
    if reduction == "none":
        return loss
    if reduction == "sum":
        return lp.dtype.type(loss.sum())
    if w is not None or ii is not None:
        return lp.dtype.type(loss.sum() / picked.sum())
    return lp.dtype.type(loss.mean())


def losses_onehot():
    """SoftmaxCrossEntropyLoss with class weights and a negative ignore_index over [N, C, d]
    (its log_prob too), NegativeLogLikelihoodLoss with int32 targets and an ignore_index inside
    0 to C - 1, summed, and OneHot of indices of run time (a negative one counted from the end,
    one out of range giving a row of `off`) along axis 1 with values of run time; targets,
    indices and values are inputs. A target out of range stops the run (python/tests)."""
    N, C, D, depth = 3, 4, 2, 5
    nodes = [helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t", "w"], ["sce", "log_prob"], ignore_index=-1),
             helper.make_node("NegativeLogLikelihoodLoss", ["log_prob", "t32"], ["nll"], reduction="sum",
                              ignore_index=2),
             helper.make_node("OneHot", ["idx", "depth", "vals"], ["hot"], axis=1)]
    g = helper.make_graph(nodes, "losses_onehot",
                          [vi("x", F32, [N, C, D]), vi("t", I64, [N, D]), vi("w", F32, [C]), vi("t32", I32, [N, D]),
                           vi("idx", I64, [2, 3]), vi("vals", F32, [2])],
                          [vi("sce", F32, []), vi("log_prob", F32, [N, C, D]), vi("nll", F32, []),
                           vi("hot", F32, [2, depth, 3])],
                          [init("depth", np.array(depth, np.int64))])
    rng = np.random.default_rng(11)
    x = rng.standard_normal((N, C, D)).astype(np.float32)
    w = np.array([0.5, 2.0, 1.0, 0.25], np.float32)
    cases = []
    for t, t32 in (([[0, 3], [-1, 1], [2, -1]], [[1, 2], [3, 0], [2, 2]]),
                   ([[-1, -1], [3, 3], [1, 0]], [[0, 0], [1, 2], [3, 1]])):
        t, t32 = np.array(t, np.int64), np.array(t32, np.int32)
        idx = np.array([[0, -1, 7], [4, -5, 2]], np.int64)
        vals = np.array([-0.5, 3.0], np.float32)
        lp = np_log_softmax(x, 1)
        hot = np.full((2, depth, 3), vals[0], np.float32)
        for a in range(2):
            for b in range(3):
                k = idx[a, b] + depth if idx[a, b] < 0 else idx[a, b]
                if 0 <= k < depth:
                    hot[a, k, b] = vals[1]
        cases.append(({"x": x, "t": t, "w": w, "t32": t32, "idx": idx, "vals": vals},
                      {"sce": np_nll(lp, t, w, -1), "log_prob": lp, "nll": np_nll(lp, t32, None, 2, "sum"),
                       "hot": hot}))
    return model(g), cases


MODELS += [losses_onehot]


# ---- index_moves: GatherND, GridSample, DepthToSpace, SpaceToDepth on data of run time ----

def np_gather_nd(x, idx, batch_dims):
    """ONNX's GatherND written out: each index tuple's slice, after the shared batch axes."""
    lead = idx.shape[:-1]
    out = np.zeros(lead + x.shape[batch_dims + idx.shape[-1]:], x.dtype)
    for at in np.ndindex(*lead):
        out[at] = x[at[:batch_dims] + tuple(int(i) for i in idx[at])]
    return out


def np_grid_sample_bilinear(x, grid, align):
    """GridSample of [N, C, H, W], mode linear, padding zeros, from the operator's definition."""
    n, c, h, w = x.shape
    _, oh, ow, _ = grid.shape
    y = np.zeros((n, c, oh, ow), x.dtype)

    def pos(g, size):
        return (g + 1) / 2 * (size - 1) if align else ((g + 1) * size - 1) / 2

    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                fx, fy = pos(float(grid[b, i, j, 0]), w), pos(float(grid[b, i, j, 1]), h)
                x0, y0 = int(np.floor(fx)), int(np.floor(fy))
                for yy, wy in ((y0, 1 - (fy - y0)), (y0 + 1, fy - y0)):
                    for xx, wx in ((x0, 1 - (fx - x0)), (x0 + 1, fx - x0)):
                        if 0 <= yy < h and 0 <= xx < w:
                            y[b, :, i, j] += wy * wx * x[b, :, yy, xx]
    return y


def index_moves():
    """GatherND with indices of run time (batch_dims 0 and 1, negative ones), GridSample
    bilinear (align_corners 0 and 1, positions outside the input), DepthToSpace (CRD) and
    SpaceToDepth (DCR), as PyTorch's exports write advanced indexing, grid_sample and
    pixel_shuffle."""
    nodes = [helper.make_node("GatherND", ["x", "idx0"], ["nd0"]),
             helper.make_node("GatherND", ["x", "idx1"], ["nd1"], batch_dims=1),
             helper.make_node("GridSample", ["img", "grid"], ["gs0"], mode="linear", align_corners=0),
             helper.make_node("GridSample", ["img", "grid"], ["gs1"], mode="linear", align_corners=1),
             helper.make_node("DepthToSpace", ["img"], ["d2s"], blocksize=2, mode="CRD"),
             helper.make_node("SpaceToDepth", ["img"], ["s2d"], blocksize=2)]
    rng = np.random.default_rng(23)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    idx0 = np.array([[[1, -1], [0, 2]], [[-2, 0], [1, -3]]], np.int64)  # [2, 2, 2]: rows of x[i, j]
    idx1 = np.array([[[2, 3], [-1, 0], [0, 1]], [[1, 1], [2, -4], [0, 0]]], np.int64)  # [2, 3, 2]
    img = rng.standard_normal((2, 4, 4, 6)).astype(np.float32)
    grid = rng.uniform(-1.3, 1.3, (2, 3, 5, 2)).astype(np.float32)
    outs = {"nd0": np_gather_nd(x, idx0, 0), "nd1": np_gather_nd(x, idx1, 1),
            "gs0": np_grid_sample_bilinear(img, grid, False), "gs1": np_grid_sample_bilinear(img, grid, True)}
    b, c, h, w = img.shape
    t = img.reshape(b, c // 4, 2, 2, h, w).transpose(0, 1, 4, 2, 5, 3)
    outs["d2s"] = t.reshape(b, c // 4, h * 2, w * 2)
    t = img.reshape(b, c, h // 2, 2, w // 2, 2).transpose(0, 3, 5, 1, 2, 4)
    outs["s2d"] = t.reshape(b, c * 4, h // 2, w // 2)
    ins = {"x": x, "idx0": idx0, "idx1": idx1, "img": img, "grid": grid}
    ins_vi = [vi(k, F32 if v.dtype == np.float32 else I64, v.shape) for k, v in ins.items()]
    out_vi = [vi(k, F32, v.shape) for k, v in outs.items()]
    m = model(helper.make_graph(nodes, "index_moves", ins_vi, out_vi))
    m.opset_import[0].version = 20  # GridSample's linear
    return m, [(ins, outs)]


MODELS += [index_moves]


# ---- linear_attention: opset 27's LinearAttention, a recurrence over time steps -----------------

def np_linear_attention(q, k, v, state, qh, kh, scale, decay=None, beta=None):
    """ONNX's LinearAttention (docs of the op) written out in float64, a token and a head at a
    time: q [B, T, qh * dk], k [B, T, kh * dk], v [B, T, kh * dv], state [B, kh, dk, dv]; decay
    per key dimension [B, T, kh * dk] or per head [B, T, kh], beta [B, T, kh] or [B, T, 1]. Query
    head h reads the state of kv head h // (qh // kh). Gives the output and the last state."""
    bn, tn = q.shape[:2]
    dk, dv = q.shape[2] // qh, v.shape[2] // kh
    st = state.astype(np.float64).copy()
    y = np.zeros((bn, tn, qh * dv))
    for b in range(bn):
        for t in range(tn):
            for h in range(kh):
                kt = k[b, t, h * dk:(h + 1) * dk].astype(np.float64)
                vt = v[b, t, h * dv:(h + 1) * dv].astype(np.float64)
                s = st[b, h]
                if decay is not None:
                    gd = decay[b, t, h * dk:(h + 1) * dk] if decay.shape[2] == kh * dk else decay[b, t, h]
                    s = s * np.exp(np.asarray(gd, np.float64)).reshape(-1, 1)
                if beta is not None:
                    bt = beta[b, t, h if beta.shape[2] == kh else 0]
                    vt = bt * (vt - s.T @ kt)
                st[b, h] = s + np.outer(kt, vt)
            for hq in range(qh):
                qt = q[b, t, hq * dk:(hq + 1) * dk].astype(np.float64)
                y[b, t, hq * dv:(hq + 1) * dv] = scale * (qt @ st[b, hq // (qh // kh)])
    return y.astype(np.float32), st.astype(np.float32)


def linear_attention():
    """Two LinearAttention nodes, a prefill and the decode steps after it: the first gated_delta
    (decay per key dimension, beta per head) from a past_state input, four query heads on two kv
    heads, d_k 3 and d_v 4 (a state that is not square), scale 0.5; the second gated (decay per
    head) from the first's present_state, two query heads on one kv head, the default scale."""
    B, T1, T2, dk, dv = 2, 3, 2, 3, 4
    rng = np.random.default_rng(27)
    nodes = [helper.make_node("LinearAttention", ["q", "k", "v", "past", "g", "beta"], ["y1", "s1"],
                              name="prefill", q_num_heads=4, kv_num_heads=2, scale=0.5),
             helper.make_node("Reshape", ["s1", "shape1"], ["s1r"]),
             helper.make_node("LinearAttention", ["q2", "k2", "v2", "s1r", "g2"], ["y2", "s2"],
                              name="decode", q_num_heads=2, kv_num_heads=1, update_rule="gated")]
    ins = {"q": (B, T1, 4 * dk), "k": (B, T1, 2 * dk), "v": (B, T1, 2 * dv), "past": (B, 2, dk, dv),
           "g": (B, T1, 2 * dk), "beta": (B, T1, 2),
           "q2": (2 * B, T2, 2 * dk), "k2": (2 * B, T2, dk), "v2": (2 * B, T2, dv), "g2": (2 * B, T2, 1)}
    g = helper.make_graph(nodes, "linear_attention", [vi(n, F32, list(d)) for n, d in ins.items()],
                          [vi("y1", F32, [B, T1, 4 * dv]), vi("y2", F32, [2 * B, T2, 2 * dv]),
                           vi("s2", F32, [2 * B, 1, dk, dv])],
                          [init("shape1", np.array([2 * B, 1, dk, dv], np.int64))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 27)],
                          producer_name="cfx tests/onnx/make_models.py")
    x = {n: (rng.standard_normal(d) * 0.5).astype(np.float32) for n, d in ins.items()}
    x["g"] = -np.abs(x["g"])                  # log-space decays, below 0
    x["g2"] = -np.abs(x["g2"])
    x["beta"] = 1 / (1 + np.exp(-x["beta"]))  # update rates in (0, 1)
    y1, s1 = np_linear_attention(x["q"], x["k"], x["v"], x["past"], 4, 2, 0.5, x["g"], x["beta"])
    y2, s2 = np_linear_attention(x["q2"], x["k2"], x["v2"], s1.reshape(2 * B, 1, dk, dv), 2, 1,
                                 1 / np.sqrt(dk), x["g2"])
    return m, [(x, {"y1": y1, "y2": y2, "s2": s2})]


MODELS += [linear_attention]


# ---- group_norm_loop: InstanceNormalization, and GroupNorm as PyTorch writes it, in a Loop ----

def np_instance_norm(x, scale, bias, eps):
    axes = tuple(range(2, x.ndim))
    mean = x.mean(axis=axes, keepdims=True, dtype=np.float64)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    shape = (-1,) + (1,) * (x.ndim - 2)
    return (scale.reshape(shape) * (x - mean) / np.sqrt(var + eps) + bias.reshape(shape)).astype(x.dtype)


def group_norm_loop():
    """A diffusion-style step repeated m times, h = h + 0.5 * silu(GroupNorm(h)), the GroupNorm
    (2 groups of [1, 4, 3, 3]) as PyTorch's exporter writes nn.GroupNorm: Reshape to [1, 2, 18],
    InstanceNormalization with unit scale and zero bias, Reshape back, the per-channel weight and
    bias. Beside it an InstanceNormalization of a [2, 3, 5] input (scale, bias, epsilon 1e-3)."""
    rng = np.random.default_rng(21)
    gamma = rng.standard_normal((4, 1, 1)).astype(np.float32)
    beta = rng.standard_normal((4, 1, 1)).astype(np.float32)
    scale = rng.standard_normal(3).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Reshape", ["h", "grouped"], ["hg"]),
         helper.make_node("InstanceNormalization", ["hg", "ones", "zeros"], ["ng"], epsilon=1e-5),
         helper.make_node("Reshape", ["ng", "full"], ["n"]),
         helper.make_node("Mul", ["n", "gamma"], ["ns"]),
         helper.make_node("Add", ["ns", "beta"], ["nb"]),
         helper.make_node("Sigmoid", ["nb"], ["sg"]),
         helper.make_node("Mul", ["nb", "sg"], ["silu"]),
         helper.make_node("Mul", ["silu", "half"], ["step"]),
         helper.make_node("Add", ["h", "step"], ["h_out"])],
        "body", [vi("i", I64, []), vi("cond_in", BOOL, []), vi("h", F32, [1, 4, 3, 3])],
        [vi("cond_out", BOOL, []), vi("h_out", F32, [1, 4, 3, 3])],
        [init("grouped", np.array([1, 2, -1], np.int64)), init("full", np.array([1, 4, 3, 3], np.int64)),
         init("ones", np.ones(2, np.float32)), init("zeros", np.zeros(2, np.float32)),
         init("gamma", gamma), init("beta", beta), init("half", np.array(0.5, np.float32))])
    nodes = [helper.make_node("Loop", ["m", "", "h0"], ["h"], name="denoise", body=body),
             helper.make_node("InstanceNormalization", ["x", "scale", "bias"], ["y"], epsilon=1e-3)]
    g = helper.make_graph(nodes, "group_norm_loop",
                          [vi("h0", F32, [1, 4, 3, 3]), vi("m", I64, []), vi("x", F32, [2, 3, 5])],
                          [vi("h", F32, [1, 4, 3, 3]), vi("y", F32, [2, 3, 5])],
                          [init("scale", scale), init("bias", bias)])
    h0 = rng.standard_normal((1, 4, 3, 3)).astype(np.float32)
    x = (rng.standard_normal((2, 3, 5)) * 3 + 1).astype(np.float32)
    h = h0.copy()
    for _ in range(3):
        n = np_instance_norm(h.reshape(1, 2, 18), np.ones(2, np.float32), np.zeros(2, np.float32), 1e-5)
        n = n.reshape(1, 4, 3, 3) * gamma + beta
        h = (h + 0.5 * (n / (1 + np.exp(-n)))).astype(np.float32)
    return model(g), [({"h0": h0, "m": np.array(3, np.int64), "x": x},
                       {"h": h, "y": np_instance_norm(x, scale, bias, 1e-3)})]


MODELS += [group_norm_loop]


# ---- rank6_moves: PyTorch's pixel_unshuffle, a Reshape to rank 6, a Transpose, a Reshape back ----

def np_unshuffle(x, r):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // r, r, w // r, r).transpose(0, 1, 3, 5, 2, 4).reshape(n, c * r * r, h // r, w // r)


def np_shuffle(x, r):
    n, c, h, w = x.shape
    return x.reshape(n, c // (r * r), r, r, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(n, c // (r * r), h * r, w * r)


def rank6_moves():
    """F.pixel_unshuffle (factor 2) as PyTorch writes it, through a rank-6 intermediate cfx holds
    no value of (Reshape, Transpose, Reshape: one transpose of the merged axes), of the input;
    and in a Loop's body, pixel_shuffle (the inverse, the same three ops) of the carried state
    scaled, then unshuffled again: h = unshuffle(shuffle(h) * 0.5 + 1)."""
    rng = np.random.default_rng(31)
    N, C, H, W = 2, 3, 4, 6

    def chain(tag, src, dst, mid, perm, out):
        return [helper.make_node("Reshape", [src, tag + "_mid"], [tag + "_6d"]),
                helper.make_node("Transpose", [tag + "_6d"], [tag + "_t"], perm=perm),
                helper.make_node("Reshape", [tag + "_t", tag + "_out"], [dst])], \
            [init(tag + "_mid", np.array(mid, np.int64)), init(tag + "_out", np.array(out, np.int64))]
    un_nodes, un_inits = chain("un", "x", "y", [N, C, H // 2, 2, W // 2, 2], [0, 1, 3, 5, 2, 4],
                               [N, C * 4, H // 2, W // 2])
    sh_nodes, sh_inits = chain("sh", "h", "s", [N, C, 2, 2, H // 2, W // 2], [0, 1, 4, 2, 5, 3],
                               [N, C, H, W])
    bu_nodes, bu_inits = chain("bu", "s2", "h_out", [N, C, H // 2, 2, W // 2, 2], [0, 1, 3, 5, 2, 4],
                               [N, C * 4, H // 2, W // 2])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"])] + sh_nodes +
        [helper.make_node("Mul", ["s", "half"], ["s1"]), helper.make_node("Add", ["s1", "one"], ["s2"])] + bu_nodes,
        "body", [vi("i", I64, []), vi("cond_in", BOOL, []), vi("h", F32, [N, C * 4, H // 2, W // 2])],
        [vi("cond_out", BOOL, []), vi("h_out", F32, [N, C * 4, H // 2, W // 2])],
        sh_inits + bu_inits + [init("half", np.array(0.5, np.float32)), init("one", np.array(1, np.float32))])
    nodes = un_nodes + [helper.make_node("Loop", ["m", "", "y"], ["h"], name="shuffles", body=body)]
    g = helper.make_graph(nodes, "rank6_moves", [vi("x", F32, [N, C, H, W]), vi("m", I64, [])],
                          [vi("y", F32, [N, C * 4, H // 2, W // 2]), vi("h", F32, [N, C * 4, H // 2, W // 2])],
                          un_inits)
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    y = np_unshuffle(x, 2)
    assert np.array_equal(np_shuffle(y, 2), x)   # the two numpy moves are inverses
    h = y
    for _ in range(2):
        h = np_unshuffle(np_shuffle(h, 2) * np.float32(0.5) + np.float32(1), 2)
    return model(g), [({"x": x, "m": np.array(2, np.int64)}, {"y": y, "h": h})]


MODELS += [rank6_moves]


def narrow_quant():
    """uint8 arithmetic that wraps (Add, Sub, Mul; a Cast to int8 and its Neg, whose
    -(-128) is -128), and QuantizeLinear/DequantizeLinear per axis (axis 1, a scale and a uint8
    zero point per column; quotients at halves round to even). cfx holds the narrow integers in
    i32 (docs/onnx.md); numpy computes in uint8 and int8, and the quantization is written out."""
    U8, I8 = TensorProto.UINT8, TensorProto.INT8
    scale = np.array([0.5, 2.0, 0.25], np.float32)
    zp = np.array([128, 0, 10], np.uint8)
    nodes = [helper.make_node("Add", ["a", "b"], ["sum"]),
             helper.make_node("Sub", ["a", "b"], ["diff"]),
             helper.make_node("Mul", ["a", "b"], ["prod"]),
             helper.make_node("Cast", ["a"], ["a8"], to=I8),
             helper.make_node("Neg", ["a8"], ["neg"]),
             helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["q"], axis=1),
             helper.make_node("DequantizeLinear", ["q", "scale", "zp"], ["dq"], axis=1)]
    g = helper.make_graph(nodes, "narrow_quant", [vi("a", U8, [6]), vi("b", U8, [6]), vi("x", F32, [3, 3])],
                          [vi("sum", U8, [6]), vi("diff", U8, [6]), vi("prod", U8, [6]), vi("neg", I8, [6]),
                           vi("q", U8, [3, 3]), vi("dq", F32, [3, 3])],
                          [init("scale", scale), init("zp", zp)])
    a = np.array([250, 3, 128, 0, 255, 17], np.uint8)
    b = np.array([10, 5, 200, 1, 255, 16], np.uint8)
    # x / scale: 1.25 / 0.5 = 2.5 and 5 / 2 = 2.5 round to 2, 0.875 / 0.25 = 3.5 to 4, -0.25 / 0.5
    # = -0.5 to -0; 100 / 0.5 + 128 and -70 / 0.5 + 128 saturate; 600 / 2 saturates at 255
    x = np.array([[1.25, 5.0, 0.875], [-0.25, -3.0, -1.0], [100.0, 600.0, -70.0]], np.float32)
    with np.errstate(over="ignore"):
        expected = {"sum": a + b, "diff": a - b, "prod": a * b, "neg": -(a.astype(np.int8))}
    q = np.clip(np.rint(x / scale) + zp.astype(np.int32), 0, 255).astype(np.uint8)
    assert list(q[0]) == [130, 2, 14] and list(q[2]) == [255, 255, 0]
    assert list(expected["neg"][2:5]) == [-128, 0, 1]
    expected["q"] = q
    expected["dq"] = ((q.astype(np.float32) - zp.astype(np.float32)) * scale).astype(np.float32)
    return model(g), [({"a": a, "b": b, "x": x}, expected)]


MODELS += [narrow_quant]


# ---- kv_cache_spectra, training_steps: opset 24's TensorScatter in a decoding Loop, DFT, Compress;
# the training ops of ai.onnx.preview.training at a step past the first ---------------------------

def kv_cache_spectra():
    """A Loop of 3 decoding steps writing each step's key row into a circular cache with
    TensorScatter (opset 24) at pos + i, as a decoder's KV-cache update; a real DFT along axis 1
    (onesided), an inverse DFT padded to 10 points, and Compress by a condition of run time with
    the output's declared shape; Det of 4x4 matrices (elimination with row swaps)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Gather", ["new", "i"], ["upd"], axis=0),
         helper.make_node("Add", ["pos", "i"], ["wi"]),
         helper.make_node("TensorScatter", ["c", "upd", "wi"], ["c_out"], mode="circular", axis=2)],
        "body", [vi("i", I64, []), vi("cond_in", BOOL, []), vi("c", F32, [2, 2, 6, 3])],
        [vi("cond_out", BOOL, []), vi("c_out", F32, [2, 2, 6, 3])])
    nodes = [const("steps", np.array(3, np.int64)),
             helper.make_node("Loop", ["steps", "", "cache"], ["cache_out"], name="decode", body=body),
             const("axis1", np.array(1, np.int64)),
             helper.make_node("DFT", ["sig", "", "axis1"], ["spec"], onesided=1),
             const("ten", np.array(10, np.int64)),
             helper.make_node("DFT", ["z", "ten"], ["back"], inverse=1),
             helper.make_node("Compress", ["data", "mask"], ["picked"], axis=0),
             helper.make_node("Det", ["mats"], ["dets"])]
    rng = np.random.default_rng(30)
    cache = rng.standard_normal((2, 2, 6, 3)).astype(np.float32)
    new = rng.standard_normal((3, 2, 2, 1, 3)).astype(np.float32)
    pos = np.array([4, 1], np.int64)
    sig = rng.standard_normal((2, 8, 1)).astype(np.float32)
    z = rng.standard_normal((2, 6, 2)).astype(np.float32)
    data = rng.standard_normal((5, 3)).astype(np.float32)
    mask = np.array([True, False, True, True, False])
    mats = rng.standard_normal((2, 4, 4)).astype(np.float32)
    mats[1, 0, 0] = 0.0  # the first pivot comes from a row below
    want = cache.copy()
    for i in range(3):
        for b in range(2):
            want[b, :, (pos[b] + i) % 6, :] = new[i, b, :, 0, :]
    f = np.fft.rfft(sig[..., 0].astype(np.float64), axis=1)
    w = np.fft.ifft((z[..., 0] + 1j * z[..., 1]).astype(np.complex128), n=10, axis=1)
    outs = {"cache_out": want, "spec": np.stack((f.real, f.imag), axis=-1).astype(np.float32),
            "back": np.stack((w.real, w.imag), axis=-1).astype(np.float32), "picked": data[mask],
            "dets": np.linalg.det(mats.astype(np.float64)).astype(np.float32)}
    ins = {"cache": cache, "new": new, "pos": pos, "sig": sig, "z": z, "data": data, "mask": mask, "mats": mats}
    types = {np.dtype(np.float32): F32, np.dtype(np.int64): I64, np.dtype(bool): BOOL}
    g = helper.make_graph(nodes, "kv_cache_spectra", [vi(k, types[v.dtype], v.shape) for k, v in ins.items()],
                          [vi(k, F32, v.shape) for k, v in outs.items()])
    m = model(g)
    m.opset_import[0].version = 24  # TensorScatter
    m.ir_version = 11
    return m, [(ins, outs)]


def training_steps():
    """Adam at step 3 (its bias correction) on two tensors, and Momentum's nesterov mode at step
    2, of ai.onnx.preview.training (onnxruntime has no kernels of that domain)."""
    nodes = [helper.make_node("Adam", ["r", "t", "x1", "x2", "g1", "g2", "v1", "v2", "h1", "h2"],
                              ["x1n", "x2n", "v1n", "v2n", "h1n", "h2n"], domain="ai.onnx.preview.training",
                              alpha=0.8, beta=0.95, epsilon=1e-4, norm_coefficient=0.01,
                              norm_coefficient_post=0.02),
             helper.make_node("Momentum", ["r", "t2", "x1", "g1", "v1"], ["mx", "mv"],
                              domain="ai.onnx.preview.training", alpha=0.9, beta=0.5, mode="nesterov",
                              norm_coefficient=0.1)]
    rng = np.random.default_rng(31)
    ins = {"r": np.array(0.1, np.float32), "t": np.array(3, np.int64), "t2": np.array(2, np.int64)}
    for k, shape in (("1", (2, 3)), ("2", (4,))):
        ins["x" + k] = rng.standard_normal(shape).astype(np.float32)
        ins["g" + k] = rng.standard_normal(shape).astype(np.float32)
        ins["v" + k] = rng.standard_normal(shape).astype(np.float32)
        ins["h" + k] = rng.uniform(0.1, 1.0, shape).astype(np.float32)
    outs = {}
    r, t = 0.1, 3
    rate = r * np.sqrt(1 - 0.95 ** t) / (1 - 0.8 ** t)
    for k in ("1", "2"):
        x, gr, v, h = (ins[p + k].astype(np.float64) for p in "xgvh")
        gr = 0.01 * x + gr
        vn = 0.8 * v + 0.2 * gr
        hn = 0.95 * h + 0.05 * gr * gr
        outs["x%sn" % k] = ((1 - 0.02) * (x - rate * vn / (np.sqrt(hn) + 1e-4))).astype(np.float32)
        outs["v%sn" % k] = vn.astype(np.float32)
        outs["h%sn" % k] = hn.astype(np.float32)
    x, gr, v = (ins[p + "1"].astype(np.float64) for p in "xgv")
    gr = 0.1 * x + gr
    vn = 0.9 * v + 0.5 * gr
    outs["mx"] = (x - r * (gr + 0.9 * vn)).astype(np.float32)
    outs["mv"] = vn.astype(np.float32)
    order = ["x1n", "x2n", "v1n", "v2n", "h1n", "h2n", "mx", "mv"]
    outs = {k: outs[k] for k in order}
    types = {np.dtype(np.float32): F32, np.dtype(np.int64): I64}
    g = helper.make_graph(nodes, "training_steps", [vi(k, types[v.dtype], v.shape) for k, v in ins.items()],
                          [vi(k, F32, v.shape) for k, v in outs.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid("ai.onnx.preview.training", 1)],
                          producer_name="cfx tests/onnx/make_models.py")
    m.ir_version = IR_VERSION
    return m, [(ins, outs)]


training_steps.no_ort = True
MODELS += [kv_cache_spectra, training_steps]


def float8_round_trip():
    """The float8 types, float4e2m1, float8e8m0 and int4 (held in f32 and i32, rounded or wrapped
    by each node): QuantizeLinear to float8e4m3fn and DequantizeLinear back (saturated, halves to
    even), Cast to float8e5m2 without saturate (past its range inf), CastLike to an int4 initializer
    (toward zero, wrapped), Cast to float4e2m1 (saturated) and to float8e8m0 (rounded up, the sign
    dropped), each back to float or int32; and initializers of float8e4m3fn (one byte each) and
    float4e2m1 (two to a byte) dequantized. Expected values from ml_dtypes' casts and onnx's
    numpy_helper (to_float8e8m0), never from cfx."""
    import ml_dtypes  # onnx's own dependency
    from onnx.numpy_helper import to_float8e8m0
    E4, E5, F4, E8, I4 = (TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E5M2, TensorProto.FLOAT4E2M1,
                          TensorProto.FLOAT8E8M0, TensorProto.INT4)
    c8 = np.array([448, -0.5, 0.013671875, -240], np.float32)  # e4m3fn values: 1.110 2^8, ..., 1.110 2^-7
    f4 = np.array([0.5, -6, 3, 1.5, -0], np.float32)            # float4e2m1 values, an odd count
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["q"]),
        helper.make_node("DequantizeLinear", ["q", "scale"], ["y"]),
        helper.make_node("Cast", ["x"], ["x5"], to=E5, saturate=0),
        helper.make_node("Cast", ["x5"], ["z"], to=F32),
        helper.make_node("CastLike", ["x", "like"], ["x4"]),
        helper.make_node("Cast", ["x4"], ["w"], to=I32),
        helper.make_node("Cast", ["x"], ["xf4"], to=F4),
        helper.make_node("Cast", ["xf4"], ["u"], to=F32),
        helper.make_node("Cast", ["x"], ["xe8"], to=E8, saturate=1, round_mode="up"),
        helper.make_node("Cast", ["xe8"], ["e"], to=F32),
        helper.make_node("DequantizeLinear", ["c8", "one"], ["c8f"]),
        helper.make_node("DequantizeLinear", ["f4", "one"], ["f4f"]),
    ]
    inits = [init("scale", np.float32(2)), init("one", np.float32(1)),
             helper.make_tensor("zp", E4, [], np.zeros(1, ml_dtypes.float8_e4m3fn).tobytes(), raw=True),
             helper.make_tensor("like", I4, [3], [1, 2, 3]),
             helper.make_tensor("c8", E4, [4], c8.astype(ml_dtypes.float8_e4m3fn).tobytes(), raw=True),
             helper.make_tensor("f4", F4, [5], f4)]
    outs = ["y", "z", "w", "u", "e", "c8f", "f4f"]
    g = helper.make_graph(nodes, "float8_round_trip", [vi("x", F32, [8])],
                          [vi(o, I32 if o == "w" else F32, [5] if o == "f4f" else [4] if o == "c8f" else [8]) for o in outs], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 24)],
                          producer_name="cfx tests/onnx/make_models.py")
    m.ir_version = 11
    x = np.array([0, 2.125, -3, 200, 1000, 0.0039, 70000, -1e-7], np.float32)
    q = np.clip(x / 2, -448, 448).astype(ml_dtypes.float8_e4m3fn)  # saturated, as ONNX's saturate_cast
    expected = {"y": q.astype(np.float32) * 2,
                "z": x.astype(ml_dtypes.float8_e5m2).astype(np.float32),
                "w": x.astype(ml_dtypes.int4).astype(np.int32),
                "u": x.astype(ml_dtypes.float4_e2m1fn).astype(np.float32),
                "e": to_float8e8m0(x, True, "up").astype(np.float32),
                "c8f": c8, "f4f": f4}
    # by hand: 2.125 / 2 halfway from 1 to 1.125, to even 1; 100 halfway from 96 to 104, to 96;
    # 500 past 448, saturated; e5m2 holds 1024 (steps of 128 there), 70000 is past 57344: inf;
    # int4 wraps 200 to -8; float4 saturates at 6; e8m0 rounds 3 up to 4 and 0 to 2^-127
    assert list(expected["y"][:5]) == [0, 2, -3, 192, 896] and expected["z"][4] == 1024
    assert np.isinf(expected["z"][6]) and list(expected["w"][:4]) == [0, 2, -3, -8]
    assert list(expected["u"][3:5]) == [6, 6] and list(expected["e"][:3]) == [2.0 ** -127, 4, 4]
    return m, [({"x": x}, expected)]


# onnxruntime (1.32) has no Cast of these types yet (NOT_IMPLEMENTED): not asked
float8_round_trip.no_ort = True


MODELS += [float8_round_trip]


def empty_inputs():
    """Inputs of 0 elements, which cfx holds as values known at import (by their type alone):
    CastLike's `like` (only its type matters), ReduceSum's empty `axes` (all axes), data with
    no elements along a reduced axis (each result reduces an empty set: ReduceSum's 0,
    ReduceMax's -inf, ReduceProd's 1, int8's ReduceMin 127), and an output of 0 elements (Abs of that data), handed
    back as an empty array. numpy gives each."""
    nodes = [helper.make_node("CastLike", ["x", "like"], ["xd"]),
             helper.make_node("ReduceSum", ["x", "axes"], ["total"], keepdims=1),
             helper.make_node("ReduceSum", ["e", "one"], ["esum"], keepdims=0),
             helper.make_node("ReduceMax", ["e"], ["emax"], axes=[1], keepdims=0),
             helper.make_node("ReduceProd", ["e"], ["eprod"], axes=[1], keepdims=1),
             helper.make_node("Add", ["esum", "emax"], ["mixed"]),
             helper.make_node("Abs", ["e"], ["eabs"]),
             helper.make_node("ReduceMin", ["q"], ["qmin"], axes=[1], keepdims=0)]
    g = helper.make_graph(nodes, "empty_inputs",
                          [vi("x", F32, [3, 4]), vi("like", F64, [0]), vi("axes", I64, [0]), vi("e", F32, [2, 0]),
                           vi("q", TensorProto.INT8, [2, 0])],
                          [vi("xd", F64, [3, 4]), vi("total", F32, [1, 1]), vi("esum", F32, [2]),
                           vi("emax", F32, [2]), vi("eprod", F32, [2, 1]), vi("mixed", F32, [2]),
                           vi("eabs", F32, [2, 0]), vi("qmin", TensorProto.INT8, [2])],
                          [init("one", np.array([1], np.int64))])
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 4 - 1
    e = np.zeros((2, 0), np.float32)
    expected = {"xd": x.astype(np.float64), "total": x.sum(keepdims=True), "esum": e.sum(axis=1),
                "emax": np.full(2, -np.inf, np.float32), "eprod": e.prod(axis=1, keepdims=True),
                "eabs": np.abs(e), "qmin": np.full(2, 127, np.int8)}  # int8's highest: the min of nothing
    expected["mixed"] = expected["esum"] + expected["emax"]
    assert list(expected["esum"]) == [0, 0] and list(expected["eprod"][:, 0]) == [1, 1]
    return model(g), [({"x": x, "like": np.zeros(0, np.float64), "axes": np.zeros(0, np.int64), "e": e,
                        "q": np.zeros((2, 0), np.int8)}, expected)]


MODELS += [empty_inputs]


def seq_input():
    """A sequence as a graph input, given as its items stacked along a new first axis (the
    import specialises the model on its length, docs/onnx.md): SequenceAt of a position of run
    time, SequenceLength, a SequenceMap adding a tensor to each item, and SequenceInsert at the
    end, returned stacked. numpy gives each."""
    seq_t = helper.make_tensor_sequence_value_info("s", F32, [3])
    body = helper.make_graph([helper.make_node("Add", ["item", "bias"], ["shifted"])], "shift",
                             [vi("item", F32, [3]), vi("bias", F32, [3])], [vi("shifted", F32, [3])])
    nodes = [helper.make_node("SequenceAt", ["s", "pos"], ["picked"]),
             helper.make_node("SequenceLength", ["s"], ["n"]),
             helper.make_node("SequenceMap", ["s", "b"], ["moved"], body=body),
             helper.make_node("SequenceInsert", ["moved", "b"], ["grown"])]
    g = helper.make_graph(nodes, "seq_input", [seq_t, vi("pos", I64, []), vi("b", F32, [3])],
                          [vi("picked", F32, [3]), vi("n", I64, []),
                           helper.make_tensor_sequence_value_info("grown", F32, [3])])
    items = [np.array([1, 2, 3], np.float32) * k for k in (1, -2, 0.5, 4)]
    b = np.array([0.25, -1, 10], np.float32)
    expected = {"picked": items[2], "n": np.array(4, np.int64),
                "grown": np.stack([x + b for x in items] + [b])}
    return model(g), [({"s": items, "pos": np.array(-2, np.int64), "b": b}, expected)]


MODELS += [seq_input]


def opset6():
    """A model of opset 6 (IR 3), whose ops are all defined there as at opset 7, which cfx
    imports node by node (docs/onnx.md): Relu (of opset 6), Softmax (1; along the last axis,
    as cfx takes it before opset 13), ReduceSum (1: axes an attribute), Not (1),
    Cast (6: `to` a number), Sum (6), Tile (6), Reshape (5), and Slice and TopK (1: their
    bounds and k attributes, as cfx takes them before opset 10). numpy gives each."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Softmax", ["r"], ["s"], axis=2),
             helper.make_node("ReduceSum", ["s"], ["rs"], axes=[2], keepdims=0),
             helper.make_node("Not", ["b"], ["nb"]),
             helper.make_node("Cast", ["nb"], ["nbf"], to=F32),
             helper.make_node("Sum", ["rs", "nbf"], ["y"]),
             helper.make_node("Tile", ["y", "reps"], ["t"]),
             helper.make_node("Reshape", ["t", "shape"], ["out"]),
             helper.make_node("Slice", ["x"], ["sl"], starts=[1, 0], ends=[3, 2], axes=[1, 2]),
             helper.make_node("TopK", ["sl"], ["top", "at"], k=1, axis=1)]
    g = helper.make_graph(nodes, "opset6", [vi("x", F32, [2, 3, 4]), vi("b", BOOL, [2, 3]), vi("reps", I64, [2]),
                                            vi("shape", I64, [2])],  # IR 3: initializers are inputs too
                          [vi("s", F32, [2, 3, 4]), vi("out", F32, [3, 4]), vi("top", F32, [2, 1, 2]),
                           vi("at", I64, [2, 1, 2])],
                          [init("reps", np.array([1, 2], np.int64)), init("shape", np.array([3, 4], np.int64))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 6)], producer_name="cfx tests/onnx/make_models.py")
    m.ir_version = 3
    x = ((np.arange(24, dtype=np.float32) * 7 % 24).reshape(2, 3, 4) - 10) / 3  # no ties
    b = np.array([[True, False, True], [False, False, True]])
    r = np.maximum(x, 0)
    e = np.exp(r - r.max(axis=2, keepdims=True))
    s = e / e.sum(axis=2, keepdims=True)
    y = s.sum(axis=2) + (~b).astype(np.float32)
    out = np.tile(y, (1, 2)).reshape(3, 4)
    sl = x[:, 1:3, 0:2]
    expected = {"s": s.astype(np.float32), "out": out.astype(np.float32), "top": sl.max(axis=1, keepdims=True),
                "at": sl.argmax(axis=1)[:, None, :].astype(np.int64)}
    return m, [({"x": x, "b": b}, expected)]


MODELS += [opset6]


def scatter_half():
    """ScatterND and ScatterElements of float16 data with reduction add at repeated positions:
    each sum rounds to float16 as the type computes it, so 2048 + 1 + 1 stays 2048 (rounded once
    at the end it would be 2050). numpy adds in float16, one update at a time."""
    nodes = [helper.make_node("ScatterND", ["x", "ind", "upd"], ["nd"], reduction="add"),
             helper.make_node("ScatterElements", ["x", "ind_e", "upd"], ["el"], axis=0, reduction="add")]
    g = helper.make_graph(nodes, "scatter_half", [vi("x", F16, [4]), vi("upd", F16, [4])],
                          [vi("nd", F16, [4]), vi("el", F16, [4])],
                          [init("ind", np.array([[0], [0], [0], [2]], np.int64)),
                           init("ind_e", np.array([0, 0, 0, 2], np.int64))])
    x = np.array([0, 0, 1, 0], np.float16)
    upd = np.array([2048, 1, 1, 0.1], np.float16)
    want = x.copy()
    for k, at in enumerate([0, 0, 0, 2]):
        want[at] = want[at] + upd[k]  # float16 arithmetic, rounded at each step
    assert want[0] == 2048
    return model(g), [({"x": x, "upd": upd}, {"nd": want, "el": want})]


# onnxruntime (1.32) has no float16 ScatterElements with a reduction (its CPU provider says so): not asked
scatter_half.no_ort = True
MODELS += [scatter_half]

def seq_ragged():
    """A sequence input whose items differ in shape, given item by item (s[0], s[1], s[2]:
    docs/onnx.md): SequenceInsert at position 1 of a tensor of yet another shape, SequenceErase
    of position 0, SequenceAt of position -1, SequenceLength, ConcatFromSequence along axis 0,
    a SequenceMap whose body sums each item's rows (items of one shape: stacked) and the grown
    sequence returned item by item (grown[0], ...). numpy gives each."""
    seq_t = helper.make_tensor_sequence_value_info("s", F32, [None, 3])
    body = helper.make_graph([helper.make_node("ReduceSum", ["item", "zero"], ["sum"], keepdims=0)], "rows",
                             [vi("item", F32, [None, 3])], [vi("sum", F32, [3])], [init("zero", np.array([0], np.int64))])
    nodes = [const("one", np.array(1, np.int64)), const("first", np.array(0, np.int64)),
             const("last", np.array(-1, np.int64)),
             helper.make_node("SequenceInsert", ["s", "x", "one"], ["grown"]),
             helper.make_node("SequenceErase", ["grown", "first"], ["rest"]),
             helper.make_node("SequenceAt", ["rest", "last"], ["tail"]),
             helper.make_node("SequenceLength", ["rest"], ["n"]),
             helper.make_node("ConcatFromSequence", ["rest"], ["cat"], axis=0),
             helper.make_node("SequenceMap", ["grown"], ["sums"], body=body)]
    g = helper.make_graph(nodes, "seq_ragged", [seq_t, vi("x", F32, [3, 3])],
                          [helper.make_tensor_sequence_value_info("grown", F32, [None, 3]), vi("tail", F32, [1, 3]),
                           vi("n", I64, []), vi("cat", F32, [8, 3]),
                           helper.make_tensor_sequence_value_info("sums", F32, [3])])
    rng = np.random.default_rng(7)
    items = [rng.standard_normal((r, 3)).astype(np.float32) for r in (2, 4, 1)]
    x = rng.standard_normal((3, 3)).astype(np.float32)
    grown = [items[0], x, items[1], items[2]]
    rest = grown[1:]
    expected = {"grown": grown, "tail": rest[-1], "n": np.array(3, np.int64), "cat": np.concatenate(rest),
                "sums": np.stack([a.sum(axis=0) for a in grown])}
    return model(g), [({"s": items, "x": x}, expected)]


def seq_unrolled():
    """Sequences of items of differing shapes made inside the model: SplitToSequence into pieces
    of 1, 2 and 3 rows, and a Loop of 4 iterations (its trip count an initializer) that appends
    x[:i + 1] each iteration, which cfx unrolls at import, and carries a sum of the piece read at
    the iteration's position; the pieces' last and the grown sequence come back item by item
    (docs/onnx.md). numpy gives each."""
    body = helper.make_graph(
        [const("one", np.array(1, np.int64)), const("zero", np.array([0], np.int64)),
         const("ax", np.array([0], np.int64)),
         helper.make_node("Add", ["i", "one"], ["end"]),
         helper.make_node("Unsqueeze", ["end", "ax"], ["end1"]),
         helper.make_node("Slice", ["x", "zero", "end1"], ["head"]),
         helper.make_node("SequenceInsert", ["acc_seq", "head"], ["acc_seq_out"]),
         helper.make_node("ReduceSum", ["head"], ["hs"], keepdims=0),
         helper.make_node("Add", ["total", "hs"], ["total_out"]),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "grow", [vi("i", I64, []), vi("cond", BOOL, []), helper.make_tensor_sequence_value_info("acc_seq", F32, [None, 2]),
                 vi("total", F32, [])],
        [vi("cond_out", BOOL, []), helper.make_tensor_sequence_value_info("acc_seq_out", F32, [None, 2]),
         vi("total_out", F32, [])])
    nodes = [helper.make_node("SplitToSequence", ["x", "split"], ["pieces"], axis=0),
             helper.make_node("SequenceAt", ["pieces", "two"], ["third"]),
             helper.make_node("SequenceEmpty", [], ["empty"], dtype=F32),
             helper.make_node("Loop", ["trips", "", "empty", "total0"], ["heads", "total"], name="grow", body=body)]
    g = helper.make_graph(nodes, "seq_unrolled", [vi("x", F32, [6, 2])],
                          [vi("third", F32, [3, 2]), helper.make_tensor_sequence_value_info("heads", F32, [None, 2]),
                           vi("total", F32, [])],
                          [init("split", np.array([1, 2, 3], np.int64)), init("two", np.array(2, np.int64)),
                           init("trips", np.array(4, np.int64)), init("total0", np.array(0.5, np.float32))])
    x = np.arange(12, dtype=np.float32).reshape(6, 2) / 4 - 1
    heads = [x[:i + 1] for i in range(4)]
    expected = {"third": x[3:6], "heads": heads,
                "total": np.array(0.5 + sum(h.sum() for h in heads), np.float32)}
    return model(g), [({"x": x}, expected)]


MODELS += [seq_ragged, seq_unrolled]


def np_nms(boxes, scores, max_out, iou_thr, score_thr):
    """Non-maximum suppression of corner boxes [y1, x1, y2, x2] (corners in either order), in f64:
    each class's boxes above score_thr by decreasing score (the lower index first), a box kept
    where its IoU with every box kept before is at most iou_thr, up to max_out a class."""
    def iou(p, q):
        (py1, py2), (px1, px2) = sorted(p[0::2]), sorted(p[1::2])
        (qy1, qy2), (qx1, qx2) = sorted(q[0::2]), sorted(q[1::2])
        ih, iw = min(py2, qy2) - max(py1, qy1), min(px2, qx2) - max(px1, qx1)
        if ih <= 0 or iw <= 0:
            return 0.0
        inter = ih * iw
        return inter / ((py2 - py1) * (px2 - px1) + (qy2 - qy1) * (qx2 - qx1) - inter)
    out = []
    for b in range(boxes.shape[0]):
        for c in range(scores.shape[1]):
            s = scores[b, c].astype(np.float64)
            kept = []
            for i in sorted((i for i in range(len(s)) if s[i] > score_thr), key=lambda i: (-s[i], i)):
                if len(kept) == max_out:
                    break
                if all(iou(boxes[b, i].astype(np.float64), boxes[b, j].astype(np.float64)) <= iou_thr for j in kept):
                    kept.append(i)
                    out.append([b, c, i])
    return np.array(out, np.int64)


def detections():
    """NonMaxSuppression of two images' boxes in two classes (overlapping boxes suppressed, a
    score threshold, at most 3 a class) and Unique of the rows of a matrix (sorted, axis 0, with
    indices, inverse indices and counts), whose outputs' lengths depend on the data: the model
    declares them, and the run checks them."""
    boxes = np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11],
                       [1, 10.1, 0, 11.1], [0, 100, 1, 101]],
                      [[0, 0, 2, 2], [2, 2, 0, 0], [5, 5, 6, 6], [5, 5.5, 6, 6.5], [9, 9, 10, 10],
                       [0, 0.5, 2, 2.5]]], np.float32)
    scores = np.array([[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3], [0.1, 0.2, 0.3, 0.9, 0.8, 0.05]],
                       [[0.5, 0.6, 0.7, 0.65, 0.1, 0.55], [0.3, 0.3, 0.2, 0.4, 0.9, 0.35]]], np.float32)
    sel = np_nms(boxes, scores, 3, 0.5, 0.25)
    x = np.array([[3, 1, 2], [1, 5, 0], [3, 1, 2], [1, 4, 9], [1, 5, 0], [0, 7, 7], [3, 1, 2]], np.float32)
    y, idx, inv, cnt = np.unique(x, axis=0, return_index=True, return_inverse=True, return_counts=True)
    nodes = [helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "score"], ["selected"]),
             helper.make_node("Unique", ["x"], ["y", "indices", "inverse", "counts"], axis=0, sorted=1)]
    inits = [init("max_out", np.array([3], np.int64)), init("iou", np.array([0.5], np.float32)),
             init("score", np.array([0.25], np.float32))]
    ins = {"boxes": boxes, "scores": scores, "x": x}
    outs = {"selected": sel, "y": y, "indices": idx.astype(np.int64), "inverse": inv.reshape(-1).astype(np.int64),
            "counts": cnt.astype(np.int64)}
    types = {np.dtype(np.float32): F32, np.dtype(np.int64): I64}
    g = helper.make_graph(nodes, "detections", [vi(k, F32, v.shape) for k, v in ins.items()],
                          [vi(k, types[v.dtype], v.shape) for k, v in outs.items()], inits)
    return model(g), [(ins, outs)]


MODELS += [detections]


def check_with_onnxruntime(name, m, cases):
    """onnxruntime must agree with the numpy expectation (a check of the model, not of cfx);
    nothing where onnxruntime is not installed."""
    try:
        import onnxruntime
    except ImportError:
        return False
    sess = onnxruntime.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    for inputs, expected in cases:
        got = dict(zip(names, sess.run(None, inputs)))
        for k, want in expected.items():
            # a sequence: compared stacked, or item by item where its items differ in shape
            pairs = list(zip(got[k], want)) if ragged(want) and len(got[k]) == len(want) else \
                [(np.stack(got[k]) if isinstance(got[k], list) else got[k], np.asarray(want))]
            for g, w in pairs:
                if g.dtype != w.dtype or g.shape != w.shape or not np.allclose(g, w, rtol=1e-5, atol=1e-6):
                    raise AssertionError("%s: onnxruntime gives %s = %r, numpy %r" % (name, k, got[k], want))
    return True


def ragged(value):
    """True for a sequence (a list) whose items differ in shape: given and given back item by item,
    NAME[0], NAME[1], ... (docs/onnx.md); a list of items of one shape is given stacked."""
    return isinstance(value, list) and any(np.shape(a) != np.shape(value[0]) for a in value)


def by_item(names, values):
    """[(name, array)] with each sequence of items of differing shapes spread into NAME[K]."""
    pairs = []
    for n in names:
        if ragged(values[n]):
            pairs += [("%s[%d]" % (n, k), np.asarray(a)) for k, a in enumerate(values[n])]
        else:
            pairs.append((n, np.asarray(values[n])))
    return pairs


def write(out_dir, ort=True):
    """Writes every model and its cases under out_dir; returns the case folders written."""
    import onnx
    written = []
    for make in MODELS:
        m, cases = make()
        onnx.checker.check_model(m, full_check=True)
        if ort and not getattr(make, "no_ort", False):
            check_with_onnxruntime(make.__name__, m, cases)
        in_names = [i.name for i in m.graph.input if i.name not in {t.name for t in m.graph.initializer}]
        out_names = [o.name for o in m.graph.output]
        for n, (inputs, expected) in enumerate(cases):
            d = os.path.join(out_dir, "%s_%d" % (make.__name__, n) if len(cases) > 1 else make.__name__)
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "model.onnx"), "wb") as f:
                f.write(m.SerializeToString())
            ins, outs = by_item(in_names, inputs), by_item(out_names, expected)
            for k, (name, a) in enumerate(ins):
                np.save(os.path.join(d, "input_%d.npy" % k), a)
            for k, (name, a) in enumerate(outs):
                np.save(os.path.join(d, "output_%d.npy" % k), a)
            with open(os.path.join(d, "case.json"), "w") as f:
                json.dump({"inputs": [n for n, _ in ins], "outputs": [n for n, _ in outs]}, f)
            written.append(d)
    return written


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        print("usage: make_models.py OUT_DIR [--no-ort]", file=sys.stderr)
        return 2
    written = write(args[0], ort="--no-ort" not in sys.argv)
    print("%d cases of %d models written to %s" % (len(written), len(MODELS), args[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
