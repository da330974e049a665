"""Expected results of graphs/onnx_cg.cfx and graphs/onnx_greedy.cfx: the programs `cfx import`
writes for the CG and greedy-decoding ONNX models of profiling/onnx_models.py (at the sizes
below), computed here in float32 as cfx computes them (f32.py), from the ONNX models' meaning:
the Loop runs while its condition holds, the loop-carried values are its outputs, and
greedy decoding stops before writing the end token. Checks that no stopping test or argmax is a
close call. Prints each graph's `# run:` and `# expect:` lines (the graph named first)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import F, arr, dot, matmul, fmt, fmt_vec, fmt_int_vec, arg, arg_mat  # noqa: E402


def weights(seed, vocab=6, hidden=4):
    """greedy_decode.py's weights (its graphs' `# run:` lines): uniform, rounded to one decimal"""
    rng = np.random.default_rng(seed)
    draw = lambda *shape: np.round(rng.uniform(-1.5, 1.5, shape), 1).astype(np.float32)
    return draw(vocab, hidden), draw(hidden, hidden), draw(vocab, hidden)


def clear_argmax(logits, what):
    order = np.argsort(-logits.astype(np.float64), kind="stable")
    if float(logits[order[0]] - logits[order[1]]) < 1e-3:
        raise SystemExit("%s is a close call" % what)
    return int(order[0])


def close_call(lhs, rhs, what):
    if abs(float(lhs) - float(rhs)) < 0.05 * abs(float(rhs)):
        raise SystemExit("%s: stopping test too close to call (%g vs %g)" % (what, lhs, rhs))


def cg(a, b, max_iters, tol):
    """profiling/onnx_models.cg: the loop runs while iters < max_iters and rr > tol"""
    a, b, tol = arr(a), arr(b), F(tol)
    x, r, p = np.zeros(len(b), np.float32), b.copy(), b.copy()
    rr, iters = dot(b, b), 0
    close_call(rr, tol, "start")
    go = 0 < max_iters and rr > tol
    while go:
        ap = matmul(a, p)
        alpha = rr / dot(p, ap)
        x = x + alpha * p
        r = r - alpha * ap
        rr_next = dot(r, r)
        p = r + (rr_next / rr) * p
        iters += 1
        close_call(rr_next, tol, "iteration %d" % iters)
        go = iters < max_iters and rr_next > tol
        rr = rr_next
    return x, iters, rr


def greedy(w, m, e, h0, start, eos, max_len, length_cap):
    """profiling/onnx_models.greedy_decode: stops at eos (not written) or after max_len tokens"""
    tokens = [0] * length_cap
    h, tok, length = arr(h0), start, 0
    go = 0 < max_len
    while go:
        h = np.tanh(matmul(m, h) + e[tok]).astype(np.float32)
        tok = clear_argmax(matmul(w, h), "argmax after %d tokens" % length)
        if tok != eos:
            tokens[length] = tok
            length += 1
        go = length < max_len and tok != eos
    return tokens, length


A4 = [[4, 1, 0, 0], [1, 4, 1, 0], [0, 1, 4, 1], [0, 0, 1, 4]]
for b, max_iters, tol in (([1, 2, 3, 4], 20, 1e-8), ([1, 0, 0, 0], 20, 1e-8), ([1, 2, 3, 4], 2, 1e-8)):
    x, iters, rr = cg(A4, b, max_iters, tol)
    print("# run: in_A=%s in_b=%s in_max_iters=%d in_tol=%s" % (arg_mat(A4), arg(b), max_iters, fmt(F(tol))))
    print("# expect: out_x = %s" % fmt_vec(x))
    print("# expect: out_iters = %d" % iters)
    print("# expect: out_rr = %s" % fmt(rr))

for seed, start, max_len in ((2, 0, 8), (2, 1, 8), (6, 1, 8), (2, 3, 3)):
    emb, u, w = weights(seed)
    tokens, length = greedy(w, u, emb, np.zeros(4, np.float32), start, 0, max_len, 8)
    print("# run: in_W=%s in_M=%s in_E=%s in_h0=[0,0,0,0] in_start=%d in_eos=0 in_max_len=%d"
          % (arg_mat(w), arg_mat(u), arg_mat(emb), start, max_len))
    print("# expect: out_tokens = %s" % fmt_int_vec(tokens))
    print("# expect: out_length = %d" % length)
