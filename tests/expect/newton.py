"""Expected results of graphs/newton.cfx: Newton's method, float64 for the square root and
float32 (as cfx computes it) for the cube root. Checks every stopping test clears its threshold
by a margin far above rounding noise, so no backend can take a different number of steps."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f32 import F, fmt, fmt64  # noqa: E402


def clear(lhs, rhs, noise, what):
    if abs(lhs - rhs) < max(0.05 * abs(rhs), noise):
        raise SystemExit("%s: stopping test too close to call (%r vs %r)" % (what, lhs, rhs))


def newton_sqrt(a, tol):
    root, steps = a, 0
    while True:
        f = abs(root * root - a)
        clear(f, tol, 64 * 2.0 ** -52 * max(a, 1.0), "sqrt(%g) step %d" % (a, steps))
        if not (f > tol and steps < 100):
            return root, steps
        root = 0.5 * (root + a / root)
        steps += 1


def newton_cbrt(a, tol):
    a, tol = F(a), F(tol)
    root, steps = max(a, F(1)), 0
    while True:
        f = abs(root * root * root - a)
        clear(float(f), float(tol * a), 64 * 2.0 ** -23 * float(a), "cbrt(%g) step %d" % (a, steps))
        if not (f > tol * a and steps < 50):
            return root, steps
        root = root - (root * root * root - a) / (F(3) * root * root)
        steps += 1


for a, tol in ((2.0, 1e-12), (1e6, 1e-6), (0.25, 1e-12), (0.0, 1e-12)):
    root, steps = newton_sqrt(a, tol)
    print("# run: a=%s tol=%s" % (fmt64(a), fmt64(tol)))
    print("# expect: root = %s" % fmt64(root))
    print("# expect: steps = %d" % steps)
for a, tol in ((10.0, 1e-5), (3.0, 1e-5), (1000.0, 1e-5)):
    root, steps = newton_cbrt(a, tol)
    print("# run: a=%s tol=%s --graph newton_cbrt" % (fmt(a), fmt(tol)))
    print("# expect: root = %s" % fmt(root))
    print("# expect: steps = %d" % steps)
