"""_bench.py: timings as medians over repeats after warm-ups, so a user can set a cfx graph
beside the loop it replaces (README: "From Python").

On a CUDA device the times come from CUDA events recorded on the stream the work runs on
(torch.cuda.Event where torch is there, else the CUDA runtime cfx loaded); the wall clock is
kept beside them. On the host, the wall clock alone.
"""
import statistics
import sys
import time

from . import _core


class Timing:
    """Times of one piece of work in milliseconds: .median_ms, .min_ms, .max_ms, .times_ms
    (each repeat), .clock ("cuda events" or "wall"), .wall_median_ms, and .results (the last
    run's results, for a graph)."""

    def __init__(self, times, walls, clock, results=None):
        self.times_ms = list(times)
        self.median_ms = statistics.median(times)
        self.min_ms = min(times)
        self.max_ms = max(times)
        self.wall_median_ms = statistics.median(walls)
        self.clock = clock
        self.results = results

    def __repr__(self):
        return "Timing(median %.4g ms, min %.4g ms over %d repeats, %s)" % (
            self.median_ms, self.min_ms, len(self.times_ms), self.clock)


class _Events:
    """Start and end events on one stream: torch's where torch is loaded, else the CUDA
    runtime's."""

    def __init__(self, stream, device_id):
        self.torch = None
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            self.torch = torch
            if stream is None:
                self.stream = torch.cuda.current_stream(device_id)
            elif stream == 1: # the legacy default stream: torch's default stream
                self.stream = torch.cuda.default_stream(device_id)
            else:
                self.stream = torch.cuda.ExternalStream(stream, device=device_id)
            self.start = torch.cuda.Event(enable_timing=True)
            self.end = torch.cuda.Event(enable_timing=True)
        else:
            from . import _cuda
            self.rt = _cuda.runtime()
            self.stream = stream if stream is not None else _cuda.LEGACY_STREAM
            self.start, self.end = self.rt.event(), self.rt.event()

    def record(self, which):
        ev = self.start if which == 0 else self.end
        if self.torch is not None:
            ev.record(self.stream)
        else:
            self.rt.record(ev, self.stream)

    def elapsed_ms(self):
        if self.torch is not None:
            self.end.synchronize()
            return self.start.elapsed_time(self.end)
        return self.rt.elapsed_ms(self.start, self.end)

    def close(self):
        if self.torch is None:
            self.rt.destroy_event(self.start)
            self.rt.destroy_event(self.end)


def _measure(fn, warmup, repeat, events):
    if repeat < 1 or warmup < 0:
        raise ValueError("repeat must be at least 1 and warmup at least 0")
    last = None
    for _ in range(warmup):
        last = fn()
    times, walls = [], []
    for _ in range(repeat):
        if events:
            events.record(0)
        t0 = time.perf_counter()
        last = fn()
        if events:
            events.record(1)
            times.append(events.elapsed_ms())
        walls.append((time.perf_counter() - t0) * 1e3)
    return (times or walls), walls, last


def bench(fn, *, warmup=3, repeat=20, device=None, stream=None):
    """Times fn() (any Python callable: a PyTorch loop, a cfx graph call) and returns a
    Timing. device "cuda" or "cuda:N" (or a stream) times it with CUDA events on `stream`
    (default: torch's current stream, else the legacy default stream), after which each
    repeat waits for the stream; otherwise the wall clock."""
    from ._dlpack import parse_device
    handle = _core.stream_handle(stream)
    device_id = parse_device(device)
    if device_id is None and handle is None:
        times, walls, last = _measure(fn, warmup, repeat, None)
        return Timing(times, walls, "wall", last)
    events = _Events(handle, device_id or 0)
    try:
        times, walls, last = _measure(fn, warmup, repeat, events)
    finally:
        events.close()
    return Timing(times, walls, "cuda events", last)


def bench_graph(graph, args, kwargs, warmup, repeat):
    """Graph.benchmark: the warm-ups say which stream and device the runs take."""
    run = lambda: graph(*args, **kwargs)
    last = run() # also the first warm-up: it creates the executor
    warmup = max(warmup - 1, 0)
    stream, device_id = graph.last_stream, graph.last_device
    if device_id is None: # host arrays: cfx's own copies and stream are part of the time
        times, walls, last = _measure(run, warmup, repeat, None)
        return Timing(times, walls, "wall", last)
    events = _Events(stream, device_id or 0)
    try:
        times, walls, last = _measure(run, warmup, repeat, events)
    finally:
        events.close()
    return Timing(times, walls, "cuda events", last)
