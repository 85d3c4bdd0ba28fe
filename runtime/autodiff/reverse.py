"""Reverse mode: the VJP of a traced region, emitted into a builder.

`vjp_region` replays the region's ops on primal values (`replay`, keeping every
intermediate), then walks the ops backwards from the output cotangents, accumulating each
operand's cotangent with the op's rule: element-wise ops through `rules.PARTIALS`, linear
structural ops through their transposes, the rest through their own rules.  Cotangents are
ordinary builder values, so the backward program can itself be differentiated again.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import PSCUnsupportedCallError
from .forward import chooser_weights, keep_dims, product_of_others, zeros_like
from .rules import NONDIFFERENTIABLE, PARTIALS, is_float
from .trace import replay


def forward_pass(b, region, primals, save_loops=False):
    """Replay ``region`` on ``primals``: a map from each region value to its value in b.

    With ``save_loops`` (a backward pass from the region's outputs follows), each loop
    with a known trip count (or a bound on it) that the backward pass will differentiate
    is replayed as the loop that also saves what each iteration's VJP needs; the buffers
    are kept in the map under the op."""
    saving = differentiated_loops(region) if save_loops else ()
    env = dict(zip(region.params, primals))
    for outer, inner in region.captures.items():
        env.setdefault(inner, outer)
    for op in region.operations:
        operands = [env[v] for v in op.operands]
        if op in saving:
            from .control import saving_while
            results, env[op] = saving_while(b, op, operands)
        else:
            results = replay(b, op, operands)
        env.update(zip(op.results, results))
    return env


def differentiated_loops(region) -> set:
    """The bounded loops of ``region`` that a backward pass from its float outputs reaches
    (walking back as `backward_pass` does).  Only those are worth saving, and a loop off
    the gradient's path must not be: its body may have no VJP at all."""
    with_ct = {v for v in region.outputs if is_float(v)}
    loops = set()
    for op in reversed(region.operations):
        if op.name in NONDIFFERENTIABLE or not any(v in with_ct for v in op.results):
            continue
        if op.name == "while" and is_bounded(op):
            loops.add(op)
        with_ct.update(v for v in op.operands if is_float(v))
    return loops


def is_bounded(op) -> bool:
    return bool(op.attrs.get("trip_count") or op.attrs.get("max_trip_count"))


def backward_pass(b, region, env, output_cotangents):
    """Cotangents of ``region``'s parameters (None for no dependence or integers)."""
    cts: dict = {}
    for value, ct in zip(region.outputs, output_cotangents):
        if ct is not None and is_float(value):
            _accumulate(b, cts, value, ct)
    for op in reversed(region.operations):
        out_cts = [cts.get(v) for v in op.results]
        if all(ct is None for ct in out_cts) or op.name in NONDIFFERENTIABLE:
            continue
        primals = [env[v] for v in op.operands]
        results = [env[v] for v in op.results]
        if op.name == "while":
            from .control import while_vjp
            operand_cts = while_vjp(b, op, primals, results, out_cts, env.get(op))
        else:
            operand_cts = vjp_op(b, op, primals, results, out_cts)
        for value, ct in zip(op.operands, operand_cts):
            if ct is not None and is_float(value):
                _accumulate(b, cts, value, ct)
    return [cts.get(p) for p in region.params], {outer: cts.get(inner) for outer, inner in
                                                region.captures.items()}


def _accumulate(b, cts, value, ct):
    if ct.dtype != value.dtype:
        ct = b.convert(ct, value.dtype)
    cts[value] = ct if value not in cts else b.add(cts[value], ct)


def vjp_op(b, op, primals, results, out_cts):
    rule = _RULES.get(op.name)
    if rule is not None:
        return rule(b, op, primals, results, out_cts)
    if op.name in PARTIALS:
        (ct,) = out_cts
        partials = PARTIALS[op.name](b, *primals, results[0])
        return [b.mul(p, ct) if is_float(x) else None for p, x in zip(partials, primals)]
    raise b.error(PSCUnsupportedCallError, f"reverse-mode differentiation of {op.name} is "
                  "not supported")


# --- transposes of linear structural ops ------------------------------------------------------

def _broadcast_t(b, op, primals, results, cts):
    (x,), (ct,) = primals, cts
    dims = op.attrs["broadcast_dimensions"]
    out_shape = results[0].shape
    summed = [d for d in range(len(out_shape)) if d not in dims]
    summed += [dims[i] for i in range(x.ndim) if x.shape[i] == 1 and out_shape[dims[i]] != 1]
    return [b.reshape(b.reduce(ct, "sum", summed), x.shape)]


def _reshape_t(b, op, primals, results, cts):
    return [b.reshape(cts[0], primals[0].shape)]


def _transpose_t(b, op, primals, results, cts):
    return [b.transpose(cts[0], np.argsort(op.attrs["permutation"]))]


def _reverse_t(b, op, primals, results, cts):
    return [b.reverse(cts[0], op.attrs["dimensions"])]


def _slice_t(b, op, primals, results, cts):
    (x,), (ct,) = primals, cts
    start, strides = op.attrs["start_indices"], op.attrs["strides"]
    high = [x.shape[d] - (start[d] + (ct.shape[d] - 1) * strides[d] + 1) if ct.shape[d] else
            x.shape[d] - start[d] for d in range(x.ndim)]
    zero = b.constant(np.zeros((), ct.dtype))
    return [b.pad(ct, zero, start, high, [s - 1 if n else 0 for s, n in zip(strides, ct.shape)])]


def _pad_t(b, op, primals, results, cts):
    (x, _), (ct,) = primals, cts
    low, high, interior = op.attrs["low"], op.attrs["high"], op.attrs["interior"]
    zero = b.constant(np.zeros((), ct.dtype))
    # undo negative edge padding (cropping) first, then take every (interior+1)-th element
    unpadded = b.pad(ct, zero, [max(-lo, 0) for lo in low], [max(-hi, 0) for hi in high])
    start = [max(lo, 0) for lo in low]
    limit = [unpadded.shape[d] - max(high[d], 0) for d in range(x.ndim)]
    ct_x = b.slice(unpadded, start, limit, [i + 1 for i in interior])
    ct_pad = b.sub(b.reduce(ct, "sum", range(ct.ndim)), b.reduce(ct_x, "sum", range(x.ndim)))
    return [ct_x, ct_pad]


def _concatenate_t(b, op, primals, results, cts):
    (ct,), dim = cts, op.attrs["dimension"]
    out, offset = [], 0
    for x in primals:
        start = [0] * ct.ndim
        limit = list(ct.shape)
        start[dim], limit[dim] = offset, offset + x.shape[dim]
        out.append(b.slice(ct, start, limit))
        offset += x.shape[dim]
    return out


def _convert_t(b, op, primals, results, cts):
    (x,) = primals
    return [b.convert(cts[0], x.dtype) if dtypes.is_inexact(x.dtype) else None]


def _select_t(b, op, primals, results, cts):
    pred, (ct,) = primals[0], cts
    zero = zeros_like(b, ct)
    if pred.shape != ct.shape:
        pred = b.broadcast_in_dim(pred, ct.shape, ())
    return [None, b.select(pred, ct, zero), b.select(pred, zero, ct)]


def _dynamic_slice_t(b, op, primals, results, cts):
    x, *indices = primals
    return [b.dynamic_update_slice(zeros_like(b, x), cts[0], indices)] + [None] * len(indices)


def _dynamic_update_slice_t(b, op, primals, results, cts):
    x, update, *indices = primals
    (ct,) = cts
    ct_x = b.dynamic_update_slice(ct, zeros_like(b, update), indices)
    return [ct_x, b.dynamic_slice(ct, indices, update.shape)] + [None] * len(indices)


def _gather_t(b, op, primals, results, cts):
    (x, indices), (ct,), a = primals, cts, op.attrs
    ct_x = b.scatter(zeros_like(b, x), indices, ct, update_window_dims=a["offset_dims"],
                     inserted_window_dims=a["collapsed_slice_dims"],
                     scatter_dims_to_operand_dims=a["start_index_map"],
                     index_vector_dim=a["index_vector_dim"], mode="add",
                     input_batching_dims=a["operand_batching_dims"],
                     scatter_indices_batching_dims=a["start_indices_batching_dims"])
    return [ct_x, None]


def _scatter_t(b, op, primals, results, cts):
    (x, indices, updates), (ct,), a = primals, cts, op.attrs
    if a["mode"] not in ("set", "add"):
        raise b.error(PSCUnsupportedCallError, f"differentiating a scatter-{a['mode']} is "
                      "not supported")
    window = iter(a["update_window_dims"])
    sizes = [1 if d in a["inserted_window_dims"] or d in a["input_batching_dims"] else
             updates.shape[next(window)] for d in range(x.ndim)]
    ct_updates = b.gather(ct, indices, offset_dims=a["update_window_dims"],
                          collapsed_slice_dims=a["inserted_window_dims"],
                          start_index_map=a["scatter_dims_to_operand_dims"],
                          index_vector_dim=a["index_vector_dim"], slice_sizes=sizes,
                          operand_batching_dims=a["input_batching_dims"],
                          start_indices_batching_dims=a["scatter_indices_batching_dims"])
    if a["mode"] == "set":   # the overwritten elements did not reach the result
        ct = replay(b, op, [ct, indices, zeros_like(b, updates)])[0]
    return [ct, None, ct_updates]


# --- other ops ---------------------------------------------------------------------------------

def _dot_general_t(b, op, primals, results, cts):
    (x, y), (ct,), a = primals, cts, op.attrs
    lb, rb, lc, rc = a["lhs_batch"], a["rhs_batch"], a["lhs_contract"], a["rhs_contract"]
    lf = [d for d in range(x.ndim) if d not in lb and d not in lc]
    rf = [d for d in range(y.ndim) if d not in rb and d not in rc]
    nb = len(lb)
    ct_b = list(range(nb))
    ct_lf = list(range(nb, nb + len(lf)))
    ct_rf = list(range(nb + len(lf), ct.ndim))
    grads = [None, None]
    if is_float(x):
        g = b.dot_general(ct, y, (ct_rf, rf), (ct_b, rb))   # [batch, lf, rc sorted]
        rc_sorted = sorted(rc)
        axes = list(lb) + lf + [lc[rc.index(d)] for d in rc_sorted]
        grads[0] = b.transpose(g, np.argsort(axes))
    if is_float(y):
        g = b.dot_general(ct, x, (ct_lf, lf), (ct_b, lb))   # [batch, rf, lc sorted]
        lc_sorted = sorted(lc)
        axes = list(rb) + rf + [rc[lc.index(d)] for d in lc_sorted]
        grads[1] = b.transpose(g, np.argsort(axes))
    return grads


def _reduce_t(b, op, primals, results, cts):
    (x,), (ct,), dims = primals, cts, op.attrs["dimensions"]
    kind = op.attrs["kind"]
    spread = keep_dims(b, ct, dims, x.shape)
    if kind == "sum":
        return [spread]
    if kind in ("max", "min"):
        return [b.mul(spread, chooser_weights(b, x, results[0], dims))]
    if kind == "prod":
        return [b.mul(spread, product_of_others(b, x, dims))]
    return [None]


def _cumulative_t(b, op, primals, results, cts):
    if op.attrs["kind"] != "sum":
        raise b.error(PSCUnsupportedCallError, f"differentiating a cumulative "
                      f"{op.attrs['kind']} is not supported", "use a loop")
    return [b.cumulative(cts[0], "sum", op.attrs["axis"], not op.attrs["reverse"])]


def _sort_t(b, op, primals, results, cts):
    """Un-sort the cotangents: sort again carrying the positions, then sort by them."""
    dim, keys = op.attrs["dimension"], op.attrs["num_keys"]
    positions = b.iota(primals[0].shape, np.int32, dim)
    permutation = b.sort(list(primals) + [positions], dim, keys, op.attrs["is_stable"])[-1]
    present = [i for i, ct in enumerate(cts) if ct is not None]
    unsorted = b.sort([permutation] + [cts[i] for i in present], dim, 1, True)[1:]
    out = [None] * len(primals)
    for i, ct in zip(present, unsorted):
        out[i] = ct
    return out


def _while_t(b, op, primals, results, cts):
    from .control import while_vjp
    return while_vjp(b, op, primals, results, cts)


def _case_t(b, op, primals, results, cts):
    from .control import case_vjp
    return case_vjp(b, op, primals, results, cts)


_RULES = {
    "broadcast_in_dim": _broadcast_t, "reshape": _reshape_t, "transpose": _transpose_t,
    "reverse": _reverse_t, "slice": _slice_t, "pad": _pad_t, "concatenate": _concatenate_t,
    "convert": _convert_t, "select": _select_t, "dynamic_slice": _dynamic_slice_t,
    "dynamic_update_slice": _dynamic_update_slice_t, "gather": _gather_t,
    "scatter": _scatter_t, "dot_general": _dot_general_t, "reduce": _reduce_t,
    "cumulative": _cumulative_t, "sort": _sort_t, "while": _while_t, "case": _case_t,
}
