"""If-conversion: a ``case`` over two cheap branches becomes both branches, inline, and one
``select`` per result.

On XLA:CPU every ``conditional`` is a thunk of its own per execution: for a branch of a few
scalar or short-vector ops (a traced ``if`` in a loop body, the guard that the ``break``
lowering puts around the rest of a loop body) the dispatch costs more than the work, and
the branches cannot fuse with what is around them.  Running both branches and selecting
is then faster.  XLA keeps the conditionals it is given, so this pass decides.

It runs on the finished computation, after every transform (autodiff, batching, the
program's own ``case`` ops from `runtime.control_flow.if_stmt`), so it changes no
derivative: ``select`` is exact (it picks the taken branch's value, bit for bit), and what
the untaken branch computes -- a NaN from ``sqrt`` of a negative number, an integer divided
by zero, which XLA defines and never traps on -- is discarded, not combined.  (A ``select``
that autodiff differentiated *through* would multiply those by zero cotangents: that is why
the conversion comes after the transforms, not in the front end.)

The cost model, per branch (`cheap_branch`): at most `MAX_OPS` ops, each an element-wise or
data-movement primitive of `CHEAP` (or a small ``dot_general``/``reduce``), no loops,
conditionals, effects (run-time checks, prints) or random bits; every operand and result at
most `MAX_ELEMENTS` elements, and at most `MAX_WORK` result elements over both branches
(what running the untaken one costs).  The ``case`` results are at most `MAX_ELEMENTS` each
(selecting large arrays costs more than a thunk).

``jit_ps(..., if_conversion=False)`` keeps every ``case``.

Reference semantics, for a ``case`` ``results = case(index, *operands)`` with branches
``false_fn, true_fn`` (index clamped into ``{0, 1}`` by the builder)::

    t = true_fn(*operands); f = false_fn(*operands)
    results = [t_i if index != 0 else f_i for t_i, f_i in zip(t, f)]
"""
from __future__ import annotations

import contextlib

import numpy as np

from .builder import Builder
from .ir import Computation, Operation, Region, Value
from .primitive import lookup
from .region_pass import inline_region, rewrite_innermost_first

# Element-wise and small data-movement primitives: each costs about one pass over its
# result.  Not here: loops, conditionals, sorts, gathers/scatters (their indices), random
# bits, custom calls (LAPACK), FFTs, convolutions.
CHEAP = frozenset({
    "abs", "acos", "acosh", "add", "and", "asin", "asinh", "atan", "atan2", "atanh",
    "broadcast_in_dim", "cbrt", "ceil", "compare", "complex", "concatenate", "conj",
    "constant", "convert", "cosh", "cosine", "divide", "dot_general", "dynamic_slice",
    "dynamic_update_slice", "erf", "erfc", "exponential", "exponential_minus_one", "floor",
    "imag", "iota", "is_finite", "log", "log_plus_one", "logistic", "maximum", "minimum",
    "multiply", "negate", "not", "or", "pad", "power", "real", "reduce", "remainder",
    "reshape", "reverse", "round_nearest_afz", "round_nearest_even", "rsqrt", "select",
    "shift_left", "shift_right_arithmetic", "shift_right_logical", "sign", "sine", "sinh",
    "slice", "sqrt", "stop_gradient", "subtract", "tan", "tanh", "transpose", "xor",
})
MAX_OPS = 48
MAX_ELEMENTS = 4096
MAX_WORK = 32768


def convert_ifs(computation: Computation) -> int:
    """Convert every cheap two-branch ``case`` of ``computation`` (changed in place),
    innermost first (a converted inner ``if`` makes its enclosing branch straight-line, so
    that one may convert too); returns how many were converted."""
    return rewrite_innermost_first(computation.region, _convertible, _inline)


def _convertible(op: Operation) -> bool:
    if op.name != "case" or len(op.regions) != 2:
        return False
    if any(v.size > MAX_ELEMENTS for v in op.results):
        return False
    work = [cheap_branch(region) for region in op.regions]
    return None not in work and sum(work) <= MAX_WORK


def cheap_branch(region: Region) -> int | None:
    """The result elements ``region``'s ops compute, or None when the cost model refuses
    it (see the module docstring)."""
    if len(region.operations) > MAX_OPS:
        return None
    work = 0
    for op in region.operations:
        if op.name not in CHEAP or lookup(op.name).effectful:
            return None
        if op.regions and (op.name != "reduce" or
                           any(cheap_branch(r) is None for r in op.regions)):
            return None   # a reduce's region is its combiner: a scalar op or two
        if any(v.size > MAX_ELEMENTS for v in (*op.operands, *op.results)):
            return None
        work += sum(max(v.size, 1) for v in op.results)
    return work


def _inline(b: Builder, op: Operation) -> None:
    """Append both branches of ``op`` to ``b``'s region and a select per result; each
    select gives the case's own result Value, so what reads it needs no renaming."""
    index, *passed = op.operands
    loc = op.location
    where = (b.at(loc.file, loc.line, loc.col, loc.source_line) if loc is not None
             else contextlib.nullcontext())
    with where:
        taken = _taken(b, index)
        on_false, on_true = (inline_region(b, region, passed) for region in op.regions)
        for result, t, f in zip(op.results, on_true, on_false):
            select = b.select(taken, t, f).producer
            select.results = (result,)
            result.producer = select


def _taken(b: Builder, index: Value) -> Value:
    """True where ``case`` runs its second (the true) branch."""
    producer = index.producer
    if producer is not None and producer.name == "convert" and \
            producer.operands[0].dtype == np.bool_:
        return producer.operands[0]   # the ``if``'s own test, which the builder converted
    return b.compare(index, b.constant(0, index.dtype), "NE")
