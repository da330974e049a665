"""rounds.py: the records a GPU round writes, so that two rounds can be compared by a script.

A round's file is JSON: {"format": "cfx-round/1", "records": [RECORD, ...]}. bench_gpu --json,
bench_gpu --predict --json (the cost sheet), peers.py --json and onnx_bench.py --json write it;
compare_rounds.py reads it. Every record carries:

  kind          "row" (a time per loop iteration) or "floor" (a floor of the same run)
  source        "bench_gpu", "peers", "onnx_bench" or "cost sheet"
  commit        the cfx commit measured ("+" when the tree had uncommitted changes)
  gpu, driver, cuda_runtime
                the device's name, the driver's CUDA version and the runtime's ("none" where
                there is no GPU)
  graph         profiling/bench/GRAPH.cfx ("floor" for a floor)
  backend       cfx's backend ("cpu", "cuda-host", "cuda-graph", "cuda-persistent") or the
                peer ("torch", "jax", "onnxruntime"); for a floor, its name
  mode          the path taken: "compiled", "interp", "compiled-no-l2", ... for cuda-persistent,
                the peer's variant ("while_loop", "fori_loop", "while_loop (cuda graph)",
                "CUDAExecutionProvider", ...), "-" where there is one; for a floor, its unit
  state         "ok", or why there is no figure
  us_per_iter   the median microseconds per loop iteration (a floor: "value" instead), or null
  floor, floor_us_per_iter
                the floor the row is read against (bandwidth), where there is one
  predicted_us_per_iter
                the cost sheet's prediction for the row (cuda-persistent's modes), where there
                is one

(graph, backend, mode) names a row across rounds.
"""

import json
import os
import subprocess

FORMAT = "cfx-round/1"


def _run(cmd):
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              universal_newlines=True, timeout=20).stdout.strip()
    except Exception:
        return ""


def meta(root=None):
    """commit, gpu, driver and cuda_runtime of this machine ("none"/"unknown" where absent)."""
    root = root or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    commit = os.environ.get("CFX_COMMIT") or _run(["git", "-C", root, "rev-parse", "--short", "HEAD"]) or "unknown"
    if commit != "unknown" and os.environ.get("CFX_COMMIT") is None:
        try:
            if subprocess.run(["git", "-C", root, "diff", "--quiet", "HEAD"],
                              stderr=subprocess.DEVNULL, timeout=20).returncode == 1:
                commit += "+"
        except Exception:
            pass
    m = {"commit": commit, "gpu": "none", "driver": "none", "cuda_runtime": "none"}
    smi = _run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    if smi:
        parts = [p.strip() for p in smi.splitlines()[0].split(",")]
        m["gpu"] = parts[0]
        if len(parts) > 1:
            m["driver_version"] = parts[1]
        # the driver's CUDA version, as bench_gpu gives it (cudaDriverGetVersion), from the header
        words = _run(["nvidia-smi"]).split("CUDA Version:")
        m["driver"] = words[1].split()[0] if len(words) > 1 and words[1].split() else parts[-1]
    return m


def record(m, kind, source, graph, backend, mode, state, us_per_iter=None, **extra):
    r = {"kind": kind, "source": source}
    r.update(m)
    r.update(graph=graph, backend=backend, mode=mode, state=state, us_per_iter=us_per_iter)
    r.update(extra)
    return r


def write(path, records):
    with open(path, "w") as f:
        json.dump({"format": FORMAT, "records": records}, f, indent=0)
        f.write("\n")


def read(path):
    """The records of a round's file, or of every *.json round file in a directory."""
    if os.path.isdir(path):
        out = []
        for name in sorted(os.listdir(path)):
            if name.endswith(".json"):
                try:
                    out += read(os.path.join(path, name))
                except ValueError:
                    pass  # not a round's file (a trace, a manifest)
        return out
    with open(path) as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError("%s is not a round's file (no \"format\": \"%s\")" % (path, FORMAT))
    return doc["records"]
