#!/usr/bin/env python3
"""racecheck_graphs.py: compute-sanitizer's racecheck on every graph of graphs/ that has a
`# run:` line, its first run, in both cuda-persistent modes (the interpreter and the compiled
kernel), eight at a time. One line per run in OUT (- for stdout): the file, the mode, cfx's exit status and
the sanitizer's summary. A file whose first run is an error or a stop exits non-zero by design.
Exit status: 1 when any run reports a hazard, 0 otherwise.

    python3 profiling/racecheck_graphs.py BUILD/cfx OUT
"""
import glob, os, shlex, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
if len(sys.argv) != 3:
    sys.exit(__doc__)
B = sys.argv[1]; out = sys.argv[2]
jobs = []
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for f in sorted(glob.glob(os.path.join(root, "graphs", "*.cfx"))):
    runs = [l[len("# run:"):].strip() for l in open(f) if l.startswith("# run:")]
    if not runs: continue
    args = []
    for tok in shlex.split(runs[0]):
        if tok.startswith("--"): args.append(tok)
        elif "=" in tok: args += ["--in", tok]
        else: args.append(tok)
    for m in ["interp", "compiled"]:
        jobs.append((f, m, ["compute-sanitizer", "--tool", "racecheck", B, "run", f, "--backend", "cuda-persistent", "--persistent-mode", m] + args))
def one(j):
    f, m, cmd = j
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        o = p.stdout + p.stderr
        summ = [l for l in o.splitlines() if "RACECHECK SUMMARY" in l or "didn't terminate" in l or "hazard" in l.lower()][:3]
        return "%s %s rc=%d %s" % (os.path.relpath(f, root), m, p.returncode, " | ".join(summ))
    except subprocess.TimeoutExpired:
        return "%s %s timeout" % (os.path.relpath(f, root), m)
hazards = 0
log = sys.stdout if out == "-" else open(out, "w")
with ThreadPoolExecutor(8) as ex:
    for r in ex.map(one, jobs):
        log.write(r + "\n"); log.flush()
        hazards += "RACECHECK SUMMARY: 0 hazards" not in r and "timeout" not in r and "rc=255" not in r
if log is not sys.stdout:
    log.close()
print("racecheck: %d runs, %d with hazards" % (len(jobs), hazards))
sys.exit(1 if hazards else 0)
