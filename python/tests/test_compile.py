"""Compiling from Python: text, files, errors with every diagnostic and its position, and a
module's graphs with their inputs and results."""
import os
import pathlib

import pytest

import cfx

REPO = pathlib.Path(__file__).resolve().parents[2]

SOURCE = """graph first(x: f32[2, 3], n: i32) -> (y: f32[2, 3], ok: bool) {
  y = x * 2.0
  ok = n > 0
}
graph second(a: i64) -> (b: i64) {
  b = a + 1
}
"""


def test_text_and_graphs():
    m = cfx.compile(SOURCE, filename="two.cfx")
    assert list(m.graphs) == ["first", "second"]
    assert m.entry is m.graphs["first"] and m.graph() is m.entry
    g = m.graph("first")
    assert [(p.name, p.dtype, p.shape) for p in g.inputs] == [("x", "f32", (2, 3)), ("n", "i32", ())]
    assert [(p.name, p.dtype, p.shape) for p in g.results] == [("y", "f32", (2, 3)), ("ok", "bool", ())]
    assert str(g.inputs[0]) == "x: f32[2, 3]" and str(g.inputs[1]) == "n: i32"
    assert g.inputs[0].nbytes == 24
    assert m.graph("second").inputs == [cfx.Param("a", "i64", ())]
    assert "halt" in g.dump().lower()
    with pytest.raises(KeyError, match="two.cfx has no graph 'third' \\(it has first, second\\)"):
        m.graph("third")


def test_calling_the_module_runs_its_entry_graph():
    m = cfx.compile(SOURCE, filename="two.cfx")
    out = m([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], n=-2, backend="cpu")
    assert list(out) == ["y", "ok"]
    assert [list(r) for r in out["y"]] == [[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]]
    assert not out["ok"]


def test_file_path_and_bytes(tmp_path):
    f = tmp_path / "inc.cfx"
    f.write_text(SOURCE)
    for source in (f, str(f)):
        m = cfx.compile(source)
        assert m.filename == str(f)
        assert m.entry.name == "first"
    assert cfx.compile(SOURCE.encode()).filename == "<string>"
    with pytest.raises(FileNotFoundError):
        cfx.compile(str(tmp_path / "missing.cfx"))


def test_every_diagnostic_with_its_position():
    # graphs/several_errors.cfx lists what the compiler must say, with positions (# error:)
    path = os.path.relpath(REPO / "graphs" / "several_errors.cfx")
    want = [line[len("# error: "):] for line in (REPO / "graphs" / "several_errors.cfx").read_text().splitlines()
            if line.startswith("# error: ")]
    want = [w.replace("graphs/several_errors.cfx", path) for w in want]
    with pytest.raises(cfx.CompileError) as info:
        cfx.compile(path)
    e = info.value
    assert [l for l in str(e).splitlines() if ": error: " in l] == want
    assert [(d.file, d.line, d.col) for d in e.diagnostics] == [(path, 23, 10), (path, 24, 3), (path, 13, 8), (path, 18, 15), (path, 19, 7)]
    assert e.diagnostics[4].message == "unknown op 'foo'"
    assert "  w = foo(x)" in str(e) # the source line, then a caret
    assert isinstance(e, cfx.Error)


def test_error_in_text_names_the_string():
    src = "graph f(x: i32) -> (y: i32) {\n  y = x + 1.5\n}\n"
    with pytest.raises(cfx.CompileError) as info:
        cfx.compile(src, filename="mine.cfx")
    assert info.value.diagnostics == [cfx.Diagnostic(
        "mine.cfx", 2, 3, "'y' has type i32[] and cannot be assigned f32[]: i32 + f32 gives f32, "
        "as the operands promote (write cast(..., i32) to convert)")]
    with pytest.raises(cfx.CompileError, match="^<string>:2:3: error:"):
        cfx.compile(src)
