"""check_headers.py: runs every expectation script here and checks that the lines it prints
appear, in the same order, in the header of the graph it is for. Needs numpy (not run by ctest):

    python3 tests/expect/check_headers.py

Prints one line per script, and exits 1 if any graph's header disagrees with its script."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# script -> the graphs whose headers hold its lines (by default graphs/<script name>.cfx)
GRAPHS = {"collatz.py": ["collatz.cfx", "counter.cfx"], "onnx_loops.py": ["onnx_cg.cfx", "onnx_greedy.cfx"],
          "axis_reduce.py": ["axis_reduce.cfx", "axis_reduce_types.cfx"]}


def main():
    bad = 0
    for name in sorted(os.listdir(HERE)):
        if not name.endswith(".py") or name in ("f32.py", "check_headers.py"):
            continue
        out = subprocess.run([sys.executable, os.path.join(HERE, name)], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        header = []
        for g in GRAPHS.get(name, [name[:-3] + ".cfx"]):
            with open(os.path.join(ROOT, "graphs", g), encoding="utf-8") as f:
                header += [l.rstrip("\n") for l in f if l.startswith("#")]
        missing, at = [], 0
        for line in out.stdout.splitlines():
            try:
                at = header.index(line, at) + 1
            except ValueError:
                missing.append(line)
        if out.returncode != 0 or missing:
            bad += 1
            print("DIFFERS %s (exit %d): %d line(s) not in the header in order, first: %r"
                  % (name, out.returncode, len(missing), missing[0] if missing else out.stdout[-200:]))
        else:
            print("ok      %s" % name)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
