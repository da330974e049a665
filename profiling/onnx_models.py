"""The benchmark graphs as ONNX models: greedy decoding and CG, written with onnx.helper the way
an exporter writes a torch.while_loop (a Loop with no trip count, its condition computed in the
body), beside profiling/bench/greedy_decode.cfx and cg_1024.cfx, which they compute exactly.

    python3 profiling/onnx_models.py OUTDIR [--small]

writes greedy_decode.onnx and cg.onnx (with --small: a vocabulary of 512 and CG of 64, for
tests). Used by profiling/onnx_bench.py and by tests/onnx (the cost sheets of an imported model
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


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    small = "--small" in sys.argv
    os.makedirs(out, exist_ok=True)
    for name, model in (("greedy_decode", greedy_decode(512, 32, 16) if small else greedy_decode()),
                        ("cg", cg(64) if small else cg())):
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(out, name + ".onnx"))
        print("wrote", os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
