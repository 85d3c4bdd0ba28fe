"""Compiled calls that Ctrl-C can stop.

XLA gives no way to cancel a running computation, and a thread blocked in jaxlib's C++
(XLA:CPU runs a cheap-looking program inline, in the calling thread; a wait for results
blocks in C++ too) never returns to the interpreter, so Python's SIGINT handler cannot
run: a traced ``while`` that never ends would hold the process for good.

`run_interruptibly` therefore runs such a call on a worker thread, waits for it *and for
its results to be ready* there, and keeps the main thread in a wait that signals
interrupt.  On Ctrl-C the caller gets `KeyboardInterrupt` at once and the process stays
usable; the computation itself runs on in the background until it ends (forever, for an
infinite loop: one core stays busy), on a daemon thread that never delays the process's
exit.  `StagedFunction` uses this for programs with a loop; loop-free programs end in
time bounded by their size and keep jaxlib's direct dispatch.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from jax import tree_util

_POLL_SECONDS = 0.1   # the main thread's wait wakes this often to let a signal in


class _Job:
    __slots__ = ("fn", "args", "done", "value", "error")

    def __init__(self, fn: Callable, args: tuple):
        self.fn, self.args = fn, args
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.value = _ready(self.fn(*self.args))
        except BaseException as err:   # handed to the waiting thread, which re-raises it
            self.error = err
        finally:
            self.done.set()


class _Worker(threading.Thread):
    """A daemon thread running jobs; it goes back to the idle pool after each one, so a
    worker stuck in a never-ending computation is simply never reused."""

    def __init__(self):
        super().__init__(name="psc-execute", daemon=True)
        self._jobs: list[_Job] = []
        self._wake = threading.Condition()

    def submit(self, job: _Job) -> None:
        with self._wake:
            self._jobs.append(job)
            self._wake.notify()

    def run(self) -> None:
        while True:
            with self._wake:
                while not self._jobs:
                    self._wake.wait()
                job = self._jobs.pop()
            job.run()
            with _idle_lock:
                _idle.append(self)


_idle: list[_Worker] = []
_idle_lock = threading.Lock()


def _worker() -> _Worker:
    with _idle_lock:
        if _idle:
            return _idle.pop()
    worker = _Worker()
    worker.start()
    return worker


def _ready(result):
    """``result`` once every array in it has been computed."""
    for leaf in tree_util.tree_leaves(result):
        block = getattr(leaf, "block_until_ready", None)
        if block is not None:
            block()
    return result


def run_interruptibly(fn: Callable, *args):
    """``fn(*args)`` with its resulting arrays computed, interruptible by Ctrl-C.

    Off the main thread (where signals are never delivered) it simply runs there.
    """
    if threading.current_thread() is not threading.main_thread():
        return _ready(fn(*args))
    job = _Job(fn, args)
    _worker().submit(job)
    while not job.done.wait(_POLL_SECONDS):
        pass
    if job.error is not None:
        raise job.error.with_traceback(job.error.__traceback__)
    return job.value


def has_loop(region) -> bool:
    """Whether ``region`` (an IR region) or a region nested in it holds a ``while``."""
    for op in region.operations:
        if op.name == "while" or any(has_loop(r) for r in op.regions):
            return True
    return False
