"""Functions with user-defined derivatives, and ``stop_gradient``
(`runtime.autodiff.custom`: ``custom_jvp``, ``custom_vjp``, ``stop_gradient``).

``custom_jvp_call`` and ``custom_vjp_call`` hold the traced primal function as their one
region, closed like a ``case`` branch: the operands are the function's array arguments,
then the values the region captures, one region parameter each.  The ``rule`` attribute
is the `runtime.autodiff.custom.CustomRule` that runs the user's rule functions (it is
plain Python; this module never imports the transforms).

Rules:
* lowering: the primal region, inlined (its parameters are the operands' names);
* ``custom_jvp_call``: its JVP is the user's JVP rule.  Its VJP is the transpose of that
  rule's tangent map, which is linear in the tangents: the map is traced as a region on
  tangent parameters and the reverse driver runs over it (as JAX transposes the JVP);
* ``custom_vjp_call``: the forward pass runs the user's ``fwd`` and keeps its residuals
  (``save_for_vjp``); the VJP runs ``bwd`` on them.  It has no forward mode (as in JAX);
* batching: the same op on the batched primal region, its rule a `BatchedRule` that
  traces the user's rule on one lane and batches it: a derivative taken after ``vmap``
  still runs the user's rule (as JAX's batched custom_jvp_call/custom_vjp_call do);
* ``stop_gradient``: the identity, with zero derivative.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from jax import tree_util

from ..autodiff.reverse import backward_pass, forward_pass
from ..autodiff.tangents import is_float, zeros_like
from ..autodiff.trace import trace
from ..batching import batch_region
from ..context import current_builder
from ..errors import PSCTypeError, PSCValueError
from ..ir import Region, Value
from ..lowering import lower_operation
from ..primitive import (batching_rule, checks, jvp_rule, lowers, nondifferentiable,
                         saves_for_vjp, vjp_rule)
from .support import to_front

CUSTOM_CALLS = ("custom_jvp_call", "custom_vjp_call")


# --- checks and lowerings --------------------------------------------------------------------

@checks(*CUSTOM_CALLS)
def _check_custom_call(operands, attrs):
    return list(attrs["result_avals"])


@lowers(*CUSTOM_CALLS)
def _lower_custom_call(p, op):
    """The primal region printed in place: derivatives were taken before lowering."""
    (region,) = op.regions
    for param, operand in zip(region.params, op.operands):
        p.names[param] = p.name(operand)
    for inner in region.operations:
        lower_operation(p, inner)
    for result, output in zip(op.results, region.outputs):
        p.names[result] = p.name(output)


# --- custom_jvp_call ---------------------------------------------------------------------------

def _inputs(b, op, primals, tangents):
    """The function's arguments (less the captured values) and their tangents as arrays.
    A captured value with a tangent is a closure over a differentiated value, which the
    user's rule cannot see: refused."""
    n = op.attrs["num_inputs"]
    if tangents is not None and any(t is not None for t in tangents[n:]):
        raise PSCValueError(
            f"the custom derivative function {op.attrs['rule'].name} reads a value being "
            "differentiated from an enclosing function, which its rule cannot see",
            op.location or b.location,
            "pass that value to the custom function as an argument")
    ts = None if tangents is None else [t if t is not None else zeros_like(b, p)
                                        for t, p in zip(tangents[:n], primals[:n])]
    return list(primals[:n]), ts


@jvp_rule("custom_jvp_call")
def custom_jvp_jvp(b, op, primals, tangents):
    inputs, ts = _inputs(b, op, primals, tangents)
    return op.attrs["rule"].jvp(b, op, inputs, ts)


@vjp_rule("custom_jvp_call")
def custom_jvp_vjp(b, op, primals, results, cts):
    """The transpose of the user's tangent map ``t -> jvp(primals, t)[1]``."""
    inputs, _ = _inputs(b, op, primals, None)
    rule = op.attrs["rule"]
    floats = [i for i, v in enumerate(inputs) if is_float(v)]

    def tangent_map(*float_tangents):
        ts = [zeros_like(b, v) for v in inputs]   # (integers: zero tangents)
        for i, t in zip(floats, float_tangents):
            ts[i] = t
        return rule.jvp(current_builder(), op, inputs, ts)[1]   # (the traced region's)
    traced = trace(b, tangent_map, tuple(inputs[i] for i in floats))
    region = traced.region
    env = forward_pass(b, region, [zeros_like(b, inputs[i]) for i in floats])
    param_cts, _ = backward_pass(b, _linear_part(region), env, list(cts))
    out = [None] * len(primals)
    for i, ct in zip(floats, param_cts):
        out[i] = ct
    return out


def _linear_part(region: Region) -> Region:
    """``region`` less the ops that do not read its (tangent) parameters: the backward pass
    stops at primal values (a primal op may be this very custom function again, whose VJP
    would recurse).  A loop in it is run again by its VJP (nothing was saved)."""
    reached = set(region.params)
    linear = Region(region.name + "_linear", region.parent)
    for op in region.operations:
        if any(v in reached for v in op.operands):
            reached.update(op.results)
            linear.operations.append(op)
    linear.params, linear.outputs = list(region.params), list(region.outputs)
    return linear


# --- custom_vjp_call ---------------------------------------------------------------------------

@jvp_rule("custom_vjp_call")
def custom_vjp_jvp(b, op, primals, tangents):
    raise PSCTypeError(
        f"can't apply forward-mode autodiff (jvp) to a custom_vjp function "
        f"({op.attrs['rule'].name})", op.location or b.location,
        "use reverse mode (grad, vjp, jacrev), or define the function with custom_jvp")


@saves_for_vjp("custom_vjp_call")
def save_custom_vjp(b, op, operands):
    """The forward pass runs the user's ``fwd``: its outputs and its residuals."""
    inputs, _ = _inputs(b, op, operands, None)
    return op.attrs["rule"].fwd(b, op, inputs)


@vjp_rule("custom_vjp_call")
def custom_vjp_vjp(b, op, primals, results, cts, saved=None):
    inputs, _ = _inputs(b, op, primals, None)
    rule = op.attrs["rule"]
    if saved is None:   # the forward pass did not keep the residuals: run fwd again
        saved = rule.fwd(b, op, inputs)[1]
    cts = [ct if ct is not None else zeros_like(b, r) for ct, r in zip(cts, results)]
    input_cts = rule.bwd(b, op, inputs, saved, cts)
    return list(input_cts) + [None] * (len(primals) - len(inputs))


# --- batching ----------------------------------------------------------------------------------

@batching_rule(*CUSTOM_CALLS)
def _batch_custom_call(b, op, operands, dims):
    """The op again, on the batched primal region, with a `BatchedRule`: a derivative
    taken after ``vmap`` still runs the user's rule (per lane, batched), as in JAX.  The
    batched operands are moved to dimension 0, and every result is batched along it."""
    size = next(v.shape[d] for v, d in zip(operands, dims) if d is not None)
    operands = [v if d is None else _front(b, v, d, size) for v, d in zip(operands, dims)]
    dims = [None if d is None else 0 for d in dims]
    (region,) = op.regions

    def batched_primal(*params):
        outs, out_dims = batch_region(current_builder(), region, list(params), dims)
        return [_front(current_builder(), v, d, size) for v, d in zip(outs, out_dims)]
    traced = trace(b, batched_primal, tuple(operands))
    batched = traced.region
    captured = list(batched.captures)
    batched.params.extend(batched.captures[v] for v in captured)   # closed, like a branch
    n = op.attrs["num_inputs"]
    rule = BatchedRule(op.attrs["rule"], op, tuple(dims[:n]), size)
    attrs = dict(op.attrs, rule=rule,
                 result_avals=tuple((v.shape, v.dtype) for v in batched.outputs))
    results = b.emit(op.name, operands + captured, (batched,), **attrs)
    for result, output in zip(results, op.results):
        result.weak = output.weak
    return results, [0] * len(results)


def _front(b, value, dim, size):
    """``value`` batched along dimension 0 (moved there, or broadcast if unbatched), as
    weak as it was (a residual of a Python scalar stays weak for ``bwd``)."""
    if dim == 0:
        return value
    moved = to_front(b, value, dim, size)
    moved.weak = value.weak
    return moved


@dataclasses.dataclass(eq=False)
class BatchedRule:
    """The rule of a batched custom call: the per-lane op's rule (``inner``, run on
    ``inner_op``), traced on one lane's values and batched with `batch_region`.  It has
    `CustomRule`'s interface.  The inputs are batched along 0 or not (``in_dims``), with
    their tangents and cotangents alike; the results, residuals and output tangents are
    all batched along 0."""

    inner: Any
    inner_op: Any
    in_dims: tuple
    size: int

    @property
    def name(self) -> str:
        return self.inner.name

    def jvp(self, b, op, inputs, tangents):
        """(primal outputs, tangent outputs), batched along 0."""
        n = len(inputs)

        def lane(*values):
            primal, tangent = self.inner.jvp(current_builder(), self.inner_op,
                                             list(values[:n]), list(values[n:]))
            return list(primal), list(tangent)
        (primal, tangent), _ = self._batched(b, lane, list(inputs) + list(tangents),
                                             self.in_dims * 2)
        return primal, tangent

    def fwd(self, b, op, inputs):
        """(the results, residuals) of the user's ``fwd``, batched along 0."""
        def lane(*values):
            results, residuals = self.inner.fwd(current_builder(), self.inner_op,
                                                list(values))
            return list(results), residuals
        (results, residuals), _ = self._batched(b, lane, list(inputs), self.in_dims)
        return results, residuals

    def bwd(self, b, op, inputs, residuals, cotangents):
        """The inputs' cotangents from the user's ``bwd``; an unbatched input's is summed
        over the lanes."""
        n, res_leaves, res_tree = len(inputs), *tree_util.tree_flatten(residuals)
        arrays = [i for i, r in enumerate(res_leaves) if isinstance(r, Value)]
        k = len(arrays)

        def lane(*values):
            cb = current_builder()
            leaves = list(res_leaves)
            for i, v in zip(arrays, values[n:n + k]):
                leaves[i] = v
            cts = self.inner.bwd(cb, self.inner_op, list(values[:n]),
                                 tree_util.tree_unflatten(res_tree, leaves),
                                 list(values[n + k:]))
            return [ct if ct is not None else zeros_like(cb, x)
                    for ct, x in zip(cts, values[:n])]
        values = list(inputs) + [res_leaves[i] for i in arrays] + list(cotangents)
        dims = list(self.in_dims) + [0] * (k + len(cotangents))
        cts, ct_dims = self._batched(b, lane, values, dims, front=False)
        return [_match(b, ct, d, want, self.size)
                for ct, d, want in zip(cts, ct_dims, self.in_dims)]

    def _batched(self, b, fn, values, dims, front=True):
        """``fn`` traced on one lane of ``values`` (batched along ``dims``, 0 or None) and
        batched: its outputs (a pytree; array leaves batched along 0 if ``front``), and
        the flat array outputs' batch dimensions."""
        lane = [Value(v.shape[1:] if d == 0 else v.shape, v.dtype, None, weak=v.weak)
                for v, d in zip(values, dims)]
        traced = trace(b, fn, tuple(lane))
        outs, out_dims = batch_region(b, traced.region, values, dims)
        if front:
            outs = [_front(b, v, d, self.size) for v, d in zip(outs, out_dims)]
            out_dims = [0] * len(outs)
        it = iter(outs)
        leaves = [next(it) if isinstance(v, Value) else v for v in traced.outputs]
        return tree_util.tree_unflatten(traced.out_treedef, leaves), out_dims


def _match(b, ct, dim, want, size):
    """A cotangent batched along ``dim`` for an input batched along ``want`` (0 or None):
    moved or broadcast to 0, or summed over the lanes for an unbatched input."""
    if want is None:
        return ct if dim is None else b.reduce(ct, "sum", [dim])
    return _front(b, ct, dim, size)


# --- stop_gradient -----------------------------------------------------------------------------

@checks("stop_gradient")
def _check_stop_gradient(operands, attrs):
    (x,) = operands
    return [(x.shape, x.dtype)]


@lowers("stop_gradient")
def _lower_stop_gradient(p, op):
    p.names[op.results[0]] = p.name(op.operands[0])   # the identity: no instruction


nondifferentiable("stop_gradient")


@batching_rule("stop_gradient")
def _batch_stop_gradient(b, op, operands, dims):
    return b.emit("stop_gradient", operands), list(dims)
