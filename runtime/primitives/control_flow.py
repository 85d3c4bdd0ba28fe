"""Control-flow primitives: ``while`` and ``case``, whose regions are closed sub-programs.

``while``'s operands are the loop state, then the values its regions capture; its regions
are the condition and the body.  ``case``'s are the branch index, the operands passed to
every branch, then the captured values; its regions are the branches.  The builder checks
the regions when it makes them (`Builder.while_loop`, `Builder.conditional`) and passes
the result types in ``result_avals``.

Differentiation: ``case`` in both modes; ``while`` in forward mode, and in reverse mode
when the trip count is known when the program is built (a ``for`` over a static
``range``, ``fori_loop`` with static bounds) or bounded (the same loop with a ``break``).
Reverse mode through such a loop linearizes one step of the body
(`residuals.linearize_body`), runs the loop forward once as the loop that also stores,
per iteration, the step's residuals (the primal values its backward step reads:
``save_for_vjp``), then runs a loop backwards over the stored rows, applying the step's
cotangent ops.  A ``while`` whose trip count is only known at run time cannot be
reversed this way (the buffer's size would be unknown): that is a `PSCError` pointing to
the fixed-trip forms.

Batching: a ``while`` whose test differs between lanes runs until every lane is done,
finished lanes kept by ``select``; a ``case`` whose index differs between lanes runs
every branch and selects each lane's result.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..autodiff.forward import jvp_region
from ..autodiff.residuals import LinearizedBody, linearize_body, run_backward, run_primal
from ..autodiff.reverse import backward_pass, forward_pass
from ..autodiff.tangents import is_float, zeros, zeros_like
from ..autodiff.trace import replay
from ..batching import batch_region, batched_outputs
from ..errors import PSCValueError
from ..primitive import batching_rule, checks, jvp_rule, lowers, saves_for_vjp, vjp_rule
from .support import read_row, to_front, write_row

# --- checks and lowerings --------------------------------------------------------------------


@checks("while", "case")
def _check_control_flow(operands, attrs):
    return list(attrs["result_avals"])


@lowers("while")
def _lower_while(p, op):
    cond, body = op.regions
    regions = [p.region(cond, op=op), p.region(body, op=op)]
    p.generic(op, "while", regions=regions)


@lowers("case")
def _lower_case(p, op):
    """Branches are printed with their parameters bound to the case's operands: StableHLO
    case regions take no arguments and see enclosing values directly."""
    index, *passed = op.operands
    outer = [p.name(v) for v in passed]
    regions = [p.region(r, bind_params=outer, op=op) for r in op.regions]
    p.generic(op, "case", regions=regions, operands=[index])


# --- derivatives -------------------------------------------------------------------------------

def _materialize(b, tangents, primals):
    """Tangents of float values as Values (zeros for symbolic zeros); None for others."""
    return [(t if t is not None else zeros_like(b, p)) if is_float(p) else None
            for t, p in zip(tangents, primals)]


def _present(values):
    return [v for v in values if v is not None]


def _fill(pattern, values):
    it = iter(values)
    return [next(it) if p is not None else None for p in pattern]


# --- case --------------------------------------------------------------------------------------

@jvp_rule("case")
def case_jvp(b, op, primals, tangents):
    index, passed = primals[0], primals[1:]
    passed_t = _materialize(b, tangents[1:], passed)

    def branch(region):
        def build(sub, operands):
            ps, ts = operands
            outs, outs_t = jvp_region(sub, region, ps, _fill(passed_t, ts))
            return outs, _present(_materialize(sub, outs_t, outs))
        return build
    outs, outs_t = b.conditional(index, [branch(r) for r in op.regions],
                                 (list(passed), _present(passed_t)))
    pattern = [True if is_float(v) else None for v in op.results]
    return outs, _fill(pattern, outs_t)


@vjp_rule("case")
def case_vjp(b, op, primals, results, cts):
    index, passed = primals[0], primals[1:]
    cts = _materialize(b, cts, results)

    def branch(region):
        def build(sub, operands):
            ps, cs = operands
            env = forward_pass(sub, region, ps, save_loops=True)
            param_cts, _ = backward_pass(sub, region, env, _fill(cts, cs))
            return _present(_materialize(sub, param_cts, ps))
        return build
    passed_cts = b.conditional(index, [branch(r) for r in op.regions],
                               (list(passed), _present(cts)))
    pattern = [True if is_float(v) else None for v in passed]
    return [None] + _fill(pattern, passed_cts)


# --- while -------------------------------------------------------------------------------------

@jvp_rule("while")
def while_jvp(b, op, primals, tangents):
    cond_region, body_region = op.regions
    n = op.attrs["num_state"]
    state, captured = primals[:n], primals[n:]
    state_t = _materialize(b, tangents[:n], state)
    captured_t = tangents[n:]

    def cond(sub, carry):
        ps, _ = carry
        env = forward_pass(sub, cond_region, list(ps) + list(captured))
        return env[cond_region.outputs[0]]

    def body(sub, carry):
        ps, ts = carry
        outs, outs_t = jvp_region(sub, body_region, list(ps) + list(captured),
                                  _fill(state_t, ts) + list(captured_t))
        return outs[:n], _present(_materialize(sub, outs_t[:n], outs[:n]))
    final, final_t = b.while_loop(cond, body, (list(state), _present(state_t)),
                                  trip_count=op.attrs.get("trip_count"))
    return list(final) + list(captured), _fill(state_t, final_t) + [None] * len(captured)


class SavedLoop(NamedTuple):
    """What the forward pass keeps of a fixed-trip or bounded loop for its VJP."""

    body: LinearizedBody
    rows: list    # per residual (then the loop test, for a guarded loop): (trip_count, ...)


@vjp_rule("while")
def while_vjp(b, op, primals, results, cts, saved: SavedLoop | None = None):
    trip_count = op.attrs.get("trip_count")
    guarded = trip_count is None and op.attrs.get("max_trip_count") is not None
    if guarded:   # a bounded loop: run the bound, each step guarded by the loop test
        trip_count = op.attrs["max_trip_count"]
    n = op.attrs["num_state"]
    if trip_count == 0:   # the loop never runs: cotangents pass straight through
        return list(cts[:n]) + [None] * (len(primals) - n)
    if trip_count is None:
        raise PSCValueError(
            "reverse-mode differentiation through a while loop whose number of iterations "
            "is only known when the program runs is not supported: the values each "
            "iteration needs cannot be stored without knowing how many there are",
            op.location or b.location,
            "use a for loop over range() with static bounds and no break or early return "
            "(or fori_loop with static bounds), or forward mode (jvp, jacfwd)")
    state, captured = primals[:n], primals[n:]
    if saved is None:   # the forward pass did not keep them: run the loop again
        saved = saving_while(b, op, primals)[1]
    state_cts = _materialize(b, cts[:n], state)
    captured_cts = _materialize(b, [None] * len(captured), captured)
    counter = b.constant(np.int32(trip_count - 1))

    def cond(sub, carry):
        return sub.ge(carry[0], sub.constant(np.int32(0)))

    def body(sub, carry):
        k, cs, acc = carry
        row = [read_row(sub, buf, k) for buf in saved.rows]
        new_cs, grown = _step_vjp(sub, saved.body, row, guarded, list(cs))
        new_acc = [sub.add(a, g) for a, g in zip(acc, grown)]
        return sub.sub(k, sub.constant(np.int32(1))), new_cs, new_acc
    # the trip count makes the backward loop itself differentiable in reverse mode
    _, final_cs, final_acc = b.while_loop(
        cond, body, (counter, _present(state_cts), _present(captured_cts)),
        trip_count=trip_count)
    return _fill(state_cts, final_cs) + _fill(captured_cts, final_acc)


def _step_vjp(b, body: LinearizedBody, row, guarded, cs):
    """One backward step from its stored ``row``: (the cotangents of the step's float input
    state, the increments of the captured values' cotangents).  A guarded step applies
    the VJP only where the loop test held (the row's last entry)."""
    def through_body(sub, operands):
        residuals, c = operands
        param_cts = run_backward(sub, body, residuals, c)
        return param_cts[:len(c)], param_cts[len(c):]
    if not guarded:
        return through_body(b, (row, cs))

    def skipped(sub, operands):
        _, c = operands
        return list(c), [zeros_like(sub, ct) for ct in body.param_cts[len(c):]]
    return b.conditional(row[-1], [through_body, skipped], (row[:-1], cs))


def is_bounded(op) -> bool:
    """Whether the loop's trip count, or a bound on it, is known."""
    return bool(op.attrs.get("trip_count") or op.attrs.get("max_trip_count"))


@saves_for_vjp("while")
def save_while(b, op, operands):
    """The forward pass of a loop a backward pass follows: a bounded loop saves its
    residuals (`saving_while`); another is only replayed (its VJP then says why it has
    none)."""
    if not is_bounded(op):
        return replay(b, op, operands), None
    return saving_while(b, op, operands)


def saving_while(b, op, operands):
    """Replay a loop with a known trip count (or bound) as the loop that also stores, per
    iteration, the residuals of its linearized body (and, for a bounded loop whose steps
    are guarded by its test, whether the test held): (the loop's results, `SavedLoop`).
    A guarded step keeps its state once the test fails."""
    n = op.attrs["num_state"]
    state, captured = operands[:n], operands[n:]
    cond_region, body_region = op.regions
    guarded = not op.attrs.get("trip_count")
    trip_count = op.attrs["max_trip_count"] if guarded else op.attrs["trip_count"]
    body = linearize_body(b, body_region, n, captured)
    row_avals = [(v.shape, v.dtype) for v in body.residuals]
    if guarded:
        row_avals.append(((), np.dtype(bool)))
    rows = [zeros(b, (trip_count,) + tuple(shape), dtype) for shape, dtype in row_avals]
    induction = None if guarded else _induction_variable(body_region, n, trip_count)

    def step(sub, current, bufs, k):
        env = run_primal(sub, body, current)
        nxt = [env[v] for v in body.next_state]
        row = [env[v] for v in body.residuals]
        if guarded:
            going = forward_pass(sub, cond_region, list(current) + list(captured))[
                cond_region.outputs[0]]
            nxt = [sub.select(going, new, old) for new, old in zip(nxt, current)]
            row.append(going)
        return nxt, [write_row(sub, buf, value, k) for buf, value in zip(bufs, row)]

    if induction is None:   # count the iterations
        def cond(sub, carry):
            return sub.lt(carry[0], sub.constant(np.int32(trip_count)))

        def body_fn(sub, carry):
            k, current, bufs = carry
            nxt, bufs = step(sub, current, bufs, k)
            return sub.add(k, sub.constant(np.int32(1))), nxt, bufs
        _, final, rows = b.while_loop(cond, body_fn, (b.constant(np.int32(0)), list(state),
                                                      rows), trip_count=trip_count)
    else:   # the loop's own counter gives the row: one counter fewer in the loop
        position, stride = induction

        def cond(sub, carry):
            current, _ = carry
            return forward_pass(sub, cond_region, list(current) + list(captured))[
                cond_region.outputs[0]]

        def body_fn(sub, carry):
            current, bufs = carry
            k = sub.sub(current[position], state[position])
            if stride != 1:
                k = sub.div(k, sub.constant(np.asarray(stride, k.dtype)))
            return step(sub, current, bufs, k)
        final, rows = b.while_loop(cond, body_fn, (list(state), rows), trip_count=trip_count)
    results = list(final) + list(captured)
    for new, old in zip(results, op.results):
        new.weak = old.weak
    return results, SavedLoop(body, list(rows))


def _induction_variable(body_region, num_state, trip_count):
    """(position, stride) of a state entry the body steps by a constant integer (a
    ``for`` loop's counter, or a backward loop's) that numbers the iterations exactly:
    ``(value - initial) // stride`` stays in its dtype's range for ``trip_count`` steps.
    None if there is none."""
    producers = {v: op for op in body_region.operations for v in op.results}
    for position, (param, out) in enumerate(zip(body_region.params[:num_state],
                                                body_region.outputs)):
        op = producers.get(out)
        if op is None or op.name not in ("add", "subtract") or out.shape != () or \
                not np.issubdtype(out.dtype, np.integer):
            continue
        a, c = op.operands
        if a is not param and (op.name == "subtract" or c is not param):
            continue   # (compared with `is`: Values overload ==)
        constant = producers.get(c if a is param else a)
        if constant is None or constant.name != "constant":
            continue
        stride = int(np.asarray(constant.attrs["value"]))
        stride = -stride if op.name == "subtract" else stride
        limits = np.iinfo(out.dtype)
        if stride != 0 and -limits.max <= stride * (trip_count - 1) <= limits.max and \
                (stride > 0 or limits.min < 0):
            return position, stride
    return None


# --- batching ----------------------------------------------------------------------------------

def _lanes(operands, dims):
    return next(v.shape[d] for v, d in zip(operands, dims) if d is not None)


def _as_dim(b, value, dim, batched, size):
    """``value`` (batched along ``dim``) with its lanes first if ``batched``, else as it is
    (it must then be unbatched)."""
    return to_front(b, value, dim, size) if batched else value


@batching_rule("while")
def _batch_while(b, op, operands, dims):
    """The state entries the body makes batched become batched from the start (a fixed
    point), lanes first.  A batched loop test runs the loop until every lane's test
    fails, each finished lane's state kept by a ``select``."""
    n = op.attrs["num_state"]
    cond_region, body_region = op.regions
    size = _lanes(operands, dims)
    captured = [to_front(b, v, d, size) if d is not None else v
                for v, d in zip(operands[n:], dims[n:])]
    captured_batched = [d is not None for d in dims[n:]]
    batched = [d is not None for d in dims[:n]]
    while True:
        grown = batched_outputs(body_region, batched + captured_batched)[:n]
        grown = [a or g for a, g in zip(batched, grown)]
        if grown == batched:
            break
        batched = grown
    test_batched = batched_outputs(cond_region, batched + captured_batched)[0]
    if test_batched:
        batched = [True] * n
    in_dims = [0 if is_batched else None for is_batched in batched]
    region_dims = in_dims + [0 if c else None for c in captured_batched]
    init = [_as_dim(b, v, d, is_batched, size)
            for v, d, is_batched in zip(operands[:n], dims[:n], batched)]

    def test(sub, state):
        (value,), (dim,) = batch_region(sub, cond_region, list(state) + captured, region_dims)
        return sub.reduce(value, "or", [0]) if dim is not None else value

    def step(sub, state):
        outs, out_dims = batch_region(sub, body_region, list(state) + captured, region_dims)
        new = [_as_dim(sub, v, d, is_batched, size)
               for v, d, is_batched in zip(outs[:n], out_dims[:n], batched)]
        if not test_batched:
            return new
        (going,), (dim,) = batch_region(sub, cond_region, list(state) + captured, region_dims)
        going = to_front(sub, going, dim)
        return [sub.select(sub.broadcast_in_dim(going, v.shape, (0,)), v, old)
                for v, old in zip(new, state)]
    final = b.while_loop(test, step, init,
                         trip_count=None if test_batched else op.attrs.get("trip_count"),
                         max_trip_count=op.attrs.get("max_trip_count"))
    results = list(final) + list(captured)
    return results, in_dims + [0 if c else None for c in captured_batched]


@batching_rule("case")
def _batch_case(b, op, operands, dims):
    """An unbatched index picks one batched branch for all lanes; a batched one runs
    every branch and picks each lane's result with ``select``."""
    index, passed = operands[0], operands[1:]
    size = _lanes(operands, dims)
    passed = [to_front(b, v, d, size) if d is not None else v
              for v, d in zip(passed, dims[1:])]
    passed_dims = [0 if d is not None else None for d in dims[1:]]
    if dims[0] is None:
        out_batched = [any(flags) for flags in zip(*(
            batched_outputs(r, [d is not None for d in passed_dims]) for r in op.regions))]

        def branch(region):
            def build(sub, values):
                outs, out_dims = batch_region(sub, region, list(values), passed_dims)
                return [_as_dim(sub, v, d, is_batched, size)
                        for v, d, is_batched in zip(outs, out_dims, out_batched)]
            return build
        results = b.conditional(index, [branch(r) for r in op.regions], passed)
        return results, [0 if is_batched else None for is_batched in out_batched]
    index = to_front(b, index, dims[0])
    chosen = None
    for k, region in reversed(list(enumerate(op.regions))):
        outs, out_dims = batch_region(b, region, passed, passed_dims)
        outs = [to_front(b, v, d, size) for v, d in zip(outs, out_dims)]
        if chosen is None:
            chosen = outs
            continue
        hit = b.eq(index, b.broadcast_in_dim(b.constant(np.asarray(k, index.dtype)),
                                             index.shape, ()))
        chosen = [b.select(b.broadcast_in_dim(hit, v.shape, (0,)), v, c)
                  for v, c in zip(outs, chosen)]
    return chosen, [0] * len(chosen)
