"""Expected results of graphs/ahead_entry.cfx: greedy_decode_wide's loop (tests/expect/
greedy_decode.py: a state of 8, 2560 tokens, the weights graphs/data/gd_w.npy and gd_e.npy and its
m, drawn with seed 11) entered from a state that is not zero, h = e[start], with the loop's
matrix computed just before the loop (m = m0 * 2.0, m0 = m / 2: exact, so m is the same matrix).
Run in float32 as cfx computes it (tanh elementwise in f32, each matrix-vector element accumulated
in float64); every argmax wins by a clear margin, so rounding cannot change a token. Prints the
graph's `# run:` and `# expect:` lines."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import matmul, arg_mat, fmt_int_vec  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VOCAB, HIDDEN, LEN = 2560, 8, 16


def clear_argmax(logits, what):
    order = np.argsort(-logits.astype(np.float64), kind="stable")
    margin = float(logits[order[0]] - logits[order[1]])
    if margin < 1e-3:
        raise SystemExit("%s is a close call (margin %g)" % (what, margin))
    return int(order[0])


rng = np.random.default_rng(11)  # greedy_decode.py's weights(11, 2560, 8): w, then m, then e
draw = lambda *shape: np.round(rng.uniform(-1.5, 1.5, shape), 1).astype(np.float32)
w, m, e = draw(VOCAB, HIDDEN), draw(HIDDEN, HIDDEN), draw(VOCAB, HIDDEN)
assert np.array_equal(w, np.load(os.path.join(ROOT, "graphs", "data", "gd_w.npy")))
assert np.array_equal(e, np.load(os.path.join(ROOT, "graphs", "data", "gd_e.npy")))
m0 = (m / np.float32(2)).astype(np.float32)
assert np.array_equal(m0 * np.float32(2), m)

for start in (1, 7):
    h = e[start].copy()
    tok, tokens = start, []
    for t in range(LEN):
        h = np.tanh(matmul(m, h) + e[tok]).astype(np.float32)
        tok = clear_argmax(matmul(w, h), "argmax at step %d" % t)
        tokens.append(tok)
    print("# run: w=graphs/data/gd_w.npy m0=%s e=graphs/data/gd_e.npy start=%d" % (arg_mat(m0), start))
    print("# expect: tokens = %s" % fmt_int_vec(tokens))
    print("# expect: length = %d" % LEN)
