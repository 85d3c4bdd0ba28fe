"""Batching out of loops: a counted loop's matrix-vector products that depend only on the
loop index and on values the loop does not change are computed for every iteration at
once, before the loop, as one matrix-matrix product.

NumPy code often builds a result row by row from a matrix that stays the same::

    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (n - 1.0)

Staged as it is, every iteration is a matrix-vector product over the whole of ``data``:
XLA:CPU streams the matrix from memory once per iteration, at a few GFLOP/s.  The products
of all iterations together are one matrix-matrix product (``data.T @ data`` here), which
reads the matrix once and runs at the machine's peak.  This pass finds, in the body of a
loop whose number of iterations is known when the program is built (``trip_count``),

* its *counters*: state values that start at a constant and grow by a constant each
  iteration (a ``for`` over a static range, `fori_loop` with static bounds);
* its *invariants*: state the body passes on unchanged, and the values it captures;
* the ops computed from counters, invariants and constants alone, without effects or
  nested regions (*hoistable*); and among them each ``dot_general`` with one operand that
  depends on a counter and one that does not, of at least `MIN_MULTIPLY_ADDS` per
  iteration.

Each such product and the hoistable ops it needs are replayed once before the loop on the
counters' values of all iterations (``batching.batch_op``, the mechanism of ``vmap``), and
the loop reads its iteration's row of the stacked result instead.  Everything else stays
in the loop.  The stacked values may take at most `MAX_STACKED_BYTES`.

It runs on the finished computation, after every transform, before `loop_unrolling`.

Reference semantics, for a loop of ``n`` iterations with counter ``i = start + k * step``
and a hoisted value ``v(i)``::

    stacked = [v(start + k * step) for k in range(n)]     # one batched computation
    for k in range(n):
        ... stacked[(i - start) // step] ...               # where the body used v(i)

The products are the same sums in another order (a matrix-matrix product blocks its
loops differently), so results agree with the loop's to rounding, as XLA's and NumPy's own
products do.
"""
from __future__ import annotations

import contextlib
import dataclasses

import numpy as np

from . import dtypes
from .batching import batch_op
from .builder import Builder
from .ir import Computation, Operation, Value
from .primitive import lookup
from .primitives.support import read_row, to_front
from .region_pass import rewrite_innermost_first

MIN_TRIPS = 4
MIN_MULTIPLY_ADDS = 1 << 14
MAX_STACKED_BYTES = 64 << 20


def batch_out_of_loops(computation: Computation) -> int:
    """Hoist the batchable products of every counted loop of ``computation`` (changed in
    place), innermost loops first; returns how many loops changed."""
    plans: dict[int, _Plan] = {}

    def chosen(op: Operation) -> bool:
        plan = plan_for(op)
        if plan is not None:
            plans[id(op)] = plan
        return plan is not None

    return rewrite_innermost_first(computation.region, chosen,
                                   lambda b, op: _rewritten(b, op, plans.pop(id(op))))


@dataclasses.dataclass
class _Counter:
    start: np.ndarray   # a scalar of the counter's dtype
    step: np.ndarray


@dataclasses.dataclass
class _Plan:
    counters: dict[int, _Counter]     # body parameter position -> its progression
    invariant: list[int]              # body parameter positions passed on unchanged
    hoisted: list[Operation]          # body ops replayed before the loop, in body order
    products: list[Value]             # the body values read from the stacked results


def plan_for(op: Operation) -> _Plan | None:
    """What `batch_out_of_loops` would hoist out of ``op``, or None when nothing."""
    if op.name != "while" or (op.attrs.get("trip_count") or 0) < MIN_TRIPS:
        return None
    body = op.regions[1]
    counters = _counters(op)
    if not counters:
        return None
    invariant = [k for k, (p, out) in enumerate(zip(body.params, body.outputs))
                 if p is out and k not in counters]
    varies = {body.params[k] for k in counters}
    known = set(varies) | {body.params[k] for k in invariant}
    producers: dict[Value, Operation] = {}
    products = []
    for inner in body.operations:
        if not _hoistable(inner, known):
            continue
        known.update(inner.results)
        producers.update((v, inner) for v in inner.results)
        moving = [v in varies for v in inner.operands]
        if any(moving):
            varies.update(inner.results)
        if inner.name == "dot_general" and any(moving) and not all(moving) and \
                _multiply_adds(inner) >= MIN_MULTIPLY_ADDS:
            products.append(inner.results[0])
    return _fitting(op, counters, invariant, producers, varies, products)


def _fitting(op, counters, invariant, producers, varies, products) -> _Plan | None:
    """The plan for the ``products`` whose stacked values fit in `MAX_STACKED_BYTES`."""
    n = op.attrs["trip_count"]
    needed: set[Operation] = set()
    chosen, total = [], 0
    for product in products:
        ops = _ancestors(product, producers) - needed
        extra = sum(n * v.size * v.dtype.itemsize
                    for o in ops for v in o.results if v in varies)
        if total + extra <= MAX_STACKED_BYTES:
            needed |= ops
            chosen.append(product)
            total += extra
    if not chosen:
        return None
    hoisted = [o for o in op.regions[1].operations if o in needed]
    return _Plan(counters, invariant, hoisted, chosen)


def _counters(op: Operation) -> dict[int, _Counter]:
    """The body parameters that start at a constant (the loop's operand) and grow by a
    constant each iteration."""
    body = op.regions[1]
    found = {}
    for k in range(op.attrs["num_state"]):
        param, out = body.params[k], body.outputs[k]
        if not dtypes.is_integer(param.dtype) or param.ndim != 0:
            continue
        start = _constant_of(op.operands[k])
        step = _step(op, out, param)
        if start is not None and step is not None and step != 0:
            found[k] = _Counter(np.asarray(start, param.dtype), np.asarray(step, param.dtype))
    return found


def _step(op: Operation, out: Value, param: Value):
    producer = out.producer
    if producer is None or producer.name != "add":
        return None
    x, y = producer.operands
    if (x is param) == (y is param):
        return None
    step = y if x is param else x
    body = op.regions[1]
    j = next((j for j, p in enumerate(body.params) if p is step), None)
    if j is not None:   # a constant of the enclosing region, captured
        return _constant_of(op.operands[j]) if body.outputs[j] is step else None
    return _constant_of(step)


def _constant_of(value: Value):
    """The scalar a ``constant`` (possibly converted) makes, or None."""
    producer = value.producer
    if producer is not None and producer.name == "convert":
        inner = _constant_of(producer.operands[0])
        return None if inner is None else np.asarray(inner).astype(value.dtype)[()]
    if producer is None or producer.name != "constant":
        return None
    array = producer.attrs["value"]
    return array[()] if array.ndim == 0 else None


def _hoistable(op: Operation, known: set) -> bool:
    primitive = lookup(op.name)
    return (not op.regions and not primitive.effectful and primitive.batching is not None
            and all(v in known for v in op.operands))


def _multiply_adds(op: Operation) -> int:
    lhs = op.operands[0]
    contracted = int(np.prod([lhs.shape[d] for d in op.attrs["lhs_contract"]], dtype=np.int64))
    return op.results[0].size * contracted


def _ancestors(value: Value, producers: dict) -> set[Operation]:
    found, stack = set(), [value]
    while stack:
        op = producers.get(stack.pop())
        if op is not None and op not in found:
            found.add(op)
            stack.extend(op.operands)
    return found


# --- the rewrite -------------------------------------------------------------------------

def _rewritten(b: Builder, op: Operation, plan: _Plan) -> list[Value]:
    loc = op.location
    where = (b.at(loc.file, loc.line, loc.col, loc.source_line) if loc is not None
             else contextlib.nullcontext())
    with where:
        stacked = _stacked_products(b, op, plan)
        cond, body = op.regions
        rows = _read_rows(body, plan, stacked)
        for region in (cond, body):
            region.params.extend(Value(s.shape, s.dtype, region) for s in stacked)
        body.outputs.extend(body.params[len(op.operands):])
        # rows replaced the products inside the body; the params are the stacked arrays
        _replace_in_body(body, plan, rows)
        attrs = dict(op.attrs)
        attrs["result_avals"] = tuple((v.shape, v.dtype) for v in [*op.operands, *stacked])
        results = b.emit("while", [*op.operands, *stacked], (cond, body), **attrs)
    for result, old in zip(results, op.results):
        result.weak = old.weak
    return results[:len(op.results)]


def _stacked_products(b: Builder, op: Operation, plan: _Plan) -> list[Value]:
    """The products of every iteration, stacked along a new first axis."""
    body, n = op.regions[1], op.attrs["trip_count"]
    env = {body.params[k]: (op.operands[k], None) for k in plan.invariant}
    for k, counter in plan.counters.items():
        dtype = counter.start.dtype
        ramp = b.mul(b.iota((n,), dtype), _filled(b, counter.step, n))
        env[body.params[k]] = (b.add(ramp, _filled(b, counter.start, n)), 0)
    for inner in plan.hoisted:
        batch_op(b, inner, env)
    return [to_front(b, *env[product]) for product in plan.products]


def _filled(b: Builder, scalar: np.ndarray, n: int) -> Value:
    return b.broadcast_in_dim(b.constant(scalar), (n,), ())


def _read_rows(body, plan: _Plan, stacked: list[Value]):
    """A function appending, to a builder on the body, the reads of this iteration's rows
    of the stacked parameters (made on first use, in body order)."""
    k, counter = next(iter(plan.counters.items()))
    first_stacked = len(body.params)

    def rows(b: Builder) -> list[Value]:
        index = body.params[k]
        if counter.start != 0:
            index = b.sub(index, b.constant(counter.start))
        if counter.step != 1:
            index = b.div(index, b.constant(counter.step))
        params = body.params[first_stacked:first_stacked + len(stacked)]
        return [read_row(b, p, index) for p in params]
    return rows


def _replace_in_body(body, plan: _Plan, rows) -> None:
    """The body with each hoisted product read from its stacked parameter (at the place
    of the product), and the hoisted ops nothing uses any more dropped."""
    operations, body.operations = body.operations, []
    b = Builder.resume(body)
    renamed: dict[Value, Value] = {}
    products = set(plan.products)
    for inner in operations:
        if renamed:
            inner.operands = tuple(renamed.get(v, v) for v in inner.operands)
        if inner.results and inner.results[0] in products:
            if not renamed:
                renamed.update(zip(plan.products, rows(b)))
            continue
        body.operations.append(inner)
    body.outputs = [renamed.get(v, v) for v in body.outputs]
    _drop_unused(body, set(plan.hoisted))


def _drop_unused(body, candidates: set) -> None:
    used = set(body.outputs)
    kept = []
    for inner in reversed(body.operations):
        if inner in candidates and not any(v in used for v in inner.results):
            continue
        used.update(inner.operands)
        kept.append(inner)
    body.operations = kept[::-1]


__all__ = ["MIN_TRIPS", "MIN_MULTIPLY_ADDS", "MAX_STACKED_BYTES", "batch_out_of_loops",
           "plan_for"]
