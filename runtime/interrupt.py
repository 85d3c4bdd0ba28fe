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
exit.  `StagedFunction` uses this for programs that may run long (`may_run_long`): a loop
whose trip count is not known when the program is built, or loops whose known bounds add
up to much work; loop-free programs, and short bounded loops, end in bounded time and keep
jaxlib's direct dispatch.
"""
from __future__ import annotations

import _thread
import threading
from typing import Callable

from jax import tree_util

_POLL_SECONDS = 0.1   # the main thread's wait wakes this often to let a signal in


class _Worker:
    """A daemon thread that runs one call at a time for the main thread.

    The hand-off uses two raw locks rather than `threading.Event`/`Condition` (whose
    Python-level bookkeeping doubled the cost of a call that does almost nothing): ``_go``
    is released to start a call, ``_done`` by the worker when the call has ended.  A worker
    goes back to the idle pool *before* it releases ``_done``, so a worker stuck in a
    never-ending computation is simply never reused, and the waiting thread never has to
    wait for the worker to let go of the interpreter.
    """

    __slots__ = ("_go", "_done", "_fn", "_args", "_value", "_error")

    def __init__(self):
        self._go = _thread.allocate_lock()
        self._done = _thread.allocate_lock()
        self._go.acquire()
        self._done.acquire()
        self._fn = self._args = self._value = self._error = None
        _thread.start_new_thread(self._serve, ())   # a daemon: never delays the exit

    def _serve(self) -> None:
        while True:
            self._go.acquire()
            try:
                self._value = _ready(self._fn(*self._args))
            except BaseException as err:   # handed to the waiting thread, which re-raises it
                self._error = err
            self._fn = self._args = None
            with _idle_lock:
                _idle.append(self)
            self._done.release()

    def call(self, fn: Callable, args: tuple):
        self._fn, self._args, self._value, self._error = fn, args, None, None
        self._go.release()
        try:
            while not self._done.acquire(True, _POLL_SECONDS):
                pass
        except BaseException:   # Ctrl-C: abandon this worker, even if it just finished
            with _idle_lock:
                if self in _idle:
                    _idle.remove(self)
            raise
        value, error = self._value, self._error
        self._value = self._error = None
        if error is not None:
            raise error.with_traceback(error.__traceback__)
        return value


_idle: list[_Worker] = []
_idle_lock = threading.Lock()


def _worker() -> _Worker:
    with _idle_lock:
        if _idle:
            return _idle.pop()
    return _Worker()


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
    return _worker().call(fn, args)


# Work (element operations, summed over loop iterations) below which a program whose loops
# all have a bound known when it is built runs on the calling thread: such a call ends
# within about a second, like a loop-free one, and skips the hand-off to a worker (tens of
# microseconds, which is most of the cost of a short loop).
BOUNDED_WORK = 10 ** 8


def may_run_long(region) -> bool:
    """Whether a call of ``region`` (an IR region) should wait on a worker: it holds a loop
    whose trip count is unknown when the program is built, or its bounded loops together do
    more than `BOUNDED_WORK` element operations."""
    if not _has_loop(region):
        return False
    work = _work(region)
    return work is None or work > BOUNDED_WORK


def _has_loop(region) -> bool:
    for op in region.operations:
        if op.name == "while" or any(_has_loop(r) for r in op.regions):
            return True
    return False


def _work(region) -> int | None:
    """Element operations one run of ``region`` does at most; None when unbounded."""
    total = 0
    for op in region.operations:
        if op.name == "while":
            trips = op.attrs.get("trip_count") or op.attrs.get("max_trip_count")
            inner = [_work(r) for r in op.regions]
            if trips is None or None in inner:
                return None
            total += int(trips) * (sum(inner) + 1)
        elif op.regions:   # a conditional runs one branch: count the costliest
            inner = [_work(r) for r in op.regions]
            if None in inner:
                return None
            total += max(inner) + 1
        else:
            total += max((_elements(v.shape) for v in op.results), default=1)
    return total


def _elements(shape) -> int:
    count = 1
    for dim in shape:
        count *= int(dim)
    return max(count, 1)
