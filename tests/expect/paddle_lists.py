"""Expected results of graphs/paddle_lists.cfx: Paddle's dygraph-to-static list tests
(test_list.py) written with Python lists of numpy float32 vectors, as the Paddle functions do
with their TensorArray. Prints the `# run:` and `# expect:` lines of the graph's header; a run
that stops prints the `# stop:` line cfx must give."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import F, arr, fmt, fmt_vec, arg  # noqa: E402

CAPACITY = 8  # c = list(f32[3], 8) in the graph
FILE = "graphs/paddle_lists.cfx"


def program(x, iter_num):
    """Returns the results in declaration order, or the stop line."""
    # test_list_append_in_for_loop: a.append(x + i) for i in range(3), then stacked
    a = []
    for i in range(3):
        a.append(x + F(i))
    stacked = np.stack(a)
    # test_list_pop_in_while_loop: c and b grow in a while loop
    c, b = [], [x]
    i = 0
    while i < iter_num:
        if len(c) == CAPACITY:
            return "%s:37:5: run stopped: index: list 'c' is full: it holds at most 8 items" % FILE
        c.append(x + F(i))
        b.append(x * F(2))
        i += 1
    if not -len(b) <= iter_num < len(b):
        return "%s:41:3: run stopped: index: list 'b' has %d items, index was %d" % (FILE, len(b), iter_num)
    last = b[iter_num]
    if not c:
        return "%s:42:3: run stopped: index: pop from the empty list 'c'" % FILE
    popped = c.pop()
    total = F(0)
    for item in c:
        total = F(total + F(np.sum(item.astype(np.float64))))
    n = len(c) + len(b)
    return [("stacked", "[" + ", ".join(fmt_vec(r) for r in stacked) + "]"), ("last", fmt_vec(last)),
            ("popped", fmt_vec(popped)), ("total", fmt(total)), ("n", str(n))]


for x, k in [([1, 2, 3], 4), ([0.5, -1, 2], 1), ([1, 2, 3], 0), ([1, 2, 3], -2), ([1, 2, 3], 9)]:
    x = arr(x)
    print("# run: x=%s iter_num=%d" % (arg(x), k))
    out = program(x, k)
    if isinstance(out, str):
        print("# stop: " + out)
    else:
        for name, value in out:
            print("# expect: %s = %s" % (name, value))
