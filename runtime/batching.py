"""Batching: a region run on many lanes at once, one batch dimension per value.

`batch_region` replays a region's ops on batched operands: each value carries the
dimension its lanes run along (``None``: the same for every lane).  An op none of whose
operands is batched is replayed as it is (but a collective over the axis being batched,
`runtime.axes.binds_batching_axis`: its result depends on the lanes); any other goes
through its primitive's ``batching`` rule (`runtime.primitive`), which returns the
batched results and their batch dimensions.  This is the mechanism of JAX's ``vmap``: the
program is transformed, not run in a Python loop.
"""
from __future__ import annotations

from .autodiff.trace import replay
from .axes import binds_batching_axis
from .errors import PSCUnsupportedCallError
from .primitive import lookup


def batch_region(b, region, operands, dims):
    """(outputs, their batch dimensions) of ``region`` on ``operands`` batched along
    ``dims``.  Values the region captures from outside are not batched."""
    env = {param: (v, d) for param, v, d in zip(region.params, operands, dims)}
    for outer, inner in region.captures.items():
        env.setdefault(inner, (outer, None))
    for op in region.operations:
        batch_op(b, op, env)
    return [env[v][0] for v in region.outputs], [env[v][1] for v in region.outputs]


def batch_op(b, op, env) -> None:
    values = [env[v][0] for v in op.operands]
    dims = [env[v][1] for v in op.operands]
    if all(d is None for d in dims) and not binds_batching_axis(op):
        results, out_dims = replay(b, op, values), [None] * len(op.results)
    else:
        rule = lookup(op.name).batching
        if rule is None:
            raise b.error(PSCUnsupportedCallError, f"batching {op.name} is not supported")
        results, out_dims = rule(b, op, values, dims)
    for value, result, dim in zip(op.results, results, out_dims):
        if not any(result is v for v in values):   # (a rule may give an operand back)
            result.weak = value.weak
        env[value] = (result, dim)


def batched_outputs(region, batched_params) -> list[bool]:
    """Which outputs of ``region`` `batch_region` would batch, given which parameters are:
    a value is batched when any operand of the op making it is (captures are not)."""
    batched = {p for p, is_batched in zip(region.params, batched_params) if is_batched}
    for op in region.operations:
        if any(v in batched for v in op.operands):
            batched.update(op.results)
    return [v in batched for v in region.outputs]
