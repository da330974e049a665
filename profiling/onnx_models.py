"""The benchmark graphs as ONNX models: greedy decoding and CG, written with onnx.helper the way
an exporter writes a torch.while_loop (a Loop with no trip count, its condition computed in the
body), beside profiling/bench/greedy_decode.cfx and cg_1024.cfx, which they compute exactly.

    python3 profiling/onnx_models.py OUTDIR [--small]

writes greedy_decode.onnx, cg.onnx and decoder.onnx (with --small: a vocabulary of 512, CG of
64 and a decoder of one layer, for tests). Used by profiling/onnx_bench.py and by tests/onnx (the cost sheets of an imported model
and of the hand-written graph are compared there).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h


def _vi(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def _const(name, value):
    return h.make_node("Constant", [], [name], value=onnx.numpy_helper.from_array(np.asarray(value), name + "_v"),
                       name=name)


def greedy_decode(vocab=32768, hidden=256, length=128):
    """tokens, length = greedy decoding of max_len tokens (as profiling/bench/greedy_decode.cfx)."""
    body = h.make_graph(
        [
            h.make_node("MatMul", ["M", "h_in"], ["mh"], name="mh"),
            h.make_node("Gather", ["E", "tok_in"], ["e"], axis=0, name="embed"),
            h.make_node("Add", ["mh", "e"], ["pre"], name="pre"),
            h.make_node("Tanh", ["pre"], ["h_out"], name="state"),
            h.make_node("MatMul", ["W", "h_out"], ["logits"], name="logits"),
            h.make_node("ArgMax", ["logits"], ["tok64"], axis=0, keepdims=0, name="argmax"),
            h.make_node("Cast", ["tok64"], ["tok_out"], to=T.INT32, name="tok"),
            h.make_node("Equal", ["tok_out", "eos"], ["is_eos"], name="is_eos"),
            h.make_node("If", ["is_eos"], ["tokens_out", "len_out"], name="write",
                        then_branch=h.make_graph(
                            [h.make_node("Identity", ["tokens_in"], ["t_same"], name="keep_tokens"),
                             h.make_node("Identity", ["len_in"], ["l_same"], name="keep_length")],
                            "eos", [], [_vi("t_same", T.INT32, [length]), _vi("l_same", T.INT32, [])]),
                        else_branch=h.make_graph(
                            [h.make_node("Cast", ["len_in"], ["l64"], to=T.INT64, name="l64"),
                             h.make_node("Unsqueeze", ["l64", "axis0"], ["l64_1"], name="l64_1"),
                             h.make_node("Unsqueeze", ["l64_1", "axis0"], ["where"], name="where"),
                             h.make_node("Unsqueeze", ["tok_out", "axis0"], ["upd"], name="upd"),
                             h.make_node("ScatterND", ["tokens_in", "where", "upd"], ["t_new"], name="tokens"),
                             h.make_node("Add", ["len_in", "one"], ["l_new"], name="length")],
                            "more", [], [_vi("t_new", T.INT32, [length]), _vi("l_new", T.INT32, [])])),
            h.make_node("Less", ["len_out", "max_len"], ["room"], name="room"),
            h.make_node("Not", ["is_eos"], ["going"], name="going"),
            h.make_node("And", ["room", "going"], ["cond_out"], name="cond"),
        ],
        "step",
        [_vi("i", T.INT64, []), _vi("cond_in", T.BOOL, []), _vi("h_in", T.FLOAT, [hidden]),
         _vi("tok_in", T.INT32, []), _vi("len_in", T.INT32, []), _vi("tokens_in", T.INT32, [length])],
        [_vi("cond_out", T.BOOL, []), _vi("h_out", T.FLOAT, [hidden]), _vi("tok_out", T.INT32, []),
         _vi("len_out", T.INT32, []), _vi("tokens_out", T.INT32, [length])])
    g = h.make_graph(
        [
            _const("zero", np.int32(0)),
            _const("one", np.int32(1)),
            _const("axis0", np.array([0], np.int64)),
            _const("tokens0", np.zeros(length, np.int32)),
            h.make_node("Less", ["zero", "max_len"], ["cond0"], name="cond0"),
            h.make_node("Loop", ["", "cond0", "h0", "start", "zero", "tokens0"],
                        ["h_last", "tok_last", "length", "tokens"], body=body, name="decode"),
        ],
        "greedy_decode",
        [_vi("W", T.FLOAT, [vocab, hidden]), _vi("M", T.FLOAT, [hidden, hidden]),
         _vi("E", T.FLOAT, [vocab, hidden]), _vi("h0", T.FLOAT, [hidden]), _vi("start", T.INT32, []),
         _vi("eos", T.INT32, []), _vi("max_len", T.INT32, [])],
        [_vi("tokens", T.INT32, [length]), _vi("length", T.INT32, [])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], producer_name="cfx profiling")


def cg(n=1024):
    """x, iters, rr = conjugate gradients (as profiling/bench/cg_1024.cfx)."""
    body = h.make_graph(
        [
            h.make_node("MatMul", ["A", "p_in"], ["Ap"], name="Ap"),
            h.make_node("Mul", ["p_in", "Ap"], ["pAp_e"], name="pAp_e"),
            h.make_node("ReduceSum", ["pAp_e"], ["pAp"], keepdims=0, name="pAp"),
            h.make_node("Div", ["rr_in", "pAp"], ["alpha"], name="alpha"),
            h.make_node("Mul", ["alpha", "p_in"], ["ap"], name="alpha_p"),
            h.make_node("Add", ["x_in", "ap"], ["x_out"], name="x"),
            h.make_node("Mul", ["alpha", "Ap"], ["aAp"], name="alpha_Ap"),
            h.make_node("Sub", ["r_in", "aAp"], ["r_out"], name="r"),
            h.make_node("Mul", ["r_out", "r_out"], ["rr_e"], name="rr_e"),
            h.make_node("ReduceSum", ["rr_e"], ["rr_out"], keepdims=0, name="rr_next"),
            h.make_node("Div", ["rr_out", "rr_in"], ["beta"], name="beta"),
            h.make_node("Mul", ["beta", "p_in"], ["bp"], name="beta_p"),
            h.make_node("Add", ["r_out", "bp"], ["p_out"], name="p"),
            h.make_node("Add", ["it_in", "one"], ["it_out"], name="iters"),
            h.make_node("Less", ["it_out", "max_iters"], ["more"], name="more"),
            h.make_node("Greater", ["rr_out", "tol"], ["big"], name="big"),
            h.make_node("And", ["more", "big"], ["cond_out"], name="cond"),
        ],
        "step",
        [_vi("i", T.INT64, []), _vi("cond_in", T.BOOL, []), _vi("x_in", T.FLOAT, [n]),
         _vi("r_in", T.FLOAT, [n]), _vi("p_in", T.FLOAT, [n]), _vi("rr_in", T.FLOAT, []),
         _vi("it_in", T.INT32, [])],
        [_vi("cond_out", T.BOOL, []), _vi("x_out", T.FLOAT, [n]), _vi("r_out", T.FLOAT, [n]),
         _vi("p_out", T.FLOAT, [n]), _vi("rr_out", T.FLOAT, []), _vi("it_out", T.INT32, [])])
    g = h.make_graph(
        [
            _const("zero", np.int32(0)),
            _const("one", np.int32(1)),
            _const("x0", np.zeros(n, np.float32)),
            h.make_node("Mul", ["b", "b"], ["bb"], name="bb"),
            h.make_node("ReduceSum", ["bb"], ["rr0"], keepdims=0, name="rr0"),
            h.make_node("Less", ["zero", "max_iters"], ["more0"], name="more0"),
            h.make_node("Greater", ["rr0", "tol"], ["big0"], name="big0"),
            h.make_node("And", ["more0", "big0"], ["cond0"], name="cond0"),
            h.make_node("Loop", ["", "cond0", "x0", "b", "b", "rr0", "zero"],
                        ["x", "r_last", "p_last", "rr", "iters"], body=body, name="solve"),
        ],
        "cg",
        [_vi("A", T.FLOAT, [n, n]), _vi("b", T.FLOAT, [n]), _vi("max_iters", T.INT32, []),
         _vi("tol", T.FLOAT, [])],
        [_vi("x", T.FLOAT, [n]), _vi("iters", T.INT32, []), _vi("rr", T.FLOAT, [])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], producer_name="cfx profiling")


def decoder_weights(vocab, dim, layers, length, seed=0):
    """The decoder's weights, as numpy arrays (also what the eager PyTorch and numpy runs use)."""
    rng = np.random.default_rng(seed)

    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
    wts = {"E": rng.standard_normal((vocab, dim)).astype(np.float32),
           "P": (0.1 * rng.standard_normal((length, dim))).astype(np.float32),
           "gf": np.ones(dim, np.float32), "bf": np.zeros(dim, np.float32), "Wout": w(dim, vocab)}
    for l in range(layers):
        wts.update({"g1_%d" % l: (1 + 0.1 * rng.standard_normal(dim)).astype(np.float32),
                    "b1_%d" % l: (0.1 * rng.standard_normal(dim)).astype(np.float32),
                    "Wqkv_%d" % l: w(dim, 3 * dim), "Wo_%d" % l: w(dim, dim),
                    "g2_%d" % l: (1 + 0.1 * rng.standard_normal(dim)).astype(np.float32),
                    "b2_%d" % l: (0.1 * rng.standard_normal(dim)).astype(np.float32),
                    "W1_%d" % l: w(dim, 4 * dim), "c1_%d" % l: (0.1 * rng.standard_normal(4 * dim)).astype(np.float32),
                    "W2_%d" % l: w(4 * dim, dim)})
    return wts


def decoder(vocab=1024, dim=128, heads=4, layers=2, length=64, seed=0):
    """tokens = greedy decoding with a small transformer decoder, as an exporter writes a model
    that recomputes the whole (causally masked) sequence at every step: a Loop whose body embeds
    the token buffer, runs `layers` blocks (LayerNormalization, fused QKV MatMul, Split, heads by
    Reshape/Transpose, batched MatMul, Softmax, MatMul, a ReLU MLP, residual Adds), takes the
    logits' row of the last written position, ArgMax, and writes the token with ScatterND. Inputs
    prompt (int64, the token at position 0) and steps (int32, tokens to generate, at most
    length - 1); output tokens (int64[length], 0 past the generated ones). The weights are
    initializers (decoder_weights)."""
    dh = dim // heads
    wts = decoder_weights(vocab, dim, layers, length, seed)
    mask = np.where(np.tril(np.ones((length, length), bool)), 0, -1e9).astype(np.float32)
    inits = [onnx.numpy_helper.from_array(v, k) for k, v in wts.items()]
    inits += [onnx.numpy_helper.from_array(mask, "mask"),
              onnx.numpy_helper.from_array(np.float32(1 / np.sqrt(dh)), "scale"),
              onnx.numpy_helper.from_array(np.array([length, heads, dh], np.int64), "heads_shape"),
              onnx.numpy_helper.from_array(np.array([length, dim], np.int64), "flat_shape"),
              onnx.numpy_helper.from_array(np.array([dim, dim, dim], np.int64), "qkv_split"),
              onnx.numpy_helper.from_array(np.array([0], np.int64), "axis0"),
              onnx.numpy_helper.from_array(np.int64(1), "one64"),
              onnx.numpy_helper.from_array(np.zeros(length, np.int64), "tokens0")]
    nodes = [h.make_node("Gather", ["E", "tok_in"], ["emb"], axis=0, name="embed"),
             h.make_node("Add", ["emb", "P"], ["x0"], name="position")]
    x = "x0"
    for l in range(layers):
        def n(name):
            return "%s_%d" % (name, l)
        nodes += [
            h.make_node("LayerNormalization", [x, n("g1"), n("b1")], [n("a")], axis=-1, name=n("ln1")),
            h.make_node("MatMul", [n("a"), n("Wqkv")], [n("qkv")], name=n("qkv")),
            h.make_node("Split", [n("qkv"), "qkv_split"], [n("q"), n("k"), n("v")], axis=1, name=n("split")),
            h.make_node("Reshape", [n("q"), "heads_shape"], [n("q3")], name=n("q3")),
            h.make_node("Transpose", [n("q3")], [n("qh")], perm=[1, 0, 2], name=n("qh")),
            h.make_node("Reshape", [n("k"), "heads_shape"], [n("k3")], name=n("k3")),
            h.make_node("Transpose", [n("k3")], [n("kt")], perm=[1, 2, 0], name=n("kt")),
            h.make_node("Reshape", [n("v"), "heads_shape"], [n("v3")], name=n("v3")),
            h.make_node("Transpose", [n("v3")], [n("vh")], perm=[1, 0, 2], name=n("vh")),
            h.make_node("MatMul", [n("qh"), n("kt")], [n("s")], name=n("scores")),
            h.make_node("Mul", [n("s"), "scale"], [n("ss")], name=n("scaled")),
            h.make_node("Add", [n("ss"), "mask"], [n("sm")], name=n("masked")),
            h.make_node("Softmax", [n("sm")], [n("p")], axis=-1, name=n("softmax")),
            h.make_node("MatMul", [n("p"), n("vh")], [n("oh")], name=n("attend")),
            h.make_node("Transpose", [n("oh")], [n("o3")], perm=[1, 0, 2], name=n("o3")),
            h.make_node("Reshape", [n("o3"), "flat_shape"], [n("o")], name=n("o")),
            h.make_node("MatMul", [n("o"), n("Wo")], [n("proj")], name=n("proj")),
            h.make_node("Add", [x, n("proj")], [n("x1")], name=n("residual1")),
            h.make_node("LayerNormalization", [n("x1"), n("g2"), n("b2")], [n("b")], axis=-1, name=n("ln2")),
            h.make_node("MatMul", [n("b"), n("W1")], [n("f0")], name=n("fc")),
            h.make_node("Add", [n("f0"), n("c1")], [n("f1")], name=n("fc_bias")),
            h.make_node("Relu", [n("f1")], [n("f2")], name=n("relu")),
            h.make_node("MatMul", [n("f2"), n("W2")], [n("f3")], name=n("out")),
            h.make_node("Add", [n("x1"), n("f3")], [n("x2")], name=n("residual2")),
        ]
        x = n("x2")
    nodes += [
        h.make_node("LayerNormalization", [x, "gf", "bf"], ["y"], axis=-1, name="lnf"),
        h.make_node("Sub", ["pos_in", "one64"], ["last"], name="last"),
        h.make_node("Gather", ["y", "last"], ["yrow"], axis=0, name="last_row"),
        h.make_node("MatMul", ["yrow", "Wout"], ["logits"], name="logits"),
        h.make_node("ArgMax", ["logits"], ["nxt"], axis=0, keepdims=0, name="argmax"),
        h.make_node("Unsqueeze", ["pos_in", "axis0"], ["at1"], name="at1"),
        h.make_node("Unsqueeze", ["at1", "axis0"], ["at"], name="at"),
        h.make_node("Unsqueeze", ["nxt", "axis0"], ["upd"], name="upd"),
        h.make_node("ScatterND", ["tok_in", "at", "upd"], ["tok_out"], name="write"),
        h.make_node("Add", ["pos_in", "one64"], ["pos_out"], name="next_pos"),
        h.make_node("Less", ["pos_out", "stop"], ["cond_out"], name="more"),
    ]
    body = h.make_graph(nodes, "step",
                        [_vi("i", T.INT64, []), _vi("cond_in", T.BOOL, []), _vi("pos_in", T.INT64, []),
                         _vi("tok_in", T.INT64, [length])],
                        [_vi("cond_out", T.BOOL, []), _vi("pos_out", T.INT64, []),
                         _vi("tok_out", T.INT64, [length])])
    g = h.make_graph(
        [
            h.make_node("Unsqueeze", ["prompt", "axis0"], ["p1"], name="p1"),
            h.make_node("ScatterND", ["tokens0", "zero_at", "p1"], ["tokens_start"], name="prompt_in"),
            h.make_node("Cast", ["steps"], ["steps64"], to=T.INT64, name="steps64"),
            h.make_node("Add", ["steps64", "one64"], ["stop"], name="stop"),
            h.make_node("Less", ["one64", "stop"], ["cond0"], name="cond0"),
            h.make_node("Loop", ["", "cond0", "one64", "tokens_start"], ["pos_last", "tokens"], body=body,
                        name="decode"),
        ],
        "decoder",
        [_vi("prompt", T.INT64, []), _vi("steps", T.INT32, [])],
        [_vi("tokens", T.INT64, [length])],
        initializer=inits + [onnx.numpy_helper.from_array(np.zeros((1, 1), np.int64), "zero_at")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], producer_name="cfx profiling")


def decoder_numpy(wts, layers, heads, prompt, steps, length):
    """The decoder of decoder() in numpy, float32 throughout (the reference of the checks)."""
    def ln(x, g, b):
        mu = x.mean(-1, keepdims=True)
        d = x - mu
        return d / np.sqrt((d * d).mean(-1, keepdims=True) + np.float32(1e-5)) * g + b
    dim = wts["E"].shape[1]
    dh = dim // heads
    mask = np.where(np.tril(np.ones((length, length), bool)), 0, -1e9).astype(np.float32)
    toks = np.zeros(length, np.int64)
    toks[0] = prompt
    for pos in range(1, steps + 1):
        x = wts["E"][toks] + wts["P"]
        for l in range(layers):
            a = ln(x, wts["g1_%d" % l], wts["b1_%d" % l])
            q, k, v = np.split(a @ wts["Wqkv_%d" % l], 3, axis=1)
            qh, kh, vh = (t.reshape(length, heads, dh).transpose(1, 0, 2) for t in (q, k, v))
            s = qh @ kh.transpose(0, 2, 1) * np.float32(1 / np.sqrt(dh)) + mask
            e = np.exp(s - s.max(-1, keepdims=True))
            o = (e / e.sum(-1, keepdims=True)) @ vh
            x = x + o.transpose(1, 0, 2).reshape(length, dim) @ wts["Wo_%d" % l]
            f = np.maximum(ln(x, wts["g2_%d" % l], wts["b2_%d" % l]) @ wts["W1_%d" % l] + wts["c1_%d" % l], 0)
            x = x + f @ wts["W2_%d" % l]
        y = ln(x, wts["gf"], wts["bf"])
        toks[pos] = np.argmax(y[pos - 1] @ wts["Wout"])
    return toks


def main():
    args = [a for a in sys.argv[1:] if a != "--small"]
    if len(args) != 1 or args[0] in ("-h", "--help") or args[0].startswith("-"):
        print(__doc__.strip(), file=sys.stdout if args[:1] in (["-h"], ["--help"]) else sys.stderr)
        sys.exit(0 if args[:1] in (["-h"], ["--help"]) else 2)
    out = args[0]
    small = "--small" in sys.argv
    os.makedirs(out, exist_ok=True)
    for name, model in (("greedy_decode", greedy_decode(512, 32, 16) if small else greedy_decode()),
                        ("cg", cg(64) if small else cg()),
                        ("decoder", decoder(64, 32, 2, 1, 16) if small else decoder())):
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(out, name + ".onnx"))
        print("wrote", os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
