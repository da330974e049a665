"""cfx on ONNX models against ONNX Runtime and eager PyTorch, per loop iteration, in one run.

    python3 profiling/onnx_bench.py BUILD_DIR [--small] [--repeats N] [--backend B]

Greedy decoding and CG as ONNX Loops (profiling/onnx_models.py, the graphs of profiling/bench),
and greedy decoding with a small transformer decoder (two layers of attention and MLP over a
buffer of 64 tokens, recomputed at every step as an exporter writes it),
run by `cfx run MODEL.onnx` (the cpu executor here; with a GPU, --backend cuda-persistent), by
ONNX Runtime (its CPU provider, and CUDAExecutionProvider where onnxruntime-gpu has it), and by
the same loop in eager PyTorch where torch is installed. Each is timed at two iteration counts
and the time per iteration is the difference over the extra iterations, so start-up, import and
session creation fall out; every result is checked against the others before it is timed. The
table gives the median over the repeats and the ratio to ONNX Runtime's CPU provider, measured
in the same run. Missing peers are reported, not failed.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_models  # noqa: E402


def greedy_inputs(vocab, hidden, rng):
    return {
        "W": rng.standard_normal((vocab, hidden)).astype(np.float32),
        "M": (rng.standard_normal((hidden, hidden)) * (0.9 / np.sqrt(hidden))).astype(np.float32),
        "E": rng.standard_normal((vocab, hidden)).astype(np.float32),
        "h0": np.zeros(hidden, np.float32),
        "start": np.array(1, np.int32),
        "eos": np.array(-1, np.int32),  # no argmax is -1: the loop runs max_len steps
    }


def cg_inputs(n, rng):
    q = rng.standard_normal((n, n)).astype(np.float32) / np.sqrt(n)
    a = (q @ q.T + 4 * np.eye(n, dtype=np.float32)).astype(np.float32)  # SPD, well conditioned
    return {"A": a, "b": rng.standard_normal(n).astype(np.float32), "tol": np.array(0, np.float32)}


def run_cfx(build, model, feeds, outs, backend, workdir):
    args = [os.path.join(build, "cfx"), "run", model, "--backend", backend]
    for k, v in feeds.items():
        path = os.path.join(workdir, k + ".npy")
        np.save(path, v)
        args += ["--in", "%s=%s" % (k, path)]
    files = []
    for k in outs:
        path = os.path.join(workdir, "out_" + k + ".npy")
        files.append(path)
        args += ["--out", "%s=%s" % (k, path)]
    t = time.perf_counter()
    p = subprocess.run(args, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if p.returncode != 0:
        raise RuntimeError("cfx: " + p.stderr.strip())
    return dt, [np.load(f) for f in files]


def ort_session(model, provider):
    import onnxruntime as ort
    return ort.InferenceSession(model, providers=[provider])


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def torch_greedy(feeds, steps):
    import torch
    W, M, E = (torch.from_numpy(feeds[k]) for k in ("W", "M", "E"))
    h = torch.from_numpy(feeds["h0"]).clone()
    tok, toks = int(feeds["start"]), []
    for _ in range(steps):
        h = torch.tanh(M @ h + E[tok])
        tok = int(torch.argmax(W @ h))
        if tok == int(feeds["eos"]):
            break
        toks.append(tok)
    return toks


def torch_cg(feeds, steps):
    import torch
    A, b = torch.from_numpy(feeds["A"]), torch.from_numpy(feeds["b"])
    x = torch.zeros_like(b)
    r, p = b.clone(), b.clone()
    rr = torch.dot(r, r)
    for _ in range(steps):
        Ap = A @ p
        alpha = rr / torch.dot(p, Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rr_next = torch.dot(r, r)
        p = r + (rr_next / rr) * p
        rr = rr_next
    return x.numpy()


def torch_decoder(feeds, steps, wts, layers, heads):
    """onnx_models.decoder's loop in eager PyTorch, with the same weights."""
    import torch
    w = {k: torch.from_numpy(v) for k, v in wts.items()}
    length, dim = w["P"].shape
    dh = dim // heads
    mask = torch.where(torch.tril(torch.ones(length, length, dtype=torch.bool)), 0.0, -1e9)
    toks = torch.zeros(length, dtype=torch.int64)
    toks[0] = int(feeds["prompt"])
    ln = torch.nn.functional.layer_norm
    for pos in range(1, steps + 1):
        x = w["E"][toks] + w["P"]
        for l in range(layers):
            a = ln(x, (dim,), w["g1_%d" % l], w["b1_%d" % l])
            q, k, v = (t.reshape(length, heads, dh).transpose(0, 1) for t in (a @ w["Wqkv_%d" % l]).split(dim, 1))
            p = torch.softmax(q @ k.transpose(1, 2) * (1 / dh ** 0.5) + mask, -1)
            x = x + (p @ v).transpose(0, 1).reshape(length, dim) @ w["Wo_%d" % l]
            f = torch.relu(ln(x, (dim,), w["g2_%d" % l], w["b2_%d" % l]) @ w["W1_%d" % l] + w["c1_%d" % l])
            x = x + f @ w["W2_%d" % l]
        y = ln(x, (dim,), w["gf"], w["bf"])
        toks[pos] = torch.argmax(y[pos - 1] @ w["Wout"])
    return toks.numpy()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--small", action="store_true", help="small sizes (a quick check)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--backend", default="cpu", help="cfx's backend (default cpu)")
    ap.add_argument("--json", help="write the rows here as a round's records (profiling/rounds.py)")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    V, H, L, N = (512, 32, 16, 64) if args.small else (32768, 256, 128, 1024)
    glo, ghi = (L // 4, L) if args.small else (16, 128)  # steps of greedy decoding and CG
    work = tempfile.mkdtemp(prefix="cfx_onnx_bench_")
    # the decoder: vocabulary, width, heads, layers, tokens (length - 1 steps at most)
    dec = (64, 32, 2, 1, 16) if args.small else (1024, 128, 4, 2, 64)
    dec_w = onnx_models.decoder_weights(dec[0], dec[1], dec[3], dec[4])
    models = {
        "greedy_decode": (onnx_models.greedy_decode(V, H, L), greedy_inputs(V, H, rng), "max_len",
                          ["tokens", "length"], (glo, ghi), torch_greedy),
        "cg": (onnx_models.cg(N), cg_inputs(N, rng), "max_iters", ["x", "iters", "rr"], (glo, ghi), torch_cg),
        "decoder": (onnx_models.decoder(*dec), {"prompt": np.array(3, np.int64)}, "steps", ["tokens"],
                    (dec[4] // 4, dec[4] - 1), lambda f, n: torch_decoder(f, n, dec_w, dec[3], dec[2])),
    }
    try:
        import onnxruntime as ort
        providers = [p for p in ("CPUExecutionProvider", "CUDAExecutionProvider")
                     if p in ort.get_available_providers()]
    except ImportError:
        providers = []
        print("onnxruntime: not installed")
    missing = []  # (provider, why): rows of their own in the records
    if "CUDAExecutionProvider" not in providers:
        missing.append(("CUDAExecutionProvider", "not available: this onnxruntime has %s (the CUDA EP "
                        "comes with the onnxruntime-gpu package)" % (", ".join(providers) or "no provider")))
        print("onnxruntime: CUDAExecutionProvider %s" % missing[-1][1])
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
        print("torch: not installed (the eager PyTorch column is left out)")
    import onnx
    rows = []
    failures = []  # (graph, runner, why)
    for name, (model, feeds, count_input, outs, (lo, hi), torch_fn) in models.items():
        path = os.path.join(work, name + ".onnx")
        onnx.save(model, path)
        results = {}

        def at(n):
            f = dict(feeds)
            f[count_input] = np.array(n, np.int32)
            return f

        # cfx, at two iteration counts (a failure is reported and the others still run)
        times = {lo: [], hi: []}
        try:
            for _ in range(args.repeats):
                for n in (lo, hi):
                    dt, out = run_cfx(args.build, path, at(n), outs, args.backend, work)
                    times[n].append(dt)
                    if n == hi:
                        results["cfx " + args.backend] = out
            per = (statistics.median(times[hi]) - statistics.median(times[lo])) / (hi - lo)
            rows.append((name, "cfx " + args.backend, per))
        except RuntimeError as e:
            msg = (str(e).strip().splitlines() or ["failed"])[0][:200]
            print("%s: cfx %s does not run: %s" % (name, args.backend, msg))
            failures.append((name, "cfx " + args.backend, msg))
        for prov in providers:
            s = ort_session(path, prov)
            times = {lo: [], hi: []}
            for _ in range(args.repeats):
                for n in (lo, hi):
                    dt, out = timed(lambda: s.run(None, at(n)))
                    times[n].append(dt)
                    if n == hi:
                        results["onnxruntime " + prov] = out
            per = (statistics.median(times[hi]) - statistics.median(times[lo])) / (hi - lo)
            rows.append((name, "onnxruntime " + prov.replace("ExecutionProvider", ""), per))
        if have_torch:
            times = {lo: [], hi: []}
            for _ in range(args.repeats):
                for n in (lo, hi):
                    dt, out = timed(lambda: torch_fn(at(n), n))
                    times[n].append(dt)
                    if n == hi and name == "decoder":
                        results["pytorch eager (cpu)"] = [out]
            per = (statistics.median(times[hi]) - statistics.median(times[lo])) / (hi - lo)
            rows.append((name, "pytorch eager (cpu)", per))
        # every runner agrees before its time is reported
        ref = results.get("onnxruntime CPUExecutionProvider")
        for who, out in results.items():
            if ref is None:
                break
            for a, b in zip(out, ref):
                if a.dtype.kind == "f":
                    ok = np.allclose(a, b, rtol=1e-3, atol=1e-4)
                else:
                    ok = np.array_equal(a, b)
                if not ok:  # its time is not reported; the run's status becomes 1
                    print("%s: FAIL: %s disagrees with onnxruntime" % (name, who))
                    rows[:] = [r for r in rows if not (r[0] == name and r[1] == who.replace("ExecutionProvider", ""))]
                    failures.append((name, who, "FAIL: disagrees with onnxruntime"))
                    break
    base = {name: per for name, who, per in rows if who == "onnxruntime CPU"}
    print("\n%-14s %-28s %14s %10s" % ("graph", "runner", "us/iteration", "vs ORT cpu"))
    noisy = False
    for name, who, per in rows:
        ratio = base.get(name)
        if per <= 0:  # the longer run's median no slower: the iterations are lost in a run's noise
            noisy = True
            print("%-14s %-28s %14s %10s" % (name, who, "noise", "-"))
            continue
        print("%-14s %-28s %14.2f %10s" % (name, who, per * 1e6, "%.2fx" % (ratio / per) if ratio else "-"))
    if noisy:
        print("\n(noise: the run of more iterations was no slower, by the medians, than the shorter one: "
              "a busy machine, or iterations far cheaper than a run's start; give more --repeats)")
    if args.json:
        write_records(args.json, rows, missing + failures, N, args.small)
    print("\n(ratio: ONNX Runtime CPU's time over this runner's; above 1 is faster. Sizes: vocabulary "
          "%d, state %d, %d vs %d steps; CG %d, %d vs %d iterations; decoder: vocabulary %d, width %d, %d "
          "heads, %d layers, %d tokens, %d vs %d steps; median of %d)" %
          (V, H, glo, ghi, N, glo, ghi, dec[0], dec[1], dec[2], dec[3], dec[4], dec[4] // 4, dec[4] - 1, args.repeats))
    return 1 if any(f[2].startswith("FAIL") for f in failures) else 0


def write_records(path, rows, missing, n, small):
    """The rows as a round's records (profiling/rounds.py): graph the benchmark's name (cg at
    n = 1024 is cg_1024; greedy_decode at the full size is the benchmark's), backend "onnxruntime"
    with its provider as the mode, cfx with mode "onnx import"."""
    import rounds
    m = rounds.meta()
    records = []
    graph = {"greedy_decode": "greedy_decode_small" if small else "greedy_decode", "cg": "cg_%d" % n,
             "decoder": "onnx_decoder_small" if small else "onnx_decoder"}
    for name, who, per in rows:
        if who.startswith("cfx "):
            b, mode = who[4:], "onnx import"
        elif who.startswith("onnxruntime "):
            b, mode = "onnxruntime", who.split(" ", 1)[1] + "ExecutionProvider"
        else:
            b, mode = "torch", "eager (cpu)"
        if per <= 0:  # lost in the noise (the table says so): no time to record
            records.append(rounds.record(m, "row", "onnx_bench", graph[name], b, mode, "noise", None))
            continue
        records.append(rounds.record(m, "row", "onnx_bench", graph[name], b, mode, "ok", per * 1e6,
                                     floor=None, floor_us_per_iter=None, predicted_us_per_iter=None))
    for item in missing:
        if len(item) == 2:  # a provider missing: a row for each graph
            for name in graph.values():
                records.append(rounds.record(m, "row", "onnx_bench", name, "onnxruntime", item[0], item[1], None))
        else:  # a runner failed on one graph
            name, who, why = item
            b, mode = (who[4:], "onnx import") if who.startswith("cfx ") else \
                ("onnxruntime", who.split(" ", 1)[1]) if who.startswith("onnxruntime ") else ("torch", "eager (cpu)")
            records.append(rounds.record(m, "row", "onnx_bench", graph[name], b, mode,
                                         why if why.startswith("FAIL") else "error: " + why, None))
    rounds.write(path, records)


if __name__ == "__main__":
    sys.exit(main())
