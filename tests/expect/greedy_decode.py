"""Expected results of graphs/greedy_decode.cfx: a toy recurrent decoder run in float32 as cfx
computes it (tanh elementwise in f32, each matrix-vector element accumulated in float64).
Checks that every argmax wins by a clear margin, so rounding cannot change a token.
The weights were drawn once (numpy default_rng(seed), rounded to one decimal; seeds 2 and 6
were picked among the first ten for sequences of several lengths) and are written
into the graph's `# run:` lines; this script prints those lines with the expected results."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import arr, matmul, arg_mat, fmt_int_vec  # noqa: E402

VOCAB, HIDDEN, MAX_LEN, END = 6, 4, 8, 0


def weights(seed):
    rng = np.random.default_rng(seed)
    draw = lambda *shape: np.round(rng.uniform(-1.5, 1.5, shape), 1).astype(np.float32)
    return draw(VOCAB, HIDDEN), draw(HIDDEN, HIDDEN), draw(VOCAB, HIDDEN)


def decode(emb, u, w, start, end_token):
    tokens = [-1] * MAX_LEN
    h = np.zeros(HIDDEN, np.float32)
    token, length = start, 0
    for t in range(MAX_LEN):
        h = np.tanh(emb[token] + matmul(u, h)).astype(np.float32)
        logits = matmul(w, h)
        order = np.argsort(-logits.astype(np.float64), kind="stable")
        margin = float(logits[order[0]] - logits[order[1]])
        if margin < 1e-3:
            raise SystemExit("argmax at step %d is a close call (margin %g)" % (t, margin))
        token = int(order[0])
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
