"""Expected results of graphs/bitwise.cfx, by numpy's bitwise operators (int32 and int64,
two's complement; numpy's shifts: a count below 0 or of the width or more shifts every bit out)
and a plain Python xorshift64 wrapped to 64 bits."""
import numpy as np

x = np.array([1, -2, 7, 100, -2147483648, 2147483647], np.int32)
s = np.array([0, 1, 31, 32, -1, 5], np.int32)
p = np.array([True, False, True, False])
q = np.array([True, True, False, False])


def shift(a, k, left):
    """numpy's left_shift / right_shift on int32, element by element, with its rule for counts
    outside 0 to 31 written out (C leaves them undefined)."""
    out = []
    for v, c in zip(a.tolist(), k.tolist()):
        if c < 0 or c >= 32:
            out.append(0 if left or v >= 0 else -1)
        elif left:
            out.append(((v << c) + 2**31) % 2**32 - 2**31)
        else:
            out.append(v >> c)  # Python's >> rounds toward minus infinity, as numpy's
    return np.array(out, np.int32)


def wrap64(v):
    return (v + 2**63) % 2**64 - 2**63


def xorshift64(state, n):
    """Marsaglia's xorshift64 (13, 7, 17) on the bits of a signed 64-bit state: >> is logical
    there, written with a mask of the low 64 - k bits after an arithmetic shift."""
    for _ in range(n):
        state = wrap64(state ^ (state << 13))
        state = state ^ ((state >> 7) & ((1 << 57) - 1))
        state = wrap64(state ^ (state << 17))
    return state


def vec(v):
    return "[" + ", ".join(str(int(e)) for e in v) + "]"


def bools(v):
    return "[" + ", ".join("true" if e else "false" for e in v) + "]"


print("# run: x=%s s=%s seed=88172645463325252 n=10 p=%s q=%s" % (
    vec(x).replace(" ", ""), vec(s).replace(" ", ""), bools(p).replace(" ", ""), bools(q).replace(" ", "")))
with np.errstate(over="ignore"):
    print("# expect: a = " + vec((x & 255) | (x ^ -x) & 12))
    print("# expect: o = " + vec(x | (x >> 3)))
print("# expect: sl = " + vec(shift(x, s, True)))
print("# expect: sr = " + vec(shift(x, s, False)))
print("# expect: inv = " + vec(~x))
print("# expect: r = %d" % xorshift64(88172645463325252, 10))
print("# expect: lb = " + bools((p & q) | (p ^ q)))
print("# expect: nb = " + bools(~p | np.invert(q)))
print("# expect: k = %d" % (~np.int64(-2**40) >> 3 << 1 ^ 5))
