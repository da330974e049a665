#!/usr/bin/env python3
"""peers.py: the benchmark's loops as a user would write them in PyTorch and in JAX.

Each peer runs the same program on the same inputs as cfx's benchmark (profiling/bench/*.cfx),
is checked against cfx's answer before it is timed, and reports the median time per loop
iteration after warm-up, as bench_gpu does.

    python3 profiling/peers.py --data DIR [--cfx BUILD/cfx] [--quick] [--json FILE]
                               [--cfx-json BENCH_GPU.json] [--device cuda|cpu] [--graphs a,b]

DIR is what `bench_gpu --export DIR` wrote: every graph's inputs and the results of its
checked cfx run as .npy files, and DIR/manifest.json. Where the manifest has no cfx results
for a graph (no GPU run passed its check), `--cfx` runs `cfx run` on the cpu executor to get
them; failing that, the integer graphs are checked against values computed here. With --cfx-json (bench_gpu's --json output) the table also shows cfx cuda-persistent's
time per iteration and the ratio.

The peers:
  torch eager       a Python loop that reads each condition with .item(), as users write it
  torch while_loop  torch._higher_order_ops.while_loop (and torch.cond for the branch),
                    eager and under torch.compile, where they run
  torch while_loop (cuda graph)
                    the same loop captured into one CUDA graph, which a PyTorch with
                    conditional-node support (torch.cond as IF nodes, while_loop as a WHILE
                    node) replays without the host deciding anything; where the installed
                    PyTorch cannot capture it, the row says why
  jax while_loop    lax.while_loop (and lax.cond for the branch) under jit
  jax fori_loop     lax.fori_loop under jit, for the loops with a fixed trip count

Every dependency is optional: a framework that is not installed is reported as "not
installed", a peer that raises is reported with its error, and neither is a failure. The
exit status is 1 only when a peer that ran gave a different answer from cfx.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

GRAPHS = ["counter", "if_in_while", "collatz", "power_iteration", "cg_1024", "cg_8192",
          "greedy_decode"]

# Relative tolerance for each real-valued result (None: not compared). rr, the squared
# residual of CG after convergence, is rounding noise by then and differs between any two
# implementations.
REAL_TOL = {"eig": 1e-4, "v": 1e-3, "x": 1e-3, "rr": None}


# ---- references ----------------------------------------------------------------------

def load_graph(np, data_dir, manifest, key, cfx, quiet):
    """Inputs (name -> array) and cfx's results (name -> array, or None) for one graph."""
    info = manifest["graphs"][key]
    inputs = {n: np.load(os.path.join(data_dir, "%s.%s.npy" % (key, n))) for n in info["inputs"]}
    results = None
    if info.get("results_from"):
        results = {n: np.load(os.path.join(data_dir, "%s.out.%s.npy" % (key, n)))
                   for n in info["results"]}
    elif cfx:
        results = cfx_run(np, cfx, info, key, data_dir, quiet)
    if results is None:
        results = computed_reference(np, key, inputs)
    return info, inputs, results


def computed_reference(np, key, inputs):
    """The integer graphs' answers computed here in plain Python, for when there are no
    cfx results to read; None for the real-valued graphs."""
    if key == "counter":
        return {"count": np.array(int(inputs["n"]), dtype=np.int32)}
    if key == "if_in_while":
        x, y, i, n = (int(inputs[k]) for k in ("x", "y", "i", "n"))
        out = x
        while i < n:
            out += x if x + i < y else y
            out += 1
            i += 1
        return {"out": np.array(out, dtype=np.int32)}
    if key == "collatz":
        steps = []
        for v in inputs["x"].tolist():
            k = 0
            while v > 1:
                v = v // 2 if v % 2 == 0 else 3 * v + 1
                k += 1
            steps.append(k)
        return {"steps": np.array(steps, dtype=np.int32)}
    return None


def cfx_run(np, cfx, info, key, data_dir, quiet):
    """cfx's results from `cfx run` on the cpu executor, through .npy files."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [cfx, "run", info["file"], "--backend", "cpu"]
        for n in info["inputs"]:
            cmd += ["--in", "%s=%s" % (n, os.path.join(data_dir, "%s.%s.npy" % (key, n)))]
        for n in info["results"]:
            cmd += ["--out", "%s=%s" % (n, os.path.join(tmp, n + ".npy"))]
        if not quiet:
            print("peers: %s: no checked GPU results, running cfx on the cpu executor" % key,
                  file=sys.stderr)
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)
        if proc.returncode != 0:
            print("peers: %s: `cfx run` failed: %s" % (key, proc.stderr.strip()), file=sys.stderr)
            return None
        return {n: np.load(os.path.join(tmp, n + ".npy")) for n in info["results"]}


def compare(np, key, got, want):
    """None when `got` (name -> array-like) matches cfx's results, else the difference."""
    for name, ref in want.items():
        if name not in got:
            return "no result '%s'" % name
        val = np.asarray(got[name])
        ref = np.asarray(ref)
        if val.shape != ref.shape:
            val = val.reshape(ref.shape) if val.size == ref.size else val
        if val.shape != ref.shape:
            return "%s has shape %s, cfx's has %s" % (name, val.shape, ref.shape)
        if ref.dtype.kind in "iub":
            if not np.array_equal(val.astype(ref.dtype), ref):
                bad = int(np.argmax(val.astype(ref.dtype).reshape(-1) != ref.reshape(-1)))
                return "%s differs from cfx at element %d: %s vs %s" % (
                    name, bad, val.reshape(-1)[bad], ref.reshape(-1)[bad])
            continue
        tol = REAL_TOL.get(name, 1e-3)
        if tol is None:
            continue
        v64, r64 = val.astype(np.float64), ref.astype(np.float64)
        err = float(np.linalg.norm(v64 - r64)) / max(float(np.linalg.norm(r64)), 1e-30)
        if not np.isfinite(err) or err > tol:
            return "%s differs from cfx by %.3g (relative), more than %g" % (name, err, tol)
    return None


# ---- PyTorch ---------------------------------------------------------------------------

def torch_peers(torch, dev):
    """(variant, graph) -> function(T) returning a dict of results; T maps names to tensors."""
    i32 = torch.int32
    norm = torch.linalg.vector_norm

    def counter_eager(T):
        n = T["n"]
        count = torch.zeros((), dtype=i32, device=dev)
        while (count < n).item():
            count = count + 1
        return {"count": count}

    def if_in_while_eager(T):
        x, y, n = T["x"], T["y"], T["n"]
        i = T["i"].clone()
        out = x.clone()
        while (i < n).item():
            if (x + i < y).item():
                out = out + x
            else:
                out = out + y
            out = out + 1
            i = i + 1
        return {"out": out}

    def collatz_step(v, steps):
        active = v > 1
        v = torch.where(active, torch.where(v % 2 == 0, v // 2, 3 * v + 1), v)
        return v, steps + active.to(i32)

    def collatz_eager(T):
        v = T["x"].clone()
        steps = torch.zeros(v.shape, dtype=i32, device=dev)
        while (v > 1).any().item():
            v, steps = collatz_step(v, steps)
        return {"steps": steps}

    def power_step(A, v, eig):
        w = A @ v
        nxt = torch.dot(v, w)
        return w / norm(w), nxt, (nxt - eig).abs()

    def power_eager(T):
        A, v0, tol = T["A"], T["v0"], T["tol"]
        max_iters = int(T["max_iters"].item())
        v = v0 / norm(v0)
        eig = torch.zeros((), dtype=v.dtype, device=dev)
        delta = torch.ones((), dtype=v.dtype, device=dev)
        iters = 0
        while iters < max_iters and (delta > tol).item():
            v, eig, delta = power_step(A, v, eig)
            iters += 1
        return {"v": v, "eig": eig, "iters": iters}

    def cg_step(A, x, r, p, rr):
        Ap = A @ p
        alpha = rr / torch.dot(p, Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rr_next = torch.dot(r, r)
        p = r + (rr_next / rr) * p
        return x, r, p, rr_next

    def cg_eager(T):
        A, b, tol = T["A"], T["b"], T["tol"]
        max_iters = int(T["max_iters"].item())
        x = torch.zeros_like(b)
        r, p = b.clone(), b.clone()
        rr = torch.dot(r, r)
        iters = 0
        while iters < max_iters and (rr > tol).item():
            x, r, p, rr = cg_step(A, x, r, p, rr)
            iters += 1
        return {"x": x, "iters": iters, "rr": rr}

    def decode_eager(T):
        W, M, E, eos = T["W"], T["M"], T["E"], T["eos"]
        max_len = int(T["max_len"].item())
        h = T["h0"].clone()
        tok = T["start"].long()
        tokens = torch.zeros(128, dtype=i32, device=dev)
        length = 0
        while length < max_len:
            h = torch.tanh(M @ h + E[tok])
            tok = torch.argmax(W @ h)
            if (tok == eos).item():
                break
            tokens[length] = tok
            length += 1
        return {"tokens": tokens, "length": length}

    peers = {
        ("torch eager", "counter"): counter_eager,
        ("torch eager", "if_in_while"): if_in_while_eager,
        ("torch eager", "collatz"): collatz_eager,
        ("torch eager", "power_iteration"): power_eager,
        ("torch eager", "cg_1024"): cg_eager,
        ("torch eager", "cg_8192"): cg_eager,
        ("torch eager", "greedy_decode"): decode_eager,
    }

    try:
        from torch._higher_order_ops.while_loop import while_loop
    except Exception:  # an older torch: the eager peers only
        return peers

    # Each loop's warm-up runs every piece a capture would record, eagerly: the condition, the
    # body, and each branch of a torch.cond with both predicate values. A conditional node's
    # body is captured whether or not the warm-up's data took it, so a branch the warm-up never
    # ran would do its library setup (cuBLAS's handle and workspace, a kernel's first load)
    # inside the capture, which fails it ("operation failed due to a previous error during
    # capture").
    def counter_hop(T):
        n = T["n"]
        (count,) = while_loop(lambda c: c < n, lambda c: (c + 1,),
                              (torch.zeros((), dtype=i32, device=dev),))
        return {"count": count}

    def counter_warm(T):
        c = torch.zeros((), dtype=i32, device=dev)
        return (c < T["n"], c + 1)

    def if_in_while_hop(T):
        x, y, n = T["x"], T["y"], T["n"]

        def body(i, out):
            out = torch.cond(x + i < y, lambda o: o + x, lambda o: o + y, (out,))
            return i + 1, out + 1

        _, out = while_loop(lambda i, out: i < n, body, (T["i"].clone(), x.clone()))
        return {"out": out}

    def if_in_while_warm(T):
        x, y, i = T["x"], T["y"], T["i"].clone()
        out = x.clone()
        done = [i < T["n"], x + i < y, out + x, out + y, i + 1, out + 1]
        for pred in (True, False):  # the cond itself, each way
            done.append(torch.cond(torch.tensor(pred, device=dev), lambda o: o + x,
                                   lambda o: o + y, (out,)))
        return done

    def collatz_hop(T):
        v = T["x"].clone()
        steps = torch.zeros(v.shape, dtype=i32, device=dev)
        _, steps = while_loop(lambda v, s: (v > 1).any(), collatz_step, (v, steps))
        return {"steps": steps}

    def collatz_warm(T):
        v = T["x"].clone()
        steps = torch.zeros(v.shape, dtype=i32, device=dev)
        return ((v > 1).any(),) + collatz_step(v, steps)

    def power_hop(T):
        A, v0, tol, max_iters = T["A"], T["v0"], T["tol"], T["max_iters"]
        v = v0 / norm(v0)

        def body(it, v, eig, delta):
            v, eig, delta = power_step(A, v, eig)
            return (it + 1, v, eig, delta)

        it, v, eig, _ = while_loop(
            lambda it, v, eig, delta: (it < max_iters) & (delta > tol), body,
            (torch.zeros((), dtype=i32, device=dev), v, torch.zeros((), dtype=v.dtype, device=dev),
             torch.ones((), dtype=v.dtype, device=dev)))
        return {"v": v, "eig": eig, "iters": it}

    def power_warm(T):
        A, v0, tol, max_iters = T["A"], T["v0"], T["tol"], T["max_iters"]
        v = v0 / norm(v0)
        it = torch.zeros((), dtype=i32, device=dev)
        eig, delta = torch.zeros((), dtype=v.dtype, device=dev), torch.ones((), dtype=v.dtype, device=dev)
        return ((it < max_iters) & (delta > tol), it + 1) + power_step(A, v, eig)

    def cg_hop(T):
        A, b, tol, max_iters = T["A"], T["b"], T["tol"], T["max_iters"]

        def body(it, x, r, p, rr):
            return (it + 1,) + cg_step(A, x, r, p, rr)

        it, x, _, _, rr = while_loop(
            lambda it, x, r, p, rr: (it < max_iters) & (rr > tol), body,
            (torch.zeros((), dtype=i32, device=dev), torch.zeros_like(b), b.clone(), b.clone(),
             torch.dot(b, b)))
        return {"x": x, "iters": it, "rr": rr}

    def cg_warm(T):
        A, b, tol, max_iters = T["A"], T["b"], T["tol"], T["max_iters"]
        it, rr = torch.zeros((), dtype=i32, device=dev), torch.dot(b, b)
        return ((it < max_iters) & (rr > tol), it + 1) + cg_step(A, torch.zeros_like(b), b.clone(), b.clone(), rr)

    for graph, fn, warm in [("counter", counter_hop, counter_warm),
                            ("if_in_while", if_in_while_hop, if_in_while_warm),
                            ("collatz", collatz_hop, collatz_warm), ("power_iteration", power_hop, power_warm),
                            ("cg_1024", cg_hop, cg_warm), ("cg_8192", cg_hop, cg_warm)]:
        peers[("torch while_loop", graph)] = fn
        peers[("torch while_loop (compile)", graph)] = compiled(torch, fn)
        if str(dev).startswith("cuda"):
            peers[("torch while_loop (cuda graph)", graph)] = captured(torch, fn, warm)
    return peers


def torch_warmup_mode(torch):
    """PyTorch's own warm-up for control flow before a capture (a dispatch mode that runs every
    branch of torch.cond and a while_loop's body), where the installed version has it; else a
    context that does nothing (and with CFX_PEERS_TORCH_WARMUP_MODE=0)."""
    import contextlib
    if os.environ.get("CFX_PEERS_TORCH_WARMUP_MODE", "1") == "0":  # our own warm-ups alone
        return contextlib.nullcontext()
    for modname in ("torch._higher_order_ops.cudagraph_conditional_nodes", "torch.cuda.graphs"):
        try:
            mod = __import__(modname, fromlist=["ControlFlowOpWarmupDispatchMode"])
            return mod.ControlFlowOpWarmupDispatchMode()
        except Exception:
            continue
    return contextlib.nullcontext()


def captured(torch, fn, warm=None):
    """fn captured into one CUDA graph on first use, on copies of its inputs (a CUDA graph reads
    and writes fixed addresses); each call copies the inputs in, replays, and returns the
    graph's own outputs. Before the capture, on the stream the capture will use: warm(static)
    (every branch and body run eagerly: see torch_peers), then fn itself, under PyTorch's own
    control-flow warm-up mode where it has one. The capture is on that same stream, so that
    cuBLAS's workspace for the stream exists before it."""
    holder = {}

    def run(T):
        if "graph" not in holder:
            static = {k: v.clone() for k, v in T.items()}
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                if warm is not None:
                    warm(static)
                try:
                    with torch_warmup_mode(torch):
                        fn(static)
                except Exception:
                    fn(static)  # the mode refused: the plain warm-up, as torch.cuda.graph wants
                fn(static)
            side.synchronize()
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=side):
                out = fn(static)
            holder.update(graph=graph, static=static, out=out)
        for k, v in T.items():
            holder["static"][k].copy_(v)
        holder["graph"].replay()
        return holder["out"]

    return run


def compiled(torch, fn):
    """fn under torch.compile, compiled on first use (so a failure is that peer's alone)."""
    holder = {}

    def run(T):
        if "fn" not in holder:
            holder["fn"] = torch.compile(fn, fullgraph=True)
        return holder["fn"](T)

    return run


# ---- JAX -------------------------------------------------------------------------------

def jax_peers(jax, jnp, lax):
    """(variant, graph) -> function(T) like torch_peers, each jitted."""
    i32 = jnp.int32

    def counter_while(T):
        n = T["n"]
        return {"count": lax.while_loop(lambda c: c < n, lambda c: c + 1, jnp.zeros((), i32))}

    def counter_fori(T):
        return {"count": lax.fori_loop(0, T["n"], lambda i, c: c + 1, jnp.zeros((), i32))}

    def if_in_while_while(T):
        x, y, n = T["x"], T["y"], T["n"]

        def body(state):
            i, out = state
            out = lax.cond(x + i < y, lambda o: o + x, lambda o: o + y, out)
            return i + 1, out + 1

        _, out = lax.while_loop(lambda s: s[0] < n, body, (T["i"], x))
        return {"out": out}

    def collatz_while(T):
        def body(state):
            v, steps = state
            active = v > 1
            v = jnp.where(active, jnp.where(v % 2 == 0, v // 2, 3 * v + 1), v)
            return v, steps + active.astype(i32)

        v = T["x"]
        _, steps = lax.while_loop(lambda s: jnp.any(s[0] > 1), body,
                                  (v, jnp.zeros(v.shape, i32)))
        return {"steps": steps}

    def power_step(A, v, eig):
        w = A @ v
        nxt = jnp.dot(v, w)
        return w / jnp.linalg.norm(w), nxt, jnp.abs(nxt - eig)

    def power_while(T):
        A, v0, tol, max_iters = T["A"], T["v0"], T["tol"], T["max_iters"]

        def body(s):
            it, v, eig, _ = s
            return (it + 1,) + power_step(A, v, eig)

        v = v0 / jnp.linalg.norm(v0)
        init = (jnp.zeros((), i32), v, jnp.zeros((), v.dtype), jnp.ones((), v.dtype))
        it, v, eig, _ = lax.while_loop(lambda s: (s[0] < max_iters) & (s[3] > tol), body, init)
        return {"v": v, "eig": eig, "iters": it}

    def power_fori(T):
        A, v0 = T["A"], T["v0"]
        v = v0 / jnp.linalg.norm(v0)
        v, eig, _ = lax.fori_loop(0, T["max_iters"], lambda i, s: power_step(A, s[0], s[1]),
                                  (v, jnp.zeros((), v.dtype), jnp.ones((), v.dtype)))
        return {"v": v, "eig": eig, "iters": T["max_iters"]}

    def cg_step(A, x, r, p, rr):
        Ap = A @ p
        alpha = rr / jnp.dot(p, Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rr_next = jnp.dot(r, r)
        return x, r, r + (rr_next / rr) * p, rr_next

    def cg_while(T):
        A, b, tol, max_iters = T["A"], T["b"], T["tol"], T["max_iters"]
        init = (jnp.zeros((), i32), jnp.zeros_like(b), b, b, jnp.dot(b, b))
        it, x, _, _, rr = lax.while_loop(lambda s: (s[0] < max_iters) & (s[4] > tol),
                                         lambda s: (s[0] + 1,) + cg_step(A, *s[1:]), init)
        return {"x": x, "iters": it, "rr": rr}

    def cg_fori(T):
        A, b = T["A"], T["b"]
        x, _, _, rr = lax.fori_loop(0, T["max_iters"], lambda i, s: cg_step(A, *s),
                                    (jnp.zeros_like(b), b, b, jnp.dot(b, b)))
        return {"x": x, "iters": T["max_iters"], "rr": rr}

    def decode_while(T):
        W, M, E, eos, max_len = T["W"], T["M"], T["E"], T["eos"], T["max_len"]

        def body(s):
            length, tok, h, tokens, _ = s
            h = jnp.tanh(M @ h + E[tok])
            tok = jnp.argmax(W @ h).astype(i32)
            stop = tok == eos
            tokens = tokens.at[length].set(jnp.where(stop, tokens[length], tok))
            return length + jnp.where(stop, 0, 1).astype(i32), tok, h, tokens, stop

        init = (jnp.zeros((), i32), T["start"], T["h0"], jnp.zeros(128, i32), jnp.array(False))
        length, _, _, tokens, _ = lax.while_loop(lambda s: (s[0] < max_len) & ~s[4], body, init)
        return {"tokens": tokens, "length": length}

    table = {
        ("jax while_loop", "counter"): counter_while,
        ("jax fori_loop", "counter"): counter_fori,
        ("jax while_loop", "if_in_while"): if_in_while_while,
        ("jax while_loop", "collatz"): collatz_while,
        ("jax while_loop", "power_iteration"): power_while,
        ("jax fori_loop", "power_iteration"): power_fori,
        ("jax while_loop", "cg_1024"): cg_while,
        ("jax fori_loop", "cg_1024"): cg_fori,
        ("jax while_loop", "cg_8192"): cg_while,
        ("jax fori_loop", "cg_8192"): cg_fori,
        ("jax while_loop", "greedy_decode"): decode_while,
    }
    return {k: jax.jit(f) for k, f in table.items()}


# ---- timing ----------------------------------------------------------------------------

def time_peer(fn, T, sync, iterations, quick):
    """Median, min and max microseconds per iteration over repeats after two warm-ups."""
    min_rep, max_rep, budget = (3, 5, 1.0) if quick else (5, 20, 3.0)
    for _ in range(2):
        sync(fn(T))
    samples = []
    started = time.perf_counter()
    while len(samples) < max_rep and (len(samples) < min_rep or
                                      time.perf_counter() - started < budget):
        t0 = time.perf_counter()
        sync(fn(T))
        samples.append(1e6 * (time.perf_counter() - t0) / max(iterations, 1))
    return statistics.median(samples), min(samples), max(samples), len(samples)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="the directory bench_gpu --export wrote")
    ap.add_argument("--cfx", help="the cfx binary, for graphs whose GPU results are missing")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", help="write the rows here as a round's records (profiling/rounds.py)")
    ap.add_argument("--cfx-json", help="bench_gpu's --json output, to compare with")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--graphs", help="comma list of graphs (default: all in the manifest)")
    args = ap.parse_args()

    manifest_path = os.path.join(args.data, "manifest.json")
    if not os.path.exists(manifest_path):
        print("peers: %s is missing: run `bench_gpu --export %s` first" % (manifest_path, args.data))
        return 2
    with open(manifest_path) as f:
        manifest = json.load(f)
    try:
        import numpy as np
    except ImportError:
        print("peers: numpy is not installed: no peer can be measured")
        return 0

    rows, failed = [], False
    cuda_runtime = None
    frameworks = []  # (name, peers dict, to_device, sync) or (name, None, reason)

    try:
        import torch
        if args.device == "cuda" and not torch.cuda.is_available():
            frameworks.append(("torch", None, "installed, but torch sees no CUDA device"))
        else:
            dev = torch.device(args.device)
            torch.backends.cuda.matmul.allow_tf32 = False  # f32 as cfx computes it
            sync = (lambda out: torch.cuda.synchronize()) if args.device == "cuda" else (lambda out: None)
            cuda_runtime = getattr(torch.version, "cuda", None)
            frameworks.append(("torch " + torch.__version__, torch_peers(torch, dev),
                               lambda a, dev=dev: torch.from_numpy(a.copy()).to(dev), sync))
    except ImportError:
        frameworks.append(("torch", None, "not installed"))
    except Exception as e:  # installed but broken (a CUDA mismatch, say): reported, not fatal
        frameworks.append(("torch", None, "does not load: %s" % str(e).splitlines()[0][:160]))

    # JAX takes 75% of the GPU's memory at its first use unless told not to, which would
    # starve torch's allocator running beside it.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax
        jax.config.update("jax_enable_x64", True)            # collatz is i64
        jax.config.update("jax_default_matmul_precision", "highest")  # no TF32
        import jax.numpy as jnp
        from jax import lax
        try:
            device = jax.devices("gpu" if args.device == "cuda" else "cpu")[0]
        except RuntimeError:
            device = None
        if device is None:
            frameworks.append(("jax", None, "installed, but jax sees no GPU"))
        else:
            def jsync(out):
                jax.block_until_ready(out)
            frameworks.append(("jax " + jax.__version__, jax_peers(jax, jnp, lax),
                               lambda a, device=device: jax.device_put(a, device), jsync))
    except ImportError:
        frameworks.append(("jax", None, "not installed"))
    except Exception as e:
        frameworks.append(("jax", None, "does not load: %s" % str(e).splitlines()[0][:160]))

    cfx_times = {}
    if args.cfx_json and os.path.exists(args.cfx_json):
        with open(args.cfx_json) as f:
            doc = json.load(f)
        for r in doc.get("records", doc.get("rows", [])):
            us = r.get("us_per_iter", r.get("median_us_per_iter"))
            if r.get("executor") == "cuda-persistent" and isinstance(us, (int, float)):
                cfx_times[r["graph"]] = us

    wanted = args.graphs.split(",") if args.graphs else GRAPHS
    for fw in frameworks:
        if fw[1] is None:
            rows.append({"graph": "*", "peer": fw[0], "state": fw[2]})
    for key in wanted:
        if key not in manifest.get("graphs", {}):
            continue
        info, inputs, want = load_graph(np, args.data, manifest, key, args.cfx, False)
        iterations = int(info["iterations"])
        for fw in frameworks:
            if fw[1] is None:
                continue
            name, peers, to_device, sync = fw
            T = None
            for (variant, graph), fn in peers.items():
                if graph != key:
                    continue
                row = {"graph": key, "peer": variant, "framework": name, "iterations": iterations}
                rows.append(row)
                if want is None:
                    row["state"] = "not checked: no cfx results (give --cfx)"
                    continue
                try:
                    if T is None:
                        T = {n: to_device(a) for n, a in inputs.items()}
                    got = fn(T)
                    sync(got)
                    got = {n: (v.cpu().numpy() if hasattr(v, "cpu") else np.asarray(v))
                           for n, v in got.items()}
                    diff = compare(np, key, got, want)
                    if diff:
                        row["state"] = "FAIL: " + diff
                        failed = True
                        continue
                    med, lo, hi, n = time_peer(fn, T, sync, iterations, args.quick)
                    row.update(state="ok", median_us_per_iter=med, min_us=lo, max_us=hi, repeats=n)
                    if key in cfx_times:
                        row["cfx_persistent_us"] = cfx_times[key]
                except Exception as e:  # a peer that cannot run this loop: reported, not fatal
                    msg = (str(e).strip().splitlines() or [type(e).__name__])[0]
                    row["state"] = "does not run: %s: %s" % (type(e).__name__, msg[:160])
                print("peers: %s / %s: %s" % (key, variant, row["state"]), file=sys.stderr)
                if args.json:  # after every row, so that a run stopped halfway leaves its rows
                    write_records(args.json, args.device, rows, cuda_runtime)
            T = None

    print("\n## Peers: time per loop iteration\n")
    print("| graph | peer | us/iter (median) | min .. max | cfx cuda-persistent us/iter | "
          "peer / cfx | state |")
    print("|---|---|---:|---:|---:|---:|---|")
    for r in rows:
        if "median_us_per_iter" in r:
            cfx_us = r.get("cfx_persistent_us")
            print("| %s | %s | %.3f | %.3f .. %.3f | %s | %s | %s |" % (
                r["graph"], r["peer"], r["median_us_per_iter"], r["min_us"], r["max_us"],
                "%.3f" % cfx_us if cfx_us else "",
                "%.1fx" % (r["median_us_per_iter"] / cfx_us) if cfx_us else "", r["state"]))
        else:
            print("| %s | %s | | | | | %s |" % (r["graph"], r["peer"], r["state"]))
    if args.json:
        write_records(args.json, args.device, rows, cuda_runtime)
    return 1 if failed else 0


def write_records(path, device, rows, cuda_runtime):
    """The rows as a round's records (profiling/rounds.py): backend the framework ("torch",
    "jax"), mode the peer's variant ("while_loop (cuda graph)", "fori_loop", ...)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import rounds
    m = rounds.meta()
    if device != "cuda":
        m.update(gpu="none (--device %s)" % device)
    if cuda_runtime:
        m["cuda_runtime"] = cuda_runtime
    records = []
    for r in rows:
        framework, _, variant = r["peer"].partition(" ")
        extra = {k: r[k] for k in ("framework", "iterations", "min_us", "max_us", "repeats",
                                   "cfx_persistent_us") if k in r}
        records.append(rounds.record(m, "row", "peers", r["graph"], framework, variant or "-",
                                     r["state"], r.get("median_us_per_iter"), floor=None,
                                     floor_us_per_iter=None, predicted_us_per_iter=None,
                                     **extra))
    rounds.write(path, records)


if __name__ == "__main__":
    sys.exit(main())
