#!/usr/bin/env python3
"""decode.py: a greedy decode loop in PyTorch, the same loop in cfx, checked equal token for
token, and timed side by side.

    python3 python/examples/decode.py [--vocab 2048] [--hidden 256] [--steps 64] [--quick]
                                      [--device cuda|cpu] [--repeat 20]

The loop is the one people write around a recurrent decoder: update the state from the last
token's embedding, take the argmax of the logits, stop at the end token. In PyTorch the
`if token == end` reads the token back to the host every step (`.item()`), which is where a
GPU waits; in cfx the whole loop is one graph that decides on the device. Where torch is not
installed the reference loop is written in numpy on the CPU, and cfx runs on the GPU where it
can (from its own device arrays), else on the CPU too. Exit status 1 when the two disagree.
"""
import argparse
import sys

import cfx

GRAPH = """graph decode(emb: f32[{V}, {H}], u: f32[{H}, {H}], w: f32[{V}, {H}], start: i32,
                    end_token: i32) -> (tokens: i32[{T}], length: i32) {{
  tokens = full(i32[{T}], -1)
  h = zeros(f32[{H}])
  token = start
  length = 0
  for t in range(0, {T}) {{
    h = tanh(emb[token] + u @ h)
    token = argmax(w @ h)
    tokens[t] = token
    length += 1
    if token == end_token {{
      break
    }}
  }}
}}
"""


def torch_decode(torch, emb, u, w, start, end_token, steps):
    tokens = torch.full((steps,), -1, dtype=torch.int32, device=emb.device)
    h = torch.zeros(emb.shape[1], device=emb.device)
    token, length = start, 0
    for t in range(steps):
        h = torch.tanh(emb[token] + u @ h)
        token = int(torch.argmax(w @ h)) # the host reads the token: one sync per step
        tokens[t] = token
        length += 1
        if token == end_token:
            break
    return tokens, length


def numpy_decode(np, emb, u, w, start, end_token, steps):
    tokens = np.full(steps, -1, dtype=np.int32)
    h = np.zeros(emb.shape[1], dtype=np.float32)
    token, length = start, 0
    for t in range(steps):
        h = np.tanh(emb[token] + u @ h)
        token = int(np.argmax(w @ h))
        tokens[t] = token
        length += 1
        if token == end_token:
            break
    return tokens, length


def weights(np, vocab, hidden, seed):
    """Random weights whose state does not blow up (u is a contraction), so a token is a
    clear argmax rather than a coin toss between two libraries' roundings."""
    rng = np.random.default_rng(seed)
    emb = rng.standard_normal((vocab, hidden)).astype(np.float32)
    u = (rng.standard_normal((hidden, hidden)) * (0.5 / hidden ** 0.5)).astype(np.float32)
    w = rng.standard_normal((vocab, hidden)).astype(np.float32)
    return emb, u, w


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--device", choices=["cuda", "cpu"], default=None,
                    help="default: cuda where torch and cfx both have it")
    ap.add_argument("--quick", action="store_true", help="small sizes and few repeats (a test)")
    args = ap.parse_args()
    if args.quick:
        args.vocab, args.hidden, args.steps, args.repeat = 64, 16, 16, 3
    try:
        import numpy as np
    except ImportError:
        print("decode.py needs numpy for its weights (python3 -m pip install numpy)")
        return 77
    try:
        import torch
    except ImportError:
        torch = None
    cuda_ok = cfx.backends()["cuda-persistent"][0]
    device = args.device or ("cuda" if cuda_ok else "cpu")
    if device == "cuda" and not cuda_ok:
        print("--device cuda needs cfx built with CUDA on a machine with a GPU")
        return 1
    if torch is not None and device == "cuda" and not torch.cuda.is_available():
        torch = None # torch without CUDA: the numpy loop on the host is the reference

    V, H, T = args.vocab, args.hidden, args.steps
    emb, u, w = weights(np, V, H, seed=7)
    end = V # no token is V: every run decodes all T steps, the same work each repeat
    g = cfx.compile(GRAPH.format(V=V, H=H, T=T), filename="decode.cfx").entry

    if torch is not None:
        name = "torch " + device
        emb, u, w = (torch.from_numpy(a).to(device) for a in (emb, u, w))
        ref = lambda: torch_decode(torch, emb, u, w, 1, end, T)
    else:
        name = "numpy"
        host = (emb, u, w)
        ref = lambda: numpy_decode(np, *host, 1, end, T)
        if device == "cuda": # cfx on the device, from its own device arrays
            emb, u, w = (cfx.tensor(a, device="cuda") for a in host)

    # the same answer first
    want_tokens, want_length = ref()
    out = g(emb=emb, u=u, w=w, start=1, end_token=end) # torch in, torch out (numpy: numpy)
    got, want = out["tokens"].tolist(), want_tokens.tolist()
    if got != want or int(out["length"]) != want_length:
        first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), None)
        print("MISMATCH: cfx and %s differ first at step %s:\n  cfx  %s\n  %s %s"
              % (name, first, got, name, want))
        return 1
    print("decode V=%d H=%d T=%d: cfx (%s) and %s agree on all %d tokens"
          % (V, H, T, out.backend, name, want_length))

    # then the time: medians after warm-ups, CUDA events on the GPU
    dev = device if device == "cuda" and torch is not None else None
    t_cfx = g.benchmark(emb=emb, u=u, w=w, start=1, end_token=end, repeat=args.repeat)
    t_ref = cfx.bench(ref, repeat=args.repeat, device=dev)
    print("%-14s %10s %12s" % ("", "median ms", "us per step"))
    for label, t in (("cfx " + out.backend, t_cfx), (name, t_ref)):
        print("%-14s %10.3f %12.2f" % (label[:14], t.median_ms, 1e3 * t.median_ms / T))
    print("cfx is %.1fx the speed of the %s loop (%s)" % (t_ref.median_ms / t_cfx.median_ms, name, t_cfx.clock))
    return 0


if __name__ == "__main__":
    sys.exit(main())
