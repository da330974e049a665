"""Ops registered by their source from Python (Context.register_source, cfx_register_source):
a graph that calls them on the cpu backend, and the errors of a registration. Needs a C
compiler, as registering a source does."""
import gc
import shutil

import pytest

import cfx

pytestmark = pytest.mark.skipif(
    not (shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")),
    reason="registering an op by its source needs a C compiler")

HALVE = """CFX_HD void halve(int64_t lo, int64_t hi, const float *x, float *y)
{
    for (int64_t e = lo; e < hi; e++)
        y[e] = x[e] * 0.5f;
}
"""

BIGGEST = """CFX_HD void biggest(const float *x, int32_t *at)
{
    int32_t b = 0;
    for (int32_t i = 1; i < 4; i++)
        if (x[i] > x[b])
            b = i;
    *at = b;
}
"""

USES = """graph g(x: f32[4], n: i32) -> (y: f32[4], at: i32) {
  y = x
  at = -1
  for i in range(0, n) {
    y = halve(y) + 1.0
    at = biggest(y)
  }
}
"""


def test_source_ops_on_cpu():
    ctx = cfx.Context()
    k = ctx.register_source("halve", "(f32[4]) -> (f32[4])", HALVE)
    ctx.register_source("biggest", "(f32[4]) -> (i32)", BIGGEST, form="whole")
    assert k.name == "halve" and "halve" in ctx.kernels and "biggest" in ctx.kernels
    m = cfx.compile(USES, context=ctx)
    del ctx
    gc.collect() # the module keeps its ops
    out = m.entry(x=[8.0, -4.0, 2.0, 16.0], n=2, backend="cpu", results="python")
    # y -> y / 2 + 1 twice: 8 -> 5 -> 3.5, -4 -> -1 -> 0.5, 2 -> 2 -> 2, 16 -> 9 -> 5.5
    assert out == {"y": [3.5, 0.5, 2.0, 5.5], "at": 3}


def test_source_registration_errors():
    ctx = cfx.Context()
    with pytest.raises(ValueError, match="op 'broken': the source does not compile"):
        ctx.register_source("broken", "(f32[4]) -> (f32[4])", "CFX_HD void broken(int64_t lo) { +; }\n")
    with pytest.raises(ValueError, match="must define CFX_HD void halve"):
        ctx.register_source("halve", "(f64[4]) -> (f64[4])", HALVE)
    ctx.register_source("halve", "(f32[4]) -> (f32[4])", HALVE)
    with pytest.raises(ValueError, match="kernel 'halve' is already registered"):
        ctx.register_source("halve", "(f32[4]) -> (f32[4])", HALVE)
    with pytest.raises(ValueError, match="form must be 'elements' or 'whole'"):
        ctx.register_source("other", "(f32[4]) -> (f32[4])", HALVE, form="rows")
