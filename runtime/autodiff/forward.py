"""Forward mode: the JVP of a traced region, emitted into a builder.

`jvp_region` replays each op of a region on primal values and builds its tangent with the
op's ``jvp`` rule (`runtime.primitive`).  A tangent of ``None`` is a symbolic zero
(`runtime.autodiff.tangents`), so unused derivatives cost nothing.
"""
from __future__ import annotations

from ..errors import PSCUnsupportedCallError
from ..primitive import lookup
from .tangents import is_float
from .trace import replay


def jvp_region(b, region, primals, tangents):
    """(primal outputs, tangent outputs) of ``region`` at ``primals`` along ``tangents``."""
    env = {}
    for param, primal, tangent in zip(region.params, primals, tangents):
        env[param] = (primal, tangent if tangent is not None and is_float(param) else None)
    for outer, inner in region.captures.items():
        env.setdefault(inner, (outer, None))
    for op in region.operations:
        jvp_op(b, op, env)
    outs = [env[v] for v in region.outputs]
    return [p for p, _ in outs], [t for _, t in outs]


def jvp_op(b, op, env) -> None:
    primals = [env[v][0] for v in op.operands]
    tangents = [env[v][1] for v in op.operands]
    rule = lookup(op.name)
    if rule.nondifferentiable:
        results, out_tangents = replay(b, op, primals), None
    elif rule.jvp is None:
        raise b.error(PSCUnsupportedCallError, f"forward-mode differentiation of {op.name} "
                      "is not supported")
    else:
        results, out_tangents = rule.jvp(b, op, primals, tangents)
    out_tangents = out_tangents or [None] * len(results)
    for value, result, tangent in zip(op.results, results, out_tangents):
        env[value] = (result, tangent if tangent is not None and is_float(result) else None)
