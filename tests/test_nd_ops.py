#!/usr/bin/env python3
"""test_nd_ops.py: transpose with axes, swapaxes, matmul over batch dimensions and concat against numpy,
one small graph each: every permutation of tensors of rank 3, 4 and 5 (dimensions of 1
included, so that the lowering's choice of blocks meets every case), numpy's broadcast batches
of matmul with vectors on either side, and concat along every kind of axis.

    python3 tests/test_nd_ops.py CFX_BINARY SOURCE_DIR

The values are small integers, so every result is exact in f32. The backend comes from
CFX_BACKEND (default cpu). Prints the cases that differ, then `N passed, M failed`; exits 1
when any failed, 77 (skipped) without numpy."""
import itertools
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("numpy is not installed: skipped")
    sys.exit(77)


def text(a):
    a = np.asarray(a)
    if a.ndim == 0:
        return str(int(a))  # every value is a whole number
    return "[" + ", ".join(text(r) for r in a) + "]"


def type_of(a):
    return "f32[" + ", ".join(str(d) for d in a.shape) + "]"


def cases():
    rng = np.random.RandomState(7)

    def f(*shape):
        return rng.randint(-4, 5, size=shape).astype(np.float32)
    for shape in [(2, 3, 4), (2, 1, 3), (1, 2, 3, 2), (2, 3, 1, 2, 2), (3, 2, 2, 1, 2)]:
        x = f(*shape)
        for perm in itertools.permutations(range(len(shape))):
            yield "transpose(x, %s)" % (tuple(perm),), {"x": x}, np.transpose(x, perm)
        yield "transpose(x)", {"x": x}, np.transpose(x)
        yield "x.transpose()", {"x": x}, x.transpose()
        yield "x.T", {"x": x}, x.T
    x = f(2, 3, 4)
    yield "x.transpose(1, 0, 2)", {"x": x}, x.transpose(1, 0, 2)
    yield "x.permute(2, 0, 1)", {"x": x}, np.transpose(x, (2, 0, 1))
    yield "permute(x, dims=[-1, 0, 1])", {"x": x}, np.transpose(x, (2, 0, 1))
    for shape in [(2, 3, 4), (2, 1, 3, 2), (3, 2, 1, 2, 2)]:
        x = f(*shape)
        for a, b in itertools.product(range(-len(shape), len(shape)), repeat=2):
            yield "swapaxes(x, %d, %d)" % (a, b), {"x": x}, np.swapaxes(x, a, b)
    x = f(2, 3, 4)
    yield "x.swapaxes(2, 0)", {"x": x}, x.swapaxes(2, 0)
    for sa, sb in [((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (3, 4, 2)),
                   ((1, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (1, 2, 4, 5)), ((4,), (2, 4, 5)), ((2, 3, 4), (4,)),
                   ((2, 2, 2, 3, 4), (4, 2)), ((4,), (3, 2, 4, 2)), ((3, 1, 1, 4), (2, 4, 3)),
                   ((2, 3, 1, 4), (1, 4, 1))]:
        a, b = f(*sa), f(*sb)
        yield "a @ b", {"a": a, "b": b}, np.matmul(a, b)
    for shape, nparts, axis in [((2, 3, 4), 3, 0), ((2, 3, 4), 2, 1), ((2, 3, 4), 2, 2), ((2, 1, 3, 2, 2), 3, 3),
                                ((5,), 4, 0), ((2, 3, 4), 2, -1)]:
        parts = {}
        for i in range(nparts):
            s = list(shape)
            s[axis] += i
            parts["p%d" % i] = f(*s)
        yield ("concat((%s), axis=%d)" % (", ".join(parts), axis), parts,
               np.concatenate(list(parts.values()), axis))


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    binary, backend = os.path.abspath(sys.argv[1]), os.environ.get("CFX_BACKEND", "cpu")
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "case.cfx")
        for expr, ins, want in cases():
            params = ", ".join("%s: %s" % (k, type_of(v)) for k, v in ins.items())
            with open(path, "w") as out:
                out.write("graph g(%s) -> (r: %s) {\n  r = %s\n}\n" % (params, type_of(want), expr))
            args = [binary, "run", path, "--backend", backend]
            for k, v in ins.items():
                args += ["--in", "%s=%s" % (k, text(v).replace(" ", ""))]
            run = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
            got, expect = run.stdout.strip(), "r = " + text(want)
            if run.returncode == 0 and got == expect:
                passed += 1
            else:
                failed += 1
                print("DIFFERS %s with %s (exit %d): got %r, expected %r %s" % (
                    expr, ", ".join(type_of(v) for v in ins.values()), run.returncode, got[:300], expect[:300],
                    run.stderr.strip()[:300]))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
