"""Differentiating control flow: ``case`` (both modes) and ``while`` (forward mode; reverse
mode when the trip count is known when the program is built, i.e. a ``for`` over a static
``range`` or ``fori_loop`` with static bounds).

Reverse mode through a fixed-trip loop re-runs the loop forward once, saving every
iteration's state in a buffer (the residuals), then runs a loop backwards over the saved
states, applying the body's VJP.  A ``while`` whose trip count is only known at run time
cannot be reversed this way (the buffer's size would be unknown): that is a `PSCError`
pointing to the fixed-trip forms.
"""
from __future__ import annotations

import numpy as np

from ..errors import PSCValueError
from .forward import jvp_region, zeros_like
from .reverse import backward_pass, forward_pass
from .rules import is_float


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


def while_vjp(b, op, primals, results, cts, saved=None):
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
    cond_region, body_region = op.regions
    cond_region = cond_region if guarded else None
    state, captured = primals[:n], primals[n:]
    if saved is None:   # the forward pass did not keep them: run the loop again
        saved = _saved_states(b, cond_region, body_region, state, captured, trip_count)[1]
    state_cts = _materialize(b, cts[:n], state)
    captured_cts = _materialize(b, [None] * len(captured), captured)
    counter = b.constant(np.int32(trip_count - 1))

    def cond(sub, carry):
        return sub.ge(carry[0], sub.constant(np.int32(0)))

    def body(sub, carry):
        k, cs, acc = carry
        current = [sub.reshape(sub.dynamic_slice(buf, [k] + [sub.constant(np.int32(0))] *
                                                 (buf.ndim - 1), (1,) + buf.shape[1:]),
                               buf.shape[1:]) for buf in saved]
        step_cts = _step_vjp(sub, cond_region, body_region, current, captured, state_cts,
                             list(cs))
        new_cs, grown = step_cts
        new_acc = [sub.add(a, g) for a, g in zip(acc, grown)]
        return sub.sub(k, sub.constant(np.int32(1))), new_cs, new_acc
    _, final_cs, final_acc = b.while_loop(
        cond, body, (counter, _present(state_cts), _present(captured_cts)))
    return _fill(state_cts, final_cs) + _fill(captured_cts, final_acc)


def _step_vjp(b, cond_region, body_region, current, captured, state_cts, cs):
    """Cotangents through one step: (state cotangents, captured cotangent increments).
    A guarded step (``cond_region``) applies the body's VJP only where the test held."""
    n = len(current)

    def through_body(sub, operands):
        cur, c = operands
        env = forward_pass(sub, body_region, list(cur) + list(captured), save_loops=True)
        out_cts = _fill(state_cts, c) + [None] * len(captured)
        param_cts, _ = backward_pass(sub, body_region, env, out_cts)
        return (_present(_materialize(sub, param_cts[:n], cur)),
                _present(_materialize(sub, param_cts[n:], captured)))
    if cond_region is None:
        return through_body(b, (current, cs))

    def skipped(sub, operands):
        _, c = operands
        return list(c), _present(_materialize(sub, [None] * len(captured), captured))
    pred = forward_pass(b, cond_region, list(current) + list(captured))[cond_region.outputs[0]]
    return b.conditional(pred, [through_body, skipped], (list(current), cs))


def _saved_states(b, cond_region, body_region, state, captured, trip_count):
    """Every iteration's input state, stacked: buffers of shape (trip_count, ...).  With a
    ``cond_region`` each step keeps its state once the loop test fails."""
    n = len(state)
    buffers = [b.broadcast_in_dim(b.constant(np.zeros((), s.dtype)), (trip_count,) + s.shape,
                                  ()) for s in state]
    zero = b.constant(np.int32(0))

    def cond(sub, carry):
        return sub.lt(carry[0], sub.constant(np.int32(trip_count)))

    def body(sub, carry):
        k, current, bufs = carry
        bufs = [sub.dynamic_update_slice(buf, sub.reshape(s, (1,) + s.shape),
                                         [k] + [sub.constant(np.int32(0))] * s.ndim)
                for buf, s in zip(bufs, current)]
        env = forward_pass(sub, body_region, list(current) + list(captured))
        nxt = [env[v] for v in body_region.outputs[:n]]
        if cond_region is not None:
            going = forward_pass(sub, cond_region, list(current) + list(captured))[
                cond_region.outputs[0]]
            nxt = [sub.select(going, new, old) for new, old in zip(nxt, current)]
        return sub.add(k, sub.constant(np.int32(1))), nxt, bufs
    _, final, saved = b.while_loop(cond, body, (zero, list(state), buffers),
                                   trip_count=trip_count)
    return final, saved


def saving_while(b, op, operands):
    """Replay a loop with a known trip count (or bound) as the loop that also saves every
    iteration's state: (the loop's results, the saved-state buffers)."""
    n = op.attrs["num_state"]
    state, captured = operands[:n], operands[n:]
    guarded = not op.attrs.get("trip_count")
    trip_count = op.attrs["max_trip_count"] if guarded else op.attrs["trip_count"]
    cond_region, body_region = op.regions
    final, saved = _saved_states(b, cond_region if guarded else None, body_region, state,
                                 captured, trip_count)
    results = list(final) + list(captured)
    for new, old in zip(results, op.results):
        new.weak = old.weak
    return results, saved
