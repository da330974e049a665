#!/usr/bin/env python3
"""compare_rounds.py: two rounds side by side, per (graph, backend, mode).

    python3 profiling/compare_rounds.py A B [--all] [--json FILE]

A and B are round files (profiling/rounds.py: bench_gpu --json, bench_gpu --predict --json,
peers.py --json, onnx_bench.py --json), or directories whose *.json round files are read
together. For every (graph, backend, mode) with a figure in both, the table gives A's figure,
B's and B / A (below 1: B is faster); floors are compared the same way (graph "floor", backend
the floor's name, mode its unit). Rows in one round only are listed with --all. A round of
predictions (bench_gpu --predict, "source": "cost sheet") compares as any other: measured
against predicted gives how far the cost sheet is off.

Exit status 0, or 2 when a file cannot be read.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rounds  # noqa: E402


def figures(records):
    """(graph, backend, mode) -> (figure, record); the first record with a figure wins."""
    out = {}
    for r in records:
        v = r.get("value") if r.get("kind") == "floor" else r.get("us_per_iter")
        key = (r.get("graph"), r.get("backend"), r.get("mode"))
        if isinstance(v, (int, float)) and key not in out:
            out[key] = (float(v), r)
    return out


def describe(records):
    seen = []
    for r in records:
        d = "%s at %s on %s" % (r.get("source"), r.get("commit"), r.get("gpu"))
        if d not in seen:
            seen.append(d)
    return "; ".join(seen) or "no records"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--all", action="store_true", help="also the rows in one round only")
    ap.add_argument("--json", help="write the comparison here as JSON")
    args = ap.parse_args()
    try:
        ra, rb = rounds.read(args.a), rounds.read(args.b)
    except (OSError, ValueError) as e:
        print("compare_rounds: %s" % e, file=sys.stderr)
        return 2
    fa, fb = figures(ra), figures(rb)
    print("A: %s (%s)" % (args.a, describe(ra)))
    print("B: %s (%s)\n" % (args.b, describe(rb)))
    print("| graph | backend | mode | A | B | B / A |")
    print("|---|---|---|---:|---:|---:|")
    out = []
    keys = sorted(set(fa) | set(fb), key=lambda k: tuple(str(x) for x in k))
    for k in keys:
        a, b = fa.get(k), fb.get(k)
        if (a is None or b is None) and not args.all:
            continue
        ratio = b[0] / a[0] if a and b and a[0] > 0 else None
        print("| %s | %s | %s | %s | %s | %s |" % (
            k[0], k[1], k[2], "%.4g" % a[0] if a else "", "%.4g" % b[0] if b else "",
            "%.3f" % ratio if ratio is not None else ""))
        out.append({"graph": k[0], "backend": k[1], "mode": k[2], "a": a[0] if a else None,
                    "b": b[0] if b else None, "ratio": ratio})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"a": args.a, "b": args.b, "rows": out}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
