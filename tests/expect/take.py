"""Expected results of graphs/take.cfx, by numpy's take (np.take(x, idx, axis)): the result's
shape is x.shape[:axis] + idx.shape + x.shape[axis+1:], a negative index counts from the end.
Prints the header lines of the runs that end ok; the stops are written by hand in the graph."""
import numpy as np

E = np.arange(15, dtype=np.float32).reshape(5, 3) * np.float32(1.5)
T = np.arange(1, 13, dtype=np.int64).reshape(2, 3, 2)


def fmt(a):
    a = np.asarray(a)
    if a.ndim == 0:
        v = a.item()
        return ("%g" % v) if isinstance(v, float) else str(v)
    return "[" + ", ".join(fmt(e) for e in a) + "]"


def arg(a):
    return fmt(a).replace(" ", "")


for idx, j, k in [([[0, -1], [4, 2]], [2, 0, -1, -3], -5), ([[3, 3], [-5, 1]], [1, 1, 2, -2], 4)]:
    idx, j = np.array(idx, np.int32), np.array(j, np.int64)
    print("# run: E=%s idx=%s j=%s k=%d T=%s" % (arg(E), arg(idx), arg(j), k, arg(T)))
    print("# expect: v = " + fmt(np.take(E, idx, axis=0)))
    print("# expect: c = " + fmt(np.take(E, j, axis=-1)))
    print("# expect: one = " + fmt(np.take(E, k, axis=0)))
    print("# expect: col = " + fmt(np.take(E, -1, axis=1)))
    print("# expect: w = " + fmt(np.take(idx * 10, -1, axis=1)))
    print("# expect: m = " + fmt(np.take(T, idx % 3, axis=1)))

# lookups: the sum over n steps of the rows of an embedding table at the tokens of each step
table = np.arange(24, dtype=np.float32).reshape(6, 4) / np.float32(4)
tokens = np.array([[0, 5, -1], [2, 2, -6]], np.int64)
n = 3
acc = np.zeros((3, 4), np.float32)
for s in range(n):
    acc += np.take(table, tokens[s % 2], axis=0)
print("# run: table=%s tokens=%s n=%d --graph lookups" % (arg(table), arg(tokens), n))
print("# expect: acc = " + fmt(acc))
