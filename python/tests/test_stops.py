"""Runs that stop: every status as cfx.RunStopped with its message and position, the
iteration budget, cancel from another thread and Ctrl-C. Positions are counted by hand in the
sources below (line:column of the statement that stops)."""
import os
import signal
import threading
import time

import pytest

import cfx

STOPS = """graph stops(kind: i32, n: i32) -> (y: i32) {
  y = 0
  xs = zeros(i32[3])
  if kind == 0 {
    assert(n > 0, "n must be positive")
  } elif kind == 1 {
    y = xs[n]
  } elif kind == 2 {
    y = 10 // n
  } else {
    for i in range(0, 10, n) {
      y += i
    }
  }
}
"""

SPIN = """graph spin(x: i32) -> (y: i32) {
  y = x
  while y >= 0 {
    y = y % 7 + 1
  }
}
"""


@pytest.fixture(scope="module")
def stops():
    return cfx.compile(STOPS, filename="stops.cfx").entry


@pytest.mark.parametrize("kind, n, status, position, text", [
    (0, 0, "assert", (5, 5), "assert: n must be positive"),
    (1, 3, "index", (7, 5), "index: 'xs' has 3 rows, index was 3"),
    (2, 0, "divide", (9, 5), "divide: integer division by zero"),
    (3, 0, "value", (11, 5), "value: range step is 0"),
])
def test_each_stop(stops, kind, n, status, position, text):
    with pytest.raises(cfx.RunStopped) as info:
        stops(kind=kind, n=n)
    e = info.value
    assert e.status == status
    assert (e.file, e.line, e.col) == ("stops.cfx",) + position
    assert str(e) == e.message
    assert e.message == "stops.cfx:%d:%d: run stopped: %s" % (position + (text,))
    assert isinstance(e, cfx.Error)
    # the executor runs again after a stop
    assert stops(kind=kind, n=1, results="python")["y"] == {0: 0, 1: 0, 2: 10, 3: 45}[kind]


def test_limit(stops):
    # kind 3, n = 1: range(0, 10, 1) takes 10 iterations; a budget of 4 stops before the 5th
    with pytest.raises(cfx.RunStopped) as info:
        stops(kind=3, n=1, max_iters=4)
    assert info.value.status == "limit" and info.value.iterations == 4
    assert (info.value.line, info.value.col) == (11, 5)
    assert stops(kind=3, n=1, max_iters=10, results="python")["y"] == 45
    with pytest.raises(ValueError, match="max_iters must be 0"):
        stops(kind=3, n=1, max_iters=-1)


def test_cancel_from_another_thread():
    g = cfx.compile(SPIN).entry
    timer = threading.Timer(0.2, g.cancel)
    timer.start()
    t0 = time.monotonic()
    with pytest.raises(cfx.RunStopped) as info:
        g(x=0, max_iters=10 ** 12)
    assert info.value.status == "cancelled"
    assert time.monotonic() - t0 < 30
    assert info.value.iterations > 0


def _interrupt_when_running(g):
    """A thread that sends SIGINT once g's run has begun (on a loaded machine the compile and the
    binding can take longer than any fixed delay, and a SIGINT before the run is an ordinary
    KeyboardInterrupt in Python code, not the cancel this tests)."""
    def wait_then_kill():
        deadline = time.monotonic() + 30
        while g._running is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)
        os.kill(os.getpid(), signal.SIGINT)
    return threading.Thread(target=wait_then_kill, daemon=True)


def test_ctrl_c_cancels_the_run():
    g = cfx.compile(SPIN).entry
    # a safety net: should SIGINT not reach the run, it is cancelled after 20 s and the test fails
    rescue = threading.Timer(20, g.cancel)
    rescue.start()
    sigint = _interrupt_when_running(g)
    t0 = time.monotonic()
    # Python's own handler, as in an interactive session: a process started in the background
    # by a shell without job control begins with SIGINT ignored, and Python then installs none
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    sigint.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            g(x=0)
            time.sleep(5) # the interrupt lands here if the run ended some other way
    finally:
        rescue.cancel()
        sigint.join()
        signal.signal(signal.SIGINT, before)
    assert time.monotonic() - t0 < 10
    # the run was cancelled, not left running: the graph runs again at once
    assert g(x=-1, results="python")["y"] == -1


def test_ctrl_c_with_a_handler_that_does_not_raise():
    g = cfx.compile(SPIN).entry
    seen = []
    before = signal.signal(signal.SIGINT, lambda *a: seen.append(a[0]))
    try:
        _interrupt_when_running(g).start()
        with pytest.raises(cfx.RunStopped) as info:
            g(x=0, max_iters=10 ** 12)
        assert info.value.status == "cancelled"
    finally:
        signal.signal(signal.SIGINT, before)
    assert seen == [signal.SIGINT] # the application's handler still ran


def test_python_wakeup_fd_is_passed_on():
    """A wakeup fd the application had (asyncio's) still sees the signal, and is set again
    after the run."""
    g = cfx.compile(SPIN).entry
    r, w = os.pipe()
    os.set_blocking(w, False)
    before = signal.signal(signal.SIGINT, lambda *a: None)
    old = signal.set_wakeup_fd(w)
    try:
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
        with pytest.raises(cfx.RunStopped):
            g(x=0, max_iters=10 ** 12)
        assert signal.set_wakeup_fd(w) == w
        os.set_blocking(r, False)
        time.sleep(0.05)
        assert os.read(r, 16) == bytes([signal.SIGINT])
    finally:
        signal.set_wakeup_fd(old)
        signal.signal(signal.SIGINT, before)
        os.close(r)
        os.close(w)
