#!/usr/bin/env python3
"""test_graphs.py: runs every graphs/*.cfx through the cfx command and checks its header.

    python3 tests/test_graphs.py CFX_BINARY SOURCE_DIR [graphs/NAME.cfx ...]

The header format is described in graphs/README.md: `# run:` lines give the inputs and
flags of a run, `# expect:` lines every stdout line of that run, `# stop:` the status line of
a run that stops early (exit 3), `# error:` the compile errors of a file that must not
compile (exit 1), `# tol:` the relative tolerance for reals.

Runs from SOURCE_DIR with files passed as `graphs/NAME.cfx`, so that paths in messages
read as in the headers. Also checks that every complete program shown in docs/language.md
compiles (`cfx check`), so the users' reference cannot drift from the language. The backend comes from the environment variable CFX_BACKEND
(default cpu). Prints one line per difference, then `N passed, M failed`; exits 1 when
anything failed, 77 (skipped) when the backend is not available in this build or machine.
Standard library only: CI may have nothing else.
"""
import os
import re
import subprocess
import sys

DEFAULT_TOL = 1e-5
RUN_TIMEOUT_S = 120
KEYS = ("run", "expect", "stop", "error", "tol")
DIRECTIVE = re.compile(r"^#\s*(run|expect|stop|error|tol):(.*)$")
# A number as cfx prints one: integers, reals in %g style, nan, inf. Not part of a name.
NUMBER = re.compile(r"(?<![A-Za-z0-9_.])(?:-?inf|nan|-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(?![A-Za-z0-9_])")
PLAIN_INT = re.compile(r"^-?\d+$")
ERROR_LINE = re.compile(r"^\S.*:\d+:\d+: error: ")


class Run:
    def __init__(self, line_no, words):
        self.line_no = line_no
        self.words = words      # the tokens after `# run:`
        self.expect = []        # stdout lines
        self.stop = None        # the stderr status line, or None for a run that ends ok


class GraphFile:
    def __init__(self, rel):
        self.rel = rel          # graphs/NAME.cfx
        self.runs = []
        self.errors = []        # `# error:` lines
        self.tol = DEFAULT_TOL
        self.problems = []      # malformed header


def parse_header(rel, text):
    g = GraphFile(rel)
    for n, line in enumerate(text.splitlines(), 1):
        m = DIRECTIVE.match(line)
        if not m:
            continue
        key, rest = m.group(1), m.group(2).strip()
        if key == "run":
            g.runs.append(Run(n, rest.split()))
        elif key == "error":
            g.errors.append(rest)
        elif key == "tol":
            try:
                g.tol = float(rest)
            except ValueError:
                g.problems.append("line %d: bad tol %r" % (n, rest))
        elif not g.runs:
            g.problems.append("line %d: '# %s:' before any '# run:'" % (n, key))
        elif key == "expect":
            g.runs[-1].expect.append(rest)
        elif g.runs[-1].stop is not None:
            g.problems.append("line %d: a second '# stop:' for one run" % n)
        else:
            g.runs[-1].stop = rest
    if not g.runs and not g.errors:
        g.problems.append("no '# run:' and no '# error:' line: nothing to check")
    if g.errors and any(r.expect or r.stop for r in g.runs):
        g.problems.append("a file with '# error:' lines cannot also expect results")
    return g


def command_line(binary, g, run, backend):
    """The cfx command for one run: NAME=VALUE words become --in, --flags pass through."""
    argv = [binary, "run", g.rel]
    words = run.words if run else []
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("--"):
            if i + 1 >= len(words):
                raise ValueError("flag %s has no value" % w)
            argv += [w, words[i + 1]]
            i += 2
        elif "=" in w:
            argv += ["--in", w]
            i += 1
        else:
            raise ValueError("bad word %r in '# run:' (want NAME=VALUE or --flag VALUE)" % w)
    argv += ["--backend", backend]
    return argv


def numbers_match(want, got, tol):
    if PLAIN_INT.match(want) and PLAIN_INT.match(got):
        return int(want) == int(got)  # integers are bit-exact on every backend
    if want in ("nan", "inf", "-inf") or got in ("nan", "inf", "-inf"):
        return want == got
    w, v = float(want), float(got)
    return abs(v - w) <= tol * max(1.0, abs(w))


def lines_match(want, got, tol):
    """Text equal outside numbers, numbers equal within tol."""
    wn, gn = NUMBER.findall(want), NUMBER.findall(got)
    if NUMBER.split(want) != NUMBER.split(got) or len(wn) != len(gn):
        return False
    return all(numbers_match(a, b, tol) for a, b in zip(wn, gn))


def compare_lines(what, want, got, tol, failures, where):
    for k in range(max(len(want), len(got))):
        w = want[k] if k < len(want) else None
        v = got[k] if k < len(got) else None
        if w is None:
            failures.append("%s: %s line %d: unexpected %r" % (where, what, k + 1, v))
        elif v is None:
            failures.append("%s: %s line %d: missing, want %r" % (where, what, k + 1, w))
        elif not lines_match(w, v, tol):
            failures.append("%s: %s line %d: want %r, got %r" % (where, what, k + 1, w, v))


def execute(argv, cwd):
    try:
        p = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %d s" % RUN_TIMEOUT_S
    return (p.returncode, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))


def describe_exit(rc):
    if rc is None:
        return "no exit (timeout)"
    if rc < 0:
        return "killed by signal %d (a crash)" % -rc
    return "exit %d" % rc


def check_error_file(binary, g, source_dir, backend):
    """A file that must not compile: exit 1, exactly the listed error lines, no stdout."""
    failures = []
    where = g.rel + " (compile)"
    argv = command_line(binary, g, g.runs[0] if g.runs else None, backend)
    rc, out, err = execute(argv, source_dir)
    if rc != 1:
        failures.append("%s: want exit 1 (compile error), got %s; stderr: %s"
                        % (where, describe_exit(rc), err.strip()[:300]))
    got = [l for l in err.splitlines() if ERROR_LINE.match(l)]
    compare_lines("error", g.errors, got, g.tol, failures, where)
    if out.strip():
        failures.append("%s: want no stdout, got %r" % (where, out[:200]))
    return failures


def check_run(binary, g, run, index, source_dir, backend):
    where = "%s run %d (line %d: %s)" % (g.rel, index, run.line_no, " ".join(run.words))
    try:
        argv = command_line(binary, g, run, backend)
    except ValueError as e:
        return ["%s: %s" % (where, e)], None
    rc, out, err = execute(argv, source_dir)
    failures = []
    want_rc = 3 if run.stop is not None else 0
    if rc != want_rc:
        failures.append("%s: want exit %d, got %s; stderr: %s"
                        % (where, want_rc, describe_exit(rc), err.strip()[:300]))
    compare_lines("stdout", run.expect, out.splitlines(), g.tol, failures, where)
    if run.stop is not None:
        got = [l for l in err.splitlines() if " run stopped: " in l]
        compare_lines("stop", [run.stop], got, g.tol, failures, where)
    return failures, err


def docs_examples(source_dir):
    """The programs shown in docs/language.md: the fenced blocks opened with ```cfx.
    Yields (label, text)."""
    path = os.path.join(source_dir, "docs", "language.md")
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    block, start = None, 0
    for n, line in enumerate(lines, 1):
        text = line.strip()
        if text.startswith("```"):
            if block is None:
                block, start, indent = [], n, len(line) - len(line.lstrip())
                is_cfx = text[3:].strip() == "cfx"
            else:
                if is_cfx:
                    yield "docs/language.md:%d" % start, "\n".join(l[indent:] for l in block) + "\n"
                block = None
        elif block is not None:
            block.append(line)


def check_docs_example(binary, label, text, source_dir):
    """A program shown in the users' reference must compile."""
    # written beside the build's other scratch files (build/tests/work), never the system's
    # temporary folder, so a run killed at its timeout leaves nothing there
    work = os.path.join(os.path.dirname(os.path.abspath(binary)), "tests", "work")
    os.makedirs(work, exist_ok=True)
    tmp = os.path.join(work, "test_graphs_docs_example.cfx")
    with open(tmp, "w") as f:
        f.write(text)
    try:
        rc, out, err = execute([binary, "check", tmp], source_dir)
    finally:
        os.unlink(tmp)
    if rc != 0:
        return ["%s: the example does not compile (%s): %s" % (label, describe_exit(rc), err.strip()[:300])]
    return []


def main(argv):
    if len(argv) < 3:
        print("usage: test_graphs.py CFX_BINARY SOURCE_DIR [graphs/NAME.cfx ...]")
        return 1
    binary, source_dir = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    backend = os.environ.get("CFX_BACKEND", "cpu")
    if not os.access(binary, os.X_OK):
        print("cfx binary %s is missing or not executable" % binary)
        return 1
    if len(argv) > 3:
        rels = [os.path.relpath(os.path.abspath(p), source_dir) if os.path.isabs(p) else p
                for p in argv[3:]]
    else:
        graph_dir = os.path.join(source_dir, "graphs")
        rels = ["graphs/" + n for n in sorted(os.listdir(graph_dir)) if n.endswith(".cfx")]

    passed = failed = 0
    for rel in rels:
        with open(os.path.join(source_dir, rel), encoding="utf-8") as f:
            g = parse_header(rel, f.read())
        if g.problems:
            for p in g.problems:
                print("FAIL %s: header: %s" % (rel, p))
            failed += 1
            continue
        if g.errors:
            results = [check_error_file(binary, g, source_dir, backend)]
        else:
            results = []
            for k, run in enumerate(g.runs, 1):
                fails, err = check_run(binary, g, run, k, source_dir, backend)
                if err and " is not available" in err and backend != "cpu":
                    print("SKIP: backend %s: %s" % (backend, err.strip().splitlines()[0]))
                    return 77
                results.append(fails)
        for fails in results:
            for line in fails:
                print("FAIL " + line)
            if fails:
                failed += 1
            else:
                passed += 1
    if len(argv) <= 3:
        for label, text in docs_examples(source_dir):
            fails = check_docs_example(binary, label, text, source_dir)
            for line in fails:
                print("FAIL " + line)
            if fails:
                failed += 1
            else:
                passed += 1
    print("backend %s, %d files" % (backend, len(rels)))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
