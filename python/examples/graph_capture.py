#!/usr/bin/env python3
"""graph_capture.py: greedy decoding with cfx inside a PyTorch CUDA graph.

    python3 python/examples/graph_capture.py [--vocab 2048] [--hidden 256] [--steps 64]
                                             [--replays 100] [--backend cuda-graph]

An application that captures its step into a CUDA graph (torch.cuda.graph) can put a cfx call
inside it: the whole decode loop, with its data-dependent stop at the end token, becomes part of
the application's graph, and a replay runs it again on whatever the captured input tensors hold
then, with no host round trip and no launch from Python (docs/persistent.md, "Inside the
application's graph").

The rules, which the package checks and says when broken:
  1. warm up first: one call outside the capture, with the same tensors' shapes, makes the
     executor and builds its kernels and graphs (a call under capture never allocates, builds
     or synchronizes);
  2. inside the capture every input is a tensor on the GPU (a Python number would be copied from
     the host at the capture, not at each replay); the results are torch tensors allocated
     from the graph's pool, which each replay writes again;
  3. the graph must not print (the host writes prints out after a run), and cuda-host cannot be
     captured (it brings each decision back to the host).

Each replay here decodes from a new start token written into the captured `start` tensor, and is
checked against the same loop in PyTorch run eagerly (the graph and that loop are decode.py's,
beside this file). Needs a CUDA GPU and torch; exit status 1 when a replay disagrees."""
import argparse
import sys

import cfx

from decode import GRAPH, torch_decode as eager_decode  # the graph and its eager loop: decode.py's


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--replays", type=int, default=100)
    ap.add_argument("--backend", default="cuda-graph", choices=["cuda-graph", "cuda-persistent"])
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("graph_capture.py needs torch with CUDA")
        return 0
    if not torch.cuda.is_available():
        print("graph_capture.py needs a CUDA GPU")
        return 0

    V, H, T = args.vocab, args.hidden, args.steps
    decode = cfx.compile(GRAPH.format(V=V, H=H, T=T)).entry
    g = torch.Generator(device="cuda").manual_seed(0)
    emb = torch.randn(V, H, device="cuda", generator=g)
    u = torch.randn(H, H, device="cuda", generator=g) / H ** 0.5
    w = torch.randn(V, H, device="cuda", generator=g)
    # the captured inputs: a replay reads whatever they hold when it runs
    start = torch.zeros((), dtype=torch.int32, device="cuda")
    end_token = torch.zeros((), dtype=torch.int32, device="cuda")

    # 1. warm up on a side stream, as torch.cuda.graph's own examples do
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        decode(emb, u, w, start, end_token, backend=args.backend)
    torch.cuda.current_stream().wait_stream(side)

    # 2. capture one step that decodes; its results are tensors of the graph's pool
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = decode(emb, u, w, start, end_token, backend=args.backend)
        tokens, length = out["tokens"], out["length"]

    # 3. replay with new inputs written into the captured tensors
    bad = 0
    for r in range(args.replays):
        first = r % V
        start.fill_(first)
        end_token.fill_((first * 7 + 3) % V)
        graph.replay()
        torch.cuda.synchronize()
        decode.captured_status(args.backend)  # raises if the replay's run stopped
        want_tokens, want_length = eager_decode(torch, emb, u, w, first, (first * 7 + 3) % V, T)
        if int(length) != want_length or not torch.equal(tokens, want_tokens):
            bad += 1
            print("replay %d (start %d): cfx %s, torch %s" % (r, first, tokens.tolist(), want_tokens.tolist()))
    print("%d replays of the captured decode, %d disagreed with the eager loop" % (args.replays, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
