"""test_runaway.py: a run that never ends is safe for a newcomer. `cfx run` of a loop that
never stops (collatz of 0, which the README's `--in start=random` can draw), with no
--max-iters, says once on stderr after 5 s how to stop or bound it, and Ctrl-C (SIGINT)
cancels it cleanly: status line `run stopped: cancelled` at the loop, no results, exit 3.
A run under a budget says nothing and stops with `limit`. A graph with no loop but a long
op (matrix products) gets a hint that does not offer --max-iters, which cannot act on it, and
Ctrl-C stops it inside the product.

Usage: python3 test_runaway.py CFX_BINARY SOURCE_DIR"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HINT = ("cfx: the run has gone on for 5 s; Ctrl-C cancels it, and --max-iters N bounds its "
        "loop iterations\n")
# collatz_batch's while is at line 51, column 3 (graphs/collatz.cfx); 0 never reaches 1
RUNAWAY = ["run", "graphs/collatz.cfx", "--graph", "collatz_batch", "--in", "start=[5,0,1,1,1,1]"]
STOPPED = "graphs/collatz.cfx:51:3: run stopped: cancelled: cancelled by the caller\n"
# then where the run stood: the while of line 51, after some iterations (how many depends on
# the machine's speed, but a run cancelled after half a second has run at least one)
STOOD = re.compile(r"cfx: the run stood at graphs/collatz\.cfx:51:3 after [1-9][0-9]* loop iterations\n\Z")


def stopped_and_stood(text, before=""):
    return text.startswith(before + STOPPED) and STOOD.match(text[len(before + STOPPED):]) is not None

failures = 0
checks = 0


def check(ok, what):
    global failures, checks
    checks += 1
    if not ok:
        failures += 1
        print("FAIL: " + what, file=sys.stderr)


def default_sigint():
    # the child must get SIGINT as a terminal would deliver it, whatever ctest inherited
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(cfx, args):
    return subprocess.Popen([cfx] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=default_sigint)


def interrupt(p, what):
    """Ctrl-C: sends p SIGINT and waits up to 20 s for it to end (past that it is killed, and
    the check "Ctrl-C did not stop WHAT" fails). Returns its stdout and stderr."""
    p.send_signal(signal.SIGINT)
    try:
        return p.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        check(False, "Ctrl-C did not stop " + what)
        return out, err


def main():
    cfx, src = sys.argv[1], sys.argv[2]
    os.chdir(src)

    # Ctrl-C early: cancelled at once, before any hint
    p = start(cfx, RUNAWAY)
    time.sleep(0.5)
    out, err = interrupt(p, "the run")
    check(p.returncode == 3, "exit %s after Ctrl-C, want 3" % p.returncode)
    check(stopped_and_stood(err.decode()), "stderr after Ctrl-C: %r" % err.decode())
    check(out == b"", "a cancelled run printed results: %r" % out)

    # left alone: the hint once after 5 s, then Ctrl-C
    p = start(cfx, RUNAWAY)
    time.sleep(7)
    out, err = interrupt(p, "the run after the hint")
    check(p.returncode == 3, "exit %s after the hint and Ctrl-C, want 3" % p.returncode)
    check(stopped_and_stood(err.decode(), HINT), "stderr after the hint and Ctrl-C: %r" % err.decode())

    # under a budget: no hint, status limit
    p = subprocess.run([cfx] + RUNAWAY + ["--max-iters", "1000"], capture_output=True, timeout=60)
    check(p.returncode == 3, "exit %s under a budget, want 3" % p.returncode)
    check(p.stderr.decode() ==
          "graphs/collatz.cfx:51:3: run stopped: limit: iteration budget of 1000 spent\n",
          "stderr under a budget: %r" % p.stderr.decode())

    # no loop, long products (4 of 2048^3 multiply-adds, tens of seconds on the cpu executor's
    # f64 reference kernels; a CBLAS can be done before the hint): the hint offers Ctrl-C and
    # --deadline, not --max-iters; Ctrl-C stops it in a product
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "products.cfx")
        with open(path, "w") as f:
            f.write("graph products(x: f32) -> (y: f32) {\n  a = full([2048, 2048], x)\n"
                    "  b = a @ a\n  c = b @ a\n  d = c @ a\n  e = d @ a\n  y = sum(e)\n}\n")
        p = start(cfx, ["run", path, "--in", "x=0.001", "--backend", "cpu", "--accumulate", "f64"])
        time.sleep(6.5)
        t0 = time.monotonic()
        out, err = interrupt(p, "a long product")
        check(time.monotonic() - t0 < 5, "Ctrl-C took %.1f s to stop a long product"
              % (time.monotonic() - t0))
        check(p.returncode == 3, "exit %s after Ctrl-C in a product, want 3" % p.returncode)
        text = err.decode()
        check(text.startswith("cfx: the run has gone on for 5 s; Ctrl-C cancels it, and "
                              "--deadline SECONDS bounds its time\n" + path + ":"),
              "hint of a graph with no loop: %r" % text)
        check(": run stopped: cancelled: cancelled by the caller\n" in text,
              "status line after Ctrl-C in a product: %r" % text)
        check(out == b"", "a cancelled run printed results: %r" % out)

    print("test_runaway: %d passed, %d failed" % (checks - failures, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
