"""Large NumPy arguments on the CPU backend: zero-copy where PJRT allows it, else a fast copy.

PJRT's CPU client uses a host array's memory in place (zero-copy) only when its data
pointer is 64-byte aligned (`ALIGNMENT`, XLA:CPU's minimum buffer alignment, which its
compiled kernels assume) and the array is C-contiguous in native byte order.  Other arrays
it copies into a fresh buffer of its own, on one thread, and every 4 KiB page of that
buffer faults on first touch (it asks for no transparent huge pages; NumPy does): about
2 GB/s.  NumPy's large allocations come from ``mmap`` behind glibc's 16-byte chunk header,
so they sit 16 bytes past a page boundary and are never 64-byte aligned: without this
module every large NumPy argument took PJRT's slow copy.

`stage` gives such an array an aligned, C-contiguous, native copy instead, which PJRT then
takes zero-copy.  The copy goes into a warm pool buffer (no page faults: pages are touched
once, by the first call of that size), allocated by NumPy (huge pages where the kernel
offers them), split across threads for large arrays.  Arrays that are already aligned are
passed as they are, zero-copy.

Invariants this relies on (see also ``docs/architecture.md``, *Large NumPy inputs*):

* XLA reads a zero-copy input while the program runs and never writes it (no parameter is
  donated), and no result aliases an input (XLA copies a returned parameter).
* A call that returns NumPy results has waited for them, so the program has finished
  reading its inputs when the call returns: the caller may then mutate them.  With
  ``return_device_arrays=True`` the caller must not mutate an aligned NumPy input until
  the results are ready (as with ``jax.jit`` on CPU, which zero-copies the same arrays).
* A pool buffer is handed out again only when nothing but the pool refers to it: PJRT's
  zero-copy buffer keeps the staged array (a view of it) alive until the device buffer is
  freed, after the program's last read.  The reference count of the pool's buffer says so
  exactly (views of views keep the buffer itself as their base).
"""
from __future__ import annotations

import collections
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from jaxlib import _jax

ALIGNMENT = 64          # PJRT CPU copies host data aligned less than this
STAGE_BYTES = 1 << 20   # smaller arrays: PJRT's copy is as fast (warm heap memory, no faults)
POOL_BYTES = 1 << 30    # at most this much staging memory is kept between calls
COPY_CHUNK_BYTES = 8 << 20   # a thread per chunk of at least this size
COPY_THREADS = max(1, min(8, os.cpu_count() or 1))

_ndarray = np.ndarray
_collect_jax_garbage = _jax.collect_garbage


class StagingStats:
    """Counters (for tests and benchmarks): arrays staged, of those how many reused a pool
    buffer, and bytes copied."""

    __slots__ = ("staged", "reused", "bytes")

    def __init__(self):
        self.staged = self.reused = self.bytes = 0

    def __repr__(self):
        return f"StagingStats(staged={self.staged}, reused={self.reused}, bytes={self.bytes})"


STATS = StagingStats()


def data_pointer(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def zero_copyable(array: np.ndarray) -> bool:
    """PJRT CPU uses this array's memory as it is (the conditions in the module docstring)."""
    return (array.flags.c_contiguous and array.dtype.isnative
            and data_pointer(array) % ALIGNMENT == 0)


def needs_staging(array) -> bool:
    """A plain ndarray large enough for PJRT's copy to hurt that PJRT would copy."""
    return (type(array) is _ndarray and array.nbytes >= STAGE_BYTES
            and not zero_copyable(array))


def stage(array: np.ndarray, dtype=None) -> np.ndarray:
    """An aligned, C-contiguous copy of ``array`` in ``dtype`` (default: its dtype in
    native byte order), from the staging pool.  Read-only: nothing may write it while a
    program reads it."""
    dtype = np.dtype(dtype if dtype is not None else array.dtype).newbyteorder("=")
    nbytes = array.size * dtype.itemsize
    raw, reused = _POOL.take(nbytes + ALIGNMENT)
    offset = (-raw.__array_interface__["data"][0]) % ALIGNMENT
    out = raw[offset:offset + nbytes].view(dtype).reshape(array.shape)
    _copy(out, array)
    out.flags.writeable = False
    STATS.staged += 1
    STATS.reused += reused
    STATS.bytes += nbytes
    return out


def private_copy(array: np.ndarray, dtype=None) -> np.ndarray:
    """An aligned, C-contiguous copy of ``array`` (in ``dtype``, default: its dtype in
    native order) in fresh memory that nothing else refers to, copied as `stage` copies."""
    dtype = np.dtype(dtype if dtype is not None else array.dtype).newbyteorder("=")
    nbytes = array.size * dtype.itemsize
    raw = np.empty(nbytes + ALIGNMENT, np.uint8)
    offset = (-raw.__array_interface__["data"][0]) % ALIGNMENT
    out = raw[offset:offset + nbytes].view(dtype).reshape(array.shape)
    _copy(out, array)
    return out


def stage_arguments(args: tuple, kwargs: dict):
    """``args`` and ``kwargs`` with every array that `needs_staging` replaced by its staged
    copy, through lists, tuples (named ones too) and dicts, as `staged._plain_arguments`
    walks them.  Returns the same objects when nothing needed it."""
    new_args = _stage_sequence(args)
    new_kwargs = kwargs
    if kwargs:
        values = _stage_sequence(tuple(kwargs.values()))
        if values is not None:
            new_kwargs = dict(zip(kwargs, values))
    return (args if new_args is None else new_args), new_kwargs


def _stage_sequence(items):
    """The staged copy of a tuple/list of arguments, or None when nothing changed."""
    changed, out = False, []
    for item in items:
        new = _stage_item(item)
        changed |= new is not item
        out.append(new)
    return out if changed else None


def _stage_item(item):
    kind = type(item)
    if kind is _ndarray:
        return stage(item) if needs_staging(item) else item
    if kind is dict:
        values = _stage_sequence(tuple(item.values()))
        return item if values is None else dict(zip(item, values))
    if kind is list:
        new = _stage_sequence(item)
        return item if new is None else new
    if isinstance(item, tuple):
        new = _stage_sequence(item)
        if new is None:
            return item
        try:
            return kind(*new) if hasattr(item, "_fields") else kind(new)
        except TypeError:   # a tuple subclass built otherwise: PJRT copies its arrays
            return item
    return item


# --- the copy ---------------------------------------------------------------------------

_executor = None
_executor_lock = threading.Lock()


def _threads():
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=max(1, COPY_THREADS - 1),
                                           thread_name_prefix="psc-stage")
        return _executor


def _copy(dst: np.ndarray, src: np.ndarray) -> None:
    """``dst[...] = src`` (a byte-order conversion included), split into chunks copied on
    threads (NumPy releases the GIL while it copies).  Strided sources are split along
    their first axis."""
    parts = min(COPY_THREADS, dst.nbytes // COPY_CHUNK_BYTES)
    if src.flags.c_contiguous:
        dst, src = dst.reshape(-1), src.reshape(-1)
    if parts <= 1 or dst.ndim == 0 or dst.shape[0] < parts:
        np.copyto(dst, src)
        return
    step = -(-dst.shape[0] // parts)
    futures = [_threads().submit(np.copyto, dst[i:i + step], src[i:i + step])
               for i in range(step, dst.shape[0], step)]
    np.copyto(dst[:step], src[:step])
    for future in futures:
        future.result()


# --- the pool ---------------------------------------------------------------------------

def _references(buffers: list, index: int) -> int:
    return sys.getrefcount(buffers[index])


# What `_references` counts for a buffer only the pool holds (measured, not assumed: the
# count differs between Python versions).
_UNUSED = _references([np.empty(1, np.uint8)], 0)


class _Pool:
    """Staging buffers (uint8, ``ALIGNMENT`` bytes longer than their array) kept warm
    between calls, at most `POOL_BYTES` in all, least recently used first out."""

    def __init__(self):
        self._lock = threading.Lock()
        self._buffers = collections.OrderedDict()   # size -> list of buffers
        self._bytes = 0

    def take(self, size: int):
        """A buffer of ``size`` bytes, and whether it was a pool buffer used before."""
        with self._lock:   # two threads must not find the same buffer free
            buffers = self._buffers.get(size)
            if buffers:
                # jaxlib drops its reference to a zero-copy array's memory when the device
                # buffer dies, off the GIL, by queueing it: let the queue go first, or the
                # previous call's buffer still looks in use.
                _collect_jax_garbage()
                self._buffers.move_to_end(size)
                for i in range(len(buffers)):
                    if _references(buffers, i) <= _UNUSED:
                        return buffers[i], True
            raw = np.empty(size, np.uint8)
            if self._make_room(size):
                self._buffers.setdefault(size, []).append(raw)
                self._bytes += size
            return raw, False

    def _make_room(self, size: int) -> bool:
        """Drop unused buffers, least recently used sizes first, until ``size`` more bytes
        fit; False when they cannot (the new buffer is then not kept)."""
        if size > POOL_BYTES:
            return False
        for key in list(self._buffers):
            if self._bytes + size <= POOL_BYTES:
                break
            buffers = self._buffers[key]
            for i in reversed(range(len(buffers))):
                if _references(buffers, i) <= _UNUSED:
                    self._bytes -= buffers.pop(i).nbytes
            if not buffers:
                del self._buffers[key]
        return self._bytes + size <= POOL_BYTES

    def clear(self) -> None:
        with self._lock:
            self._buffers.clear()
            self._bytes = 0

    def nbytes(self) -> int:
        return self._bytes


_POOL = _Pool()


def clear_pool() -> None:
    """Release the staging memory kept between calls (buffers in use stay alive until their
    programs are done with them)."""
    _POOL.clear()


def pool_bytes() -> int:
    return _POOL.nbytes()


__all__ = ["ALIGNMENT", "STAGE_BYTES", "POOL_BYTES", "STATS", "zero_copyable",
           "needs_staging", "stage", "private_copy", "stage_arguments", "clear_pool",
           "pool_bytes"]
