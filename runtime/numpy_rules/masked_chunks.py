"""Sums over a window with a traced length, in work proportional to the length.

A window ``a[lo:hi]`` with traced bounds is staged over the whole extent of ``a``
(`masked.Masked`), so ``a[lo:hi] @ b[lo:hi]`` would multiply every element of ``a`` and
drop the ones outside: in a CSR row loop (``A_val[A_row[i]:A_row[i + 1]] @ x[cols]``)
that is the number of nonzeros of the matrix per row, where NumPy does two.  For 1-d
windows of arrays of at least `CHUNKED_FROM` elements, `reduce_window` sums ``CHUNK``
positions at a time instead: the first chunk unconditionally (its result gives the sum's
dtype), then a ``while`` loop over further chunks while positions are left, so a short
window costs one chunk and a long one its length rounded up.  XLA:CPU compiles such a loop
into one function (`runtime.xla_options`).

`reference` gives the meaning in NumPy; the tests compare against it.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..ir import Value

CHUNK = 128
CHUNKED_FROM = 4 * CHUNK   # below, one pass over the whole extent costs less than a loop


def worth_it(data: Value) -> bool:
    """Whether a window over the 1-d ``data`` is summed in chunks."""
    return data.ndim == 1 and data.shape[0] >= CHUNKED_FROM


def reduce_window(b: Builder, reduce_chunk: Callable, operands: Sequence[Value],
                  begin: Value, length: Value) -> Value:
    """The sum over chunks of ``reduce_chunk(sub, *chunks)`` (a 0-d result per chunk)
    where the chunks are the positions ``begin <= p < begin + length`` of the 1-d
    ``operands`` (one extent), zero elsewhere: see the module docstring."""
    n = operands[0].shape[0]
    step = b.constant(CHUNK, dtypes.int64)

    def partial(sub: Builder, offset: Value) -> Value:
        first = sub.add(begin, offset)
        # dynamic_slice would clamp a chunk running past the end; the lanes say which
        # positions it holds, so the clamped one repeats none of the previous chunk's
        start = sub.min(sub.max(first, sub.constant(0, dtypes.int64)),
                        sub.constant(n - CHUNK, dtypes.int64))
        lanes = sub.add(sub.iota((CHUNK,), dtypes.int64),
                        sub.broadcast_in_dim(start, (CHUNK,), ()))
        end = sub.add(begin, length)
        valid = sub.and_(sub.ge(lanes, sub.broadcast_in_dim(first, (CHUNK,), ())),
                         sub.lt(lanes, sub.broadcast_in_dim(end, (CHUNK,), ())))
        chunks = []
        for w in operands:
            zeros = sub.broadcast_in_dim(sub.constant(np.zeros((), w.dtype)), (CHUNK,), ())
            chunks.append(sub.select(valid, _chunk_of(sub, w, start), zeros))
        return reduce_chunk(sub, *chunks)

    first = partial(b, b.constant(0, dtypes.int64))

    def more(sub: Builder, state):
        return sub.lt(state[0], length)

    def next_chunk(sub: Builder, state):
        offset, total = state
        return sub.add(offset, step), sub.add(total, partial(sub, offset))
    _, total = b.while_loop(more, next_chunk, (step, first), max_trip_count=-(-n // CHUNK))
    return total


def reference(reduce_chunk: Callable, operands: Sequence[np.ndarray], begin: int,
              length: int):
    """What `reduce_window` computes (``reduce_chunk(*chunks)`` on NumPy arrays)."""
    def chunk(w, offset):
        piece = np.zeros(CHUNK, w.dtype)
        lo, hi = begin + offset, min(begin + offset + CHUNK, begin + length)
        piece[:max(hi - lo, 0)] = w[lo:hi]
        return piece
    total = reduce_chunk(*(chunk(w, 0) for w in operands))
    offset = CHUNK
    while offset < length:
        total = total + reduce_chunk(*(chunk(w, offset) for w in operands))
        offset += CHUNK
    return total


def _chunk_of(b: Builder, w: Value, start: Value) -> Value:
    """Positions ``start ... start + CHUNK`` of the 1-d ``w``, read from the array ``w``
    is a line of when it is one (``A[i, :]``: a dynamic slice), so that the line is not
    copied out whole for every window."""
    line = _line_of(w)
    if line is None:
        return b.dynamic_slice(w, [start], (CHUNK,))
    source, starts, axis = line
    starts = [start if a == axis else s for a, s in enumerate(starts)]
    sizes = [CHUNK if a == axis else 1 for a in range(source.ndim)]
    return b.reshape(b.dynamic_slice(source, starts, sizes), (CHUNK,))


def _line_of(w: Value):
    """``(source, start indices, axis)`` when ``w`` is a whole line of ``source`` along
    ``axis`` (a dynamic slice, and a reshape dropping its unit axes), else None."""
    reshape = w.producer
    if reshape is None or reshape.name != "reshape":
        return None
    cut = reshape.operands[0].producer
    if cut is None or cut.name != "dynamic_slice":
        return None
    source, *starts = cut.operands
    sizes = tuple(cut.attrs["slice_sizes"])
    lines = [a for a, size in enumerate(sizes) if size != 1]
    if len(lines) != 1 or sizes[lines[0]] != source.shape[lines[0]] or \
            sizes[lines[0]] != w.shape[0]:
        return None
    return source, starts, lines[0]
