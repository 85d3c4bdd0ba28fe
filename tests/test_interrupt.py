"""Ctrl-C stops a compiled call that never ends (`runtime.interrupt`), and the process
stays usable; programs with loops still give Python's results through the worker thread."""
from __future__ import annotations

import os
import pathlib
import queue
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest

from runtime.errors import PSCTypeError
from runtime.interrupt import run_interruptibly
from transpiler import jit_ps

ROOT = pathlib.Path(__file__).resolve().parents[1]
SPIN = ROOT / "tests" / "fixtures" / "interrupt_spin.py"


def _lines(stream) -> queue.Queue:
    """The lines of ``stream`` as they come, read on a thread (so waits can time out)."""
    lines = queue.Queue()

    def read():
        for line in stream:
            lines.put(line.strip())
        lines.put(None)
    threading.Thread(target=read, daemon=True).start()
    return lines


def test_sigint_stops_a_never_ending_loop_and_the_process_goes_on():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, str(SPIN)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT)
    lines, seen = _lines(proc.stdout), []

    def expect(text):
        try:
            line = lines.get(timeout=60)
        except queue.Empty:
            line = "<nothing within 60 s>"
        seen.append(line)
        assert line == text, seen

    try:
        for attempt in range(2):
            expect(f"calling {attempt}")
            # The call is under way (compiling, then spinning); interrupt it mid-run.
            threading.Event().wait(1.5)
            proc.send_signal(signal.SIGINT)
            expect(f"interrupted {attempt}")
        expect("after [0.0, 2.0, 4.0] [-1.0, -1.0]")
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _spin_free(x):
    return x * 3.0


def _with_loop(x, n):
    i = 0
    while i < n:
        x = x * 0.5 + 1.0
        i += 1
    return x


def test_only_programs_with_loops_wait_on_a_worker():
    free = jit_ps(_spin_free)
    # device results: so that the test sees the worker wait for them (NumPy results are
    # computed by construction)
    looped = jit_ps(_with_loop, return_device_arrays=True)
    x = np.arange(4.0)
    np.testing.assert_array_equal(np.asarray(free(x)), _spin_free(x))
    assert not free._interruptible
    n = np.int64(5)   # traced: the loop is staged
    for _ in range(2):   # the compiling call, then the dispatched one
        result = looped(x, n)
        np.testing.assert_allclose(np.asarray(result), _with_loop(x, 5))
        assert result.dtype == np.float64 and result.is_ready()
    assert looped._interruptible
    assert looped.cache_info().misses == 1
    assert type(jit_ps(_with_loop)(x, n)) is np.ndarray


def test_errors_and_results_cross_the_worker_thread():
    assert run_interruptibly(lambda a, b: (a, [b]), 1, 2) == (1, [2])
    with pytest.raises(ZeroDivisionError):
        run_interruptibly(lambda: 1 / 0)
    looped = jit_ps(_with_loop)
    looped(np.ones(2), np.int64(1))
    with pytest.raises(PSCTypeError):     # a call-time error, raised on the worker
        looped(np.ones(2))


def test_off_the_main_thread_calls_run_in_place():
    looped = jit_ps(_with_loop)
    results = []
    thread = threading.Thread(target=lambda: results.append(looped(np.ones(3), np.int64(2))))
    thread.start()
    thread.join(60)
    np.testing.assert_allclose(np.asarray(results[0]), _with_loop(np.ones(3), 2))


def _short_static_loop(x):
    for _ in range(8):   # a static trip count: the call ends soon, whatever x holds
        x = x * 0.5 + 1.0
    return x


def _long_static_loop(x):
    for _ in range(2000):   # bounded, but 2000 x 10^5 elements is more than BOUNDED_WORK
        x = np.sin(x)
    return x


def test_short_bounded_loops_run_on_the_calling_thread():
    short = jit_ps(_short_static_loop)
    x = np.linspace(0.0, 1.0, 5)
    np.testing.assert_allclose(short(x), _short_static_loop(x))
    assert not short._interruptible
    long = jit_ps(_long_static_loop)
    big = np.linspace(0.0, 1.0, 10 ** 5)
    assert long.lower(big).count("stablehlo.while") == 1   # staged, not unrolled
    np.testing.assert_allclose(long(big), _long_static_loop(big))
    assert long._interruptible


def _nested_static_loops(x):
    for i in range(6):
        for j in range(4):
            if x[j] > i:   # a staged branch inside: its costlier side is counted
                x = x - 1.0
            else:
                x = x + 0.5
    return x


def test_nested_bounded_loops_with_branches_run_on_the_calling_thread():
    nested = jit_ps(_nested_static_loops)
    x = np.array([3.0, -1.0, 7.5, 0.25])
    assert nested.lower(x).count("stablehlo.while") == 2
    np.testing.assert_allclose(nested(x), _nested_static_loops(x))
    assert not nested._interruptible
