"""Forward mode: the JVP of a traced region, emitted into a builder.

`jvp_region` replays each op of a region on primal values and builds its tangent with the
op's rule.  A tangent of ``None`` is a symbolic zero (integer values, constants, values
captured from outside), so unused derivatives cost nothing.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import PSCUnsupportedCallError
from .rules import NONDIFFERENTIABLE, PARTIALS, is_float
from .trace import replay

# Ops linear in the operands at these positions (the others are indices or predicates).
LINEAR_OPERANDS = {
    "broadcast_in_dim": (0,), "reshape": (0,), "transpose": (0,), "reverse": (0,),
    "slice": (0,), "pad": (0, 1), "dynamic_slice": (0,), "dynamic_update_slice": (0, 1),
    "gather": (0,), "select": (1, 2), "convert": (0,), "concatenate": None,   # None: all
}


def zeros(b, shape, dtype):
    return b.broadcast_in_dim(b.constant(np.zeros((), dtype)), shape, ())


def zeros_like(b, value):
    return zeros(b, value.shape, value.dtype)


def _tangent_or_zeros(b, tangent, primal):
    return tangent if tangent is not None else zeros_like(b, primal)


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
    rule = _RULES.get(op.name)
    if op.name in NONDIFFERENTIABLE or all(t is None for t in tangents) and rule is None:
        results = replay(b, op, primals)
        out_tangents = [None] * len(results)
    elif rule is not None:
        results, out_tangents = rule(b, op, primals, tangents)
    elif op.name in PARTIALS:
        results = replay(b, op, primals)
        out_tangents = [_partials_jvp(b, op, primals, tangents, results[0])]
    elif op.name in LINEAR_OPERANDS:
        results = replay(b, op, primals)
        out_tangents = [_linear_jvp(b, op, primals, tangents, results[0])]
    else:
        raise b.error(PSCUnsupportedCallError, f"forward-mode differentiation of {op.name} "
                      "is not supported")
    for value, result, tangent in zip(op.results, results, out_tangents):
        env[value] = (result, tangent if tangent is not None and is_float(result) else None)


def _partials_jvp(b, op, primals, tangents, result):
    if not is_float(result):
        return None
    partials = PARTIALS[op.name](b, *primals, result)
    total = None
    for partial, tangent in zip(partials, tangents):
        if tangent is not None:
            term = b.mul(partial, tangent)
            total = term if total is None else b.add(total, term)
    return total


def _linear_jvp(b, op, primals, tangents, result):
    if not is_float(result):
        return None
    positions = LINEAR_OPERANDS[op.name]
    positions = range(len(primals)) if positions is None else positions
    if op.name == "convert" and not dtypes.is_inexact(primals[0].dtype):
        return None
    if all(tangents[i] is None for i in positions):
        return None
    operands = list(primals)
    for i in positions:
        operands[i] = _tangent_or_zeros(b, tangents[i], primals[i])
    return replay(b, op, operands)[0]


# --- ops with their own forward rules ---------------------------------------------------------

def _dot_general_jvp(b, op, primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    (result,) = replay(b, op, primals)
    terms = []
    if tx is not None:
        terms.append(replay(b, op, [tx, y])[0])
    if ty is not None:
        terms.append(replay(b, op, [x, ty])[0])
    tangent = terms[0] if len(terms) == 1 else b.add(*terms) if terms else None
    return [result], [tangent]


def _reduce_jvp(b, op, primals, tangents):
    (x,), (tx,) = primals, tangents
    (result,) = replay(b, op, primals)
    kind, dims = op.attrs["kind"], op.attrs["dimensions"]
    if tx is None or not is_float(result):
        return [result], [None]
    if kind == "sum":
        return [result], [replay(b, op, [tx])[0]]
    if kind in ("max", "min"):
        weights = chooser_weights(b, x, result, dims)
        return [result], [b.reduce(b.mul(weights, tx), "sum", dims)]
    if kind == "prod":
        return [result], [b.reduce(b.mul(product_of_others(b, x, dims), tx), "sum", dims)]
    return [result], [None]


def keep_dims(b, value, dims, shape):
    """``value`` (reduced over ``dims``) broadcast back to ``shape``."""
    kept = [d for d in range(len(shape)) if d not in dims]
    return b.broadcast_in_dim(value, shape, kept)


def chooser_weights(b, x, result, dims):
    """Where x attains the max/min, split evenly among ties (JAX's convention)."""
    hit = b.convert(b.eq(x, keep_dims(b, result, dims, x.shape)), x.dtype)
    count = b.reduce(hit, "sum", dims)
    return b.div(hit, keep_dims(b, count, dims, x.shape))


def product_of_others(b, x, dims):
    """For each element, the product of the other elements reduced with it: exclusive
    prefix times exclusive suffix products, without division (exact with zeros).  The
    scans are built from slices, pads and multiplies (log-depth doubling), so this can be
    differentiated again (second derivatives of ``prod``)."""
    others = [d for d in range(x.ndim) if d not in dims]
    moved = b.transpose(x, others + list(dims))
    lead = [x.shape[d] for d in others]
    n = int(np.prod([x.shape[d] for d in dims], dtype=np.int64))
    flat = b.reshape(moved, lead + [n])
    axis = len(lead)
    before = _exclusive_products(b, flat, axis)
    after = b.reverse(_exclusive_products(b, b.reverse(flat, [axis]), axis), [axis])
    others_product = b.reshape(b.mul(before, after), [*lead, *[x.shape[d] for d in dims]])
    return b.transpose(others_product, np.argsort(others + list(dims)))


def _shifted(b, x, axis, shift):
    """``x`` moved ``shift`` places along ``axis``, filled with ones."""
    n = x.shape[axis]
    limit = list(x.shape)
    limit[axis] = max(n - shift, 0)
    kept = b.slice(x, [0] * x.ndim, limit)
    low, high = [0] * x.ndim, [0] * x.ndim
    low[axis] = min(shift, n)
    return b.pad(kept, b.constant(np.ones((), x.dtype)), low, high)


def _exclusive_products(b, x, axis):
    """``out[i] = prod(x[:i])`` along ``axis`` (Hillis-Steele doubling)."""
    products = _shifted(b, x, axis, 1)
    shift = 1
    while shift < x.shape[axis]:
        products = b.mul(products, _shifted(b, products, axis, shift))
        shift *= 2
    return products


def _cumulative_jvp(b, op, primals, tangents):
    (result,) = replay(b, op, primals)
    if tangents[0] is None or not is_float(result):
        return [result], [None]
    if op.attrs["kind"] != "sum":
        raise b.error(PSCUnsupportedCallError, f"differentiating a cumulative "
                      f"{op.attrs['kind']} is not supported", "use a loop")
    return [result], [replay(b, op, [tangents[0]])[0]]


def _sort_jvp(b, op, primals, tangents):
    """Sorting carries the tangents along as extra payload operands."""
    float_positions = [i for i, t in enumerate(tangents) if t is not None]
    carried = [tangents[i] for i in float_positions]
    results = b.sort(primals + carried, op.attrs["dimension"], op.attrs["num_keys"],
                     op.attrs["is_stable"])
    n = len(primals)
    out_tangents = [None] * n
    for k, i in enumerate(float_positions):
        out_tangents[i] = results[n + k]
    return results[:n], out_tangents


def _scatter_jvp(b, op, primals, tangents):
    (result,) = replay(b, op, primals)
    mode = op.attrs["mode"]
    x, indices, updates = primals
    tx, _, tu = tangents
    if not is_float(result) or (tx is None and tu is None):
        return [result], [None]
    if mode not in ("set", "add"):
        raise b.error(PSCUnsupportedCallError, f"differentiating a scatter-{mode} is not "
                      "supported")
    operands = [_tangent_or_zeros(b, tx, x), indices, _tangent_or_zeros(b, tu, updates)]
    return [result], [replay(b, op, operands)[0]]


def _while_jvp(b, op, primals, tangents):
    from .control import while_jvp
    return while_jvp(b, op, primals, tangents)


def _case_jvp(b, op, primals, tangents):
    from .control import case_jvp
    return case_jvp(b, op, primals, tangents)


_RULES = {
    "dot_general": _dot_general_jvp, "reduce": _reduce_jvp, "cumulative": _cumulative_jvp,
    "sort": _sort_jvp, "scatter": _scatter_jvp, "while": _while_jvp, "case": _case_jvp,
}
