"""Expected results of graphs/greedy_decode.cfx: a toy recurrent decoder run in float32 as cfx
computes it (tanh elementwise in f32, each matrix-vector element accumulated in float64).
Checks that every argmax wins by a clear margin, so rounding cannot change a token.
The weights were drawn once (numpy default_rng(seed), rounded to one decimal; seeds 2 and 6
were picked among the first ten for sequences of several lengths) and are written
into the graph's `# run:` lines; this script prints those lines with the expected results.

The wide decoder (greedy_decode_wide: 2560 tokens, a state of 8) is big enough that the persistent
kernel's blocks share its loop, as in the benchmark; its weights are graphs/data/gd_w.npy and
gd_e.npy, drawn the same way (seed 11), which --write-data (re)writes."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import arr, matmul, arg_mat, fmt_int_vec  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

VOCAB, HIDDEN, MAX_LEN, END = 6, 4, 8, 0


def weights(seed, vocab=VOCAB, hidden=HIDDEN):
    rng = np.random.default_rng(seed)
    draw = lambda *shape: np.round(rng.uniform(-1.5, 1.5, shape), 1).astype(np.float32)
    return draw(vocab, hidden), draw(hidden, hidden), draw(vocab, hidden)


def clear_argmax(logits, what):
    """The argmax, when it wins by at least 1e-3 (so no backend's rounding can change it)."""
    order = np.argsort(-logits.astype(np.float64), kind="stable")
    margin = float(logits[order[0]] - logits[order[1]])
    if margin < 1e-3:
        raise SystemExit("%s is a close call (margin %g)" % (what, margin))
    return int(order[0])


def decode(emb, u, w, start, end_token):
    tokens = [-1] * MAX_LEN
    h = np.zeros(HIDDEN, np.float32)
    token, length = start, 0
    for t in range(MAX_LEN):
        h = np.tanh(emb[token] + matmul(u, h)).astype(np.float32)
        token = clear_argmax(matmul(w, h), "argmax at step %d" % t)
        tokens[t] = token
        length += 1
        if token == end_token:
            break
    return tokens, length


for seed, start in ((2, 0), (2, 1), (2, 3), (6, 1)):
    emb, u, w = weights(seed)
    tokens, length = decode(emb, u, w, start, END)
    print("# run: emb=%s u=%s w=%s start=%d end_token=%d"
          % (arg_mat(emb), arg_mat(u), arg_mat(w), start, END))
    print("# expect: tokens = %s" % fmt_int_vec(tokens))
    print("# expect: length = %d" % length)


# ---- the wide decoder: the benchmark's loop (the state from the last token, then the argmax;
# the end token breaks before it is written) ----
W_VOCAB, W_HIDDEN, W_LEN = 2560, 8, 16


def decode_wide(w, m, e, start, eos):
    tokens = [-1] * W_LEN
    h = np.zeros(W_HIDDEN, np.float32)
    tok, length = start, 0
    while length < W_LEN:
        h = np.tanh(matmul(m, h) + e[tok]).astype(np.float32)
        tok = clear_argmax(matmul(w, h), "wide: argmax at step %d" % length)
        if tok == eos:
            break
        tokens[length] = tok
        length += 1
    return tokens, length


w, m, e = weights(11, W_VOCAB, W_HIDDEN)
if "--write-data" in sys.argv:
    np.save(os.path.join(ROOT, "graphs", "data", "gd_w.npy"), w)
    np.save(os.path.join(ROOT, "graphs", "data", "gd_e.npy"), e)
full, _ = decode_wide(w, m, e, 1, -1)
for start, eos in ((1, -1), (1, full[5])):
    tokens, length = decode_wide(w, m, e, start, eos)
    print("# run: w=graphs/data/gd_w.npy m=%s e=graphs/data/gd_e.npy start=%d eos=%d --graph greedy_decode_wide"
          % (arg_mat(m), start, eos))
    print("# expect: tokens = %s" % fmt_int_vec(tokens))
    print("# expect: length = %d" % length)
