"""Reverse mode through a loop: split each step's VJP between the forward and the backward loop.

`linearize_body` builds, in a throw-away region, one loop step's forward ops followed by
its backward pass, on parameters for the step's input state and for the cotangents of its
output state.  Every op there that does not depend on a cotangent is *primal*: the
forward loop runs all of them, so it computes the next state *and* every value the
backward pass needs that only depends on the primal values (a max's tie counts, a
softmax's normalizer).  The primal values the remaining ops read are the *residuals*:
the forward loop stores one row of them per iteration, and the backward loop runs only
the cotangent ops, on the stored rows.  This is partial evaluation of the step's
linearization (the JAX paper's "linearize, then transpose"), done on the graph IR.

Values made by ops in `RECOMPUTED` (reshapes, broadcasts, constants: free to redo, and
often larger than what they are made from) are not stored; the backward loop rebuilds
them from stored values when they are read (`RecomputingEnv`).
"""
from __future__ import annotations

import dataclasses

from ..ir import Operation, Region, Value
from .reverse import backward_pass, forward_pass
from .tangents import is_float, zeros_like
from .trace import replay

RECOMPUTED = frozenset({
    "constant", "iota", "broadcast_in_dim", "reshape", "transpose", "convert", "slice",
    "reverse",
})


@dataclasses.dataclass(frozen=True)
class LinearizedBody:
    """One loop step, forward then backward, in ``region`` (a throw-away region whose
    parameters are the step's input ``state`` and the ``cotangents`` of its float output
    state; it reads the loop's captured values from outside)."""

    region: Region
    state: tuple[Value, ...]
    cotangents: tuple[Value, ...]
    next_state: tuple[Value, ...]      # the step's output state
    param_cts: tuple[Value, ...]       # cotangents of the step's state, then captured values
    primal_ops: tuple[Operation, ...]  # in program order: what the forward loop runs
    residuals: tuple[Value, ...]       # primal values the backward step reads, per iteration


def linearize_body(b, body_region: Region, num_state: int, captured) -> LinearizedBody:
    """Linearize one step of a loop whose body is ``body_region`` (state parameters first,
    then one parameter per value in ``captured``), as a region under builder ``b``."""
    sub = b.child("linearize")
    params, outputs = body_region.params[:num_state], body_region.outputs[:num_state]
    state = [sub.add_parameter(p.shape, p.dtype, p.weak) for p in params]
    cotangents = [sub.add_parameter(v.shape, v.dtype, False) for v in outputs
                  if is_float(v)]
    env = forward_pass(sub, body_region, state + list(captured), save_loops=True)
    it = iter(cotangents)
    out_cts = [next(it) if is_float(v) else None for v in outputs] + [None] * len(captured)
    param_cts, _ = backward_pass(sub, body_region, env, out_cts)
    param_cts = [zeros_like(sub, p) if ct is None else ct
                 for ct, p in zip(param_cts, state + list(captured)) if is_float(p)]
    next_state = [sub.capture(env[v]) for v in outputs]
    param_cts = [sub.capture(ct) for ct in param_cts]
    region = sub.region
    tangent = _depends_on(region, cotangents)
    # (by operands: a `case` that only prints or checks has no results)
    primal_ops = tuple(op for op in region.operations
                       if not any(v in tangent for v in op.operands))
    residuals = _residuals(region, tangent, param_cts)
    return LinearizedBody(region, tuple(state), tuple(cotangents), tuple(next_state),
                          tuple(param_cts), primal_ops, residuals)


def _depends_on(region: Region, sources) -> set:
    """The values of ``region`` computed from any of ``sources``."""
    reached = set(sources)
    for op in region.operations:
        if any(v in reached for v in op.operands):
            reached.update(op.results)
    return reached


def _residuals(region: Region, tangent: set, outputs) -> tuple[Value, ...]:
    """The primal values the backward step reads to compute ``outputs``, in region order:
    walking back from them through the ops it rebuilds (cotangent ops, and `RECOMPUTED`
    ones) to the first other values, less those read from outside the loop."""
    producers = {v: op for op in region.operations for v in op.results}
    outside = set(region.captures.values())
    pending, stored, seen = list(outputs), set(), set()
    while pending:
        value = pending.pop()
        if value in seen or value in outside:
            continue
        seen.add(value)
        op = producers.get(value)
        if op is not None and (value in tangent or op.name in RECOMPUTED):
            pending.extend(op.operands)
        elif value not in tangent:   # a state parameter, or a real primal computation
            stored.add(value)
    in_order = list(region.params) + [v for op in region.operations for v in op.results]
    return tuple(v for v in in_order if v in stored)


def run_primal(b, body: LinearizedBody, state) -> dict:
    """Emit the primal ops of one step into ``b`` on ``state``: the map from the region's
    values to their values in ``b`` (next state and residuals included)."""
    env = dict(zip(body.state, state))
    for outer, inner in body.region.captures.items():
        env[inner] = outer
    for op in body.primal_ops:
        env.update(zip(op.results, replay(b, op, [env[v] for v in op.operands])))
    return env


def run_backward(b, body: LinearizedBody, residuals, cotangents) -> list:
    """Emit one backward step into ``b`` from a row of stored ``residuals`` and the
    cotangents of the step's output state: the cotangents of its float parameters."""
    seed = {inner: outer for outer, inner in body.region.captures.items()}
    seed.update(zip(body.residuals, residuals))
    seed.update(zip(body.cotangents, cotangents))
    env = RecomputingEnv(b, body.region, seed)
    return [env[ct] for ct in body.param_cts]


class RecomputingEnv(dict):
    """A map from a region's values to their values in builder ``b``, seeded with some of
    them; any other value of the region is built, with what it depends on, the first time
    it is read."""

    def __init__(self, b, region: Region, seed: dict):
        super().__init__(seed)
        self._b = b
        self._producers = {v: op for op in region.operations for v in op.results}

    def __missing__(self, value):
        pending = [value]
        while pending:   # depth first, without recursion: a chain of ops can be long
            op = self._producers[pending[-1]]
            missing = [v for v in op.operands if v not in self]
            if missing:
                pending.extend(missing)
                continue
            pending.pop()
            if op.results[0] not in self:
                self.update(zip(op.results, replay(self._b, op, [self[v] for v in
                                                                 op.operands])))
        return dict.__getitem__(self, value)
