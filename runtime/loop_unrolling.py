"""Unrolling: a counted loop over a few scalar ops runs its body several times per iteration.

A loop whose iterations are a handful of scalar operations (a Python ``for`` over prices
with an ``if``, a scalar recurrence) spends most of its time on the loop
itself: XLA:CPU keeps a ``while``'s state in memory and runs its condition and body as
functions, so every iteration stores and reloads the state and branches back.  Running the
body `FACTOR` times per iteration divides that by `FACTOR` and lets LLVM keep values in
registers between the copies.  XLA does not unroll loops on CPU, so this pass does.

It runs on the finished computation, after every transform and after
`runtime.check_threading` (whose failure codes are then ordinary loop state), just before
compilation.  It changes only loops whose number of iterations is known when the program
is built (``trip_count``: a ``for`` over a static range, `scan`, `fori_loop` with static
bounds; the builder sets it only where it is exact) and whose body is cheap by the cost
model: at most `MAX_OPS` ops of `if_conversion.CHEAP` (``reduce`` with its combiner), no
loops, conditionals, effects or ``dynamic_update_slice`` (bodies that write into an array
measured no faster, the particle sweep of ``benchmarks/loops.py`` slower), every result at
most `MAX_ELEMENTS` elements.  Innermost first, so
the scalar loop inside an array-level one is unrolled and the outer one is left alone.

Reference semantics, for a loop of ``n`` iterations (its condition is then true exactly
``n`` times) unrolled by ``k``::

    for _ in range(n // k):
        for _ in range(k):       # k copies of the body, inline
            state = body(state)
    for _ in range(n % k):       # the rest, after the loop, inline
        state = body(state)
"""
from __future__ import annotations

import contextlib

import numpy as np

from .builder import Builder
from .if_conversion import CHEAP
from .ir import Computation, Operation, Region, Value
from .primitive import lookup
from .region_pass import inline_region, rewrite_innermost_first

FACTOR = 8
MAX_OPS = 32
MAX_ELEMENTS = 16


def unroll_loops(computation: Computation) -> int:
    """Unroll every cheap counted loop of ``computation`` (changed in place), innermost
    first; returns how many were unrolled."""
    return rewrite_innermost_first(computation.region, unrollable, _unrolled)


def unrollable(op: Operation) -> bool:
    """Whether ``op`` is a counted loop of at least two unrolled iterations with a cheap
    body (see the module docstring)."""
    if op.name != "while":
        return False
    trip_count = op.attrs.get("trip_count")
    return trip_count is not None and trip_count >= 2 * FACTOR and \
        cheap_body(op.regions[1])


def cheap_body(region: Region) -> bool:
    if len(region.operations) > MAX_OPS:
        return False
    for op in region.operations:
        if op.name not in CHEAP or lookup(op.name).effectful:
            return False
        if op.regions and (op.name != "reduce" or not all(
                cheap_body(r) for r in op.regions)):
            return False
        if op.name == "dynamic_update_slice" or any(v.size > MAX_ELEMENTS
                                                     for v in op.results):
            return False
    return True


def _unrolled(b: Builder, op: Operation) -> list[Value]:
    """The loop ``op`` unrolled into ``b``'s region: what its results became."""
    trip_count = op.attrs["trip_count"]
    body = op.regions[1]
    loc = op.location
    where = (b.at(loc.file, loc.line, loc.col, loc.source_line) if loc is not None
             else contextlib.nullcontext())
    with where:
        rounds = b.constant(np.int32(trip_count // FACTOR))
        one = b.constant(np.int32(1))

        def more(sub, state):
            return sub.lt(state[0], rounds)

        def step(sub, state):
            counter, *values = state
            for _ in range(FACTOR):
                values = inline_region(sub, body, values)
            return (sub.add(counter, one), *values)
        _, *values = b.while_loop(more, step, (b.constant(np.int32(0)), *op.operands),
                                  trip_count=trip_count // FACTOR)
        for _ in range(trip_count % FACTOR):
            values = inline_region(b, body, values)
    return values
