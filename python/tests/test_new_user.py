"""Inputs as a new user gives them (issue 36): defaults left out, None for an input that
defaults to None, inputs named like a call option, and numbers out of a dtype's range.
Expected values are worked out by hand in the comments."""
import pytest

import cfx

DEFAULTS = """
graph g(x: f32, s: f32 = 2.0, n: i32 = 3, flag: bool = true) -> (y: f32) {
  y = x * s
  if flag {
    y = y + cast(n, f32)
  }
}
"""

OPTIONAL = """
graph h(x: f32, y: f32 = None) -> (z: f32) {
  z = x
  if y is not None {
    z = x + y
  }
}
"""


def test_defaults_are_taken():
    g = cfx.compile(DEFAULTS).entry
    assert g.defaults == {"s": 2.0, "n": 3, "flag": True}
    # 1 * 2 + 3 = 5; 1 * 4 + 3 = 7; 1 * 2 + 10 = 12; 1 * 2 = 2 (flag false)
    assert g(x=1.0, results="python")["y"] == 5.0
    assert g(x=1.0, s=4.0, results="python")["y"] == 7.0
    assert g(1.0, 2.0, 10, results="python")["y"] == 12.0
    assert g(x=1.0, flag=False, results="python")["y"] == 2.0
    with pytest.raises(TypeError, match="missing input 'x: f32'"):
        g(s=1.0)


def test_an_input_defaulting_to_none_may_be_left_out_or_none():
    h = cfx.compile(OPTIONAL).entry
    assert h.defaults == {"y": None}
    assert h(x=1.5, results="python")["z"] == 1.5
    assert h(x=1.5, y=None, results="python")["z"] == 1.5
    assert h(1.5, None, results="python")["z"] == 1.5
    assert h(x=1.5, y=2.0, results="python")["z"] == 3.5
    # an input without `= None` is never None
    g = cfx.compile(DEFAULTS).entry
    with pytest.raises(TypeError, match=r"input 's' is f32; got None \(only an input declared "):
        g(x=1.0, s=None)


def test_an_input_named_like_an_option():
    src = "graph g(stream: f32, max_iters: i32 = 4) -> (y: f32) {\n  y = stream * cast(max_iters, f32)\n}\n"
    g = cfx.compile(src).entry
    # stream=... is the call's option: say that the name is both, and how to pass the input
    with pytest.raises(TypeError, match=r"'stream' is both an input of the graph and an option of the "
                                        r"call.*g.run\(\{'stream': \.\.\.\}"):
        g(stream=2.0)
    # max_iters has a default, so the option given explicitly is the ambiguity
    with pytest.raises(TypeError, match="'max_iters' is both an input"):
        g(2.0, max_iters=5)
    assert g(2.0, results="python")["y"] == 8.0
    assert g.run({"stream": 2.0, "max_iters": 5}, results="python")["y"] == 10.0
    assert g(2.0, 5, results="python")["y"] == 10.0


def test_numbers_out_of_range_for_f32_are_refused():
    g = cfx.compile(DEFAULTS).entry
    # 1e39 is past f32's largest finite value (3.4028235e38): the command line refuses it too
    with pytest.raises(ValueError, match="out of range for f32"):
        g(x=1e39)
    with pytest.raises(ValueError, match="out of range for f32"):
        g(x=-1e39)
    assert g(x=float("inf"), flag=False, results="python")["y"] == float("inf")
    assert g(x=3.4e38, s=1.0, flag=False, results="python")["y"] == pytest.approx(3.4e38, rel=1e-7)


LOOP = """
graph count(n: i32) -> (k: i32) {
  k = 0
  for i in range(n) {
    k = k + 1
  }
}
"""


def test_cancel_before_a_call_is_kept_for_the_next_run():
    g = cfx.compile(LOOP).entry
    g.cancel() # no executor, no run yet: kept, as cfx_cancel keeps it
    with pytest.raises(cfx.RunStopped) as info:
        g(n=5, backend="cpu")
    assert info.value.status == "cancelled" and info.value.iterations == 0
    # each cancel stops one run: the next runs to its end (5 iterations)
    assert g(n=5, backend="cpu", results="python")["k"] == 5


def test_compile_of_empty_text():
    # "" is text with nothing in it, not a file named ''
    with pytest.raises(cfx.CompileError, match="no graph"):
        cfx.compile("")
    with pytest.raises(cfx.CompileError, match="no graph"):
        cfx.compile(b"")


SEMANTICS = """
graph pair(x: f32) -> (a: f32, b: f32) {
  a = x + 1.0
  b = x * 2.0
}

graph outer(x: f32) -> (p: f32, q: f32) {
  return pair(x)
}

graph compare(x: f32, y: f32 = None) -> (ne: bool, eq: bool, guarded: bool) {
  ne = y != 3.0
  eq = y == 3.0
  guarded = y is not None and y > x
}

graph known(x: f32) -> (r: bool, ne: bool, eq: bool) {
  y = None
  r = y is not None and not y
  ne = y != 3
  eq = y == 3
}
"""


def test_python_semantics_of_none_and_several_results():
    m = cfx.compile(SEMANTICS)
    # return pair(x) gives pair's two results: 3 + 1 = 4, 3 * 2 = 6
    assert m.graph("outer")(x=3.0, results="python") == {"p": 4.0, "q": 6.0}
    g = m.graph("compare")
    # Python: None != 3.0 is True, None == 3.0 False; the `and` never reads y
    assert g(x=1.0, results="python") == {"ne": True, "eq": False, "guarded": False}
    assert g(x=1.0, y=3.0, results="python") == {"ne": False, "eq": True, "guarded": True}
    assert g(x=5.0, y=2.0, results="python") == {"ne": True, "eq": False, "guarded": False}
    # y known to be None: the right side of `and` never runs, so `not y` is no error
    assert m.graph("known")(x=1.0, results="python") == {"r": False, "ne": True, "eq": False}
