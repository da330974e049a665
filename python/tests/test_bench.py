"""Timings: medians over repeats after warm-ups, for a graph and for any callable."""
import pytest

import cfx

LOOP = """graph loop(n: i32) -> (s: i32) {
  s = 0
  for i in range(n) {
    s += i % 7
  }
}
"""


def test_graph_benchmark():
    g = cfx.compile(LOOP).entry
    t = g.benchmark(n=1000, warmup=2, repeat=5)
    assert isinstance(t, cfx.Timing) and t.clock == "wall"
    assert len(t.times_ms) == 5 and t.min_ms <= t.median_ms <= t.max_ms
    assert t.median_ms > 0 and t.wall_median_ms == t.median_ms
    # 0..999 % 7: 142 full cycles of 0+1+...+6 = 21, then 994..999 % 7 = 0..5 = 15
    assert int(t.results["s"]) == 142 * 21 + 15
    assert "median" in repr(t)


def test_bench_any_callable():
    calls = []
    t = cfx.bench(lambda: calls.append(1) or len(calls), warmup=3, repeat=4)
    assert len(calls) == 7 and t.results == 7 and len(t.times_ms) == 4
    with pytest.raises(ValueError, match="repeat must be at least 1"):
        cfx.bench(lambda: None, repeat=0)
