"""Leaves and shape primitives: ``constant``, ``iota``, ``broadcast_in_dim``, ``reshape``,
``transpose``, ``reverse``, ``slice``, ``pad``, ``concatenate``.

The shape primitives are linear in their array operands: their JVP is the op applied to
the tangents (`support.linear_jvp`) and their VJP is the transpose (a broadcast's is a
sum, a slice's a pad, a pad's a slice...).  Under `vmap` each moves the batch dimension
to the front and adds it to its shape attributes.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autodiff.trace import replay
from ..errors import PSCShapeError, PSCTypeError, PSCValueError
from ..lowering import dense_literal, i64, i64_array, tensor_type
from ..primitive import batching_rule, checks, lowers, nondifferentiable, vjp_rule
from .support import fmt, linear_jvp, require, same_dtypes, to_front


def _lower_with(*fields):
    """A lowering printing integer attributes: ``fields`` are (MLIR name, IR key, printer)."""
    def lower(p, op):
        p.generic(op, op.name, ", ".join(f"{name} = {show(op.attrs[key])}"
                                         for name, key, show in fields))
    return lower


def _unbatched(b, op, operands, dims):
    """A primitive without operands is never batched: it is built once for all lanes."""
    return replay(b, op, operands), [None]

# --- constant and iota ---------------------------------------------------------------------


@checks("constant")
def _check_constant(operands, attrs):
    value = attrs["value"]
    return [(value.shape, value.dtype)]


@lowers("constant")
def _lower_constant(p, op):
    value = op.attrs["value"]
    p.generic(op, "constant", f"value = {dense_literal(value)} : "
                              f"{tensor_type(value.shape, value.dtype)}")


@checks("iota")
def _check_iota(operands, attrs):
    shape, dim = attrs["shape"], attrs["dimension"]
    require(0 <= dim < len(shape), PSCValueError,
            f"iota dimension {dim} is out of range for shape {list(shape)}")
    require(not dtypes.is_bool(attrs["dtype"]), PSCTypeError, "iota cannot produce bool")
    return [(shape, attrs["dtype"])]


lowers("iota")(_lower_with(("iota_dimension", "dimension", i64)))
nondifferentiable("constant", "iota")
batching_rule("constant", "iota")(_unbatched)

# --- broadcast_in_dim -------------------------------------------------------------------------


@checks("broadcast_in_dim")
def _check_broadcast_in_dim(operands, attrs):
    (x,) = operands
    shape, dims = attrs["shape"], attrs["broadcast_dimensions"]
    require(len(dims) == x.ndim, PSCShapeError,
            f"broadcast_in_dim: {len(dims)} broadcast dimensions for an operand of rank "
            f"{x.ndim}")
    require(len(set(dims)) == len(dims) and all(0 <= d < len(shape) for d in dims),
            PSCShapeError, f"broadcast_in_dim: bad broadcast dimensions {list(dims)} for "
            f"result shape {list(shape)}")
    for in_dim, out_dim in enumerate(dims):
        require(x.shape[in_dim] in (1, shape[out_dim]), PSCShapeError,
                f"cannot broadcast {fmt(x)} to shape {list(shape)}: operand dimension "
                f"{in_dim} has size {x.shape[in_dim]}, result dimension {out_dim} has "
                f"size {shape[out_dim]}")
    return [(tuple(shape), x.dtype)]


lowers("broadcast_in_dim")(_lower_with(("broadcast_dimensions", "broadcast_dimensions",
                                        i64_array)))
linear_jvp("broadcast_in_dim")


@vjp_rule("broadcast_in_dim")
def _broadcast_vjp(b, op, primals, results, cts):
    (x,), (ct,) = primals, cts
    dims = op.attrs["broadcast_dimensions"]
    out_shape = results[0].shape
    summed = [d for d in range(len(out_shape)) if d not in dims]
    summed += [dims[i] for i in range(x.ndim) if x.shape[i] == 1 and out_shape[dims[i]] != 1]
    return [b.reshape(b.reduce(ct, "sum", summed), x.shape)]


@batching_rule("broadcast_in_dim")
def _batch_broadcast(b, op, operands, dims):
    x = to_front(b, operands[0], dims[0])
    shape = (x.shape[0],) + tuple(op.attrs["shape"])
    return [b.broadcast_in_dim(x, shape, (0,) + tuple(
        d + 1 for d in op.attrs["broadcast_dimensions"]))], [0]

# --- reshape, transpose, reverse ---------------------------------------------------------------


@checks("reshape")
def _check_reshape(operands, attrs):
    (x,) = operands
    shape = attrs["shape"]
    require(all(d >= 0 for d in shape) and int(np.prod(shape, dtype=np.int64)) == x.size,
            PSCShapeError, f"cannot reshape {fmt(x)} (size {x.size}) into shape "
            f"{list(shape)}")
    return [(tuple(shape), x.dtype)]


lowers("reshape")(lambda p, op: p.generic(op, "reshape"))
linear_jvp("reshape")
vjp_rule("reshape")(lambda b, op, primals, results, cts: [b.reshape(cts[0], primals[0].shape)])


@batching_rule("reshape")
def _batch_reshape(b, op, operands, dims):
    x = to_front(b, operands[0], dims[0])
    return [b.reshape(x, (x.shape[0],) + tuple(op.attrs["shape"]))], [0]


@checks("transpose")
def _check_transpose(operands, attrs):
    (x,) = operands
    perm = attrs["permutation"]
    require(sorted(perm) == list(range(x.ndim)), PSCValueError,
            f"transpose: {list(perm)} is not a permutation of the {x.ndim} axes of "
            f"{fmt(x)}")
    return [(tuple(x.shape[p] for p in perm), x.dtype)]


lowers("transpose")(_lower_with(("permutation", "permutation", i64_array)))
linear_jvp("transpose")
vjp_rule("transpose")(lambda b, op, primals, results, cts: [
    b.transpose(cts[0], np.argsort(op.attrs["permutation"]))])


@batching_rule("transpose")
def _batch_transpose(b, op, operands, dims):
    x = to_front(b, operands[0], dims[0])
    return [b.transpose(x, (0,) + tuple(p + 1 for p in op.attrs["permutation"]))], [0]


@checks("reverse")
def _check_reverse(operands, attrs):
    (x,) = operands
    dims = attrs["dimensions"]
    require(len(set(dims)) == len(dims) and all(0 <= d < x.ndim for d in dims),
            PSCValueError, f"reverse: dimensions {list(dims)} do not fit {fmt(x)}")
    return [(x.shape, x.dtype)]


lowers("reverse")(_lower_with(("dimensions", "dimensions", i64_array)))
linear_jvp("reverse")
vjp_rule("reverse")(lambda b, op, primals, results, cts: [
    b.reverse(cts[0], op.attrs["dimensions"])])


@batching_rule("reverse")
def _batch_reverse(b, op, operands, dims):
    x = to_front(b, operands[0], dims[0])
    return [b.reverse(x, [d + 1 for d in op.attrs["dimensions"]])], [0]

# --- slice and pad -------------------------------------------------------------------------


@checks("slice")
def _check_slice(operands, attrs):
    (x,) = operands
    start, limit, strides = attrs["start_indices"], attrs["limit_indices"], attrs["strides"]
    require(len(start) == len(limit) == len(strides) == x.ndim, PSCShapeError,
            f"slice of {fmt(x)} needs {x.ndim} start/limit/stride values")
    for d in range(x.ndim):
        require(0 <= start[d] <= limit[d] <= x.shape[d] and strides[d] >= 1, PSCValueError,
                f"slice [{start[d]}:{limit[d]}:{strides[d]}] is out of bounds for "
                f"dimension {d} of {fmt(x)}")
    shape = tuple(-(-(limit[d] - start[d]) // strides[d]) for d in range(x.ndim))
    return [(shape, x.dtype)]


lowers("slice")(_lower_with(("start_indices", "start_indices", i64_array),
                            ("limit_indices", "limit_indices", i64_array),
                            ("strides", "strides", i64_array)))
linear_jvp("slice")


@vjp_rule("slice")
def _slice_vjp(b, op, primals, results, cts):
    (x,), (ct,) = primals, cts
    start, strides = op.attrs["start_indices"], op.attrs["strides"]
    high = [x.shape[d] - (start[d] + (ct.shape[d] - 1) * strides[d] + 1) if ct.shape[d] else
            x.shape[d] - start[d] for d in range(x.ndim)]
    zero = b.constant(np.zeros((), ct.dtype))
    return [b.pad(ct, zero, start, high, [s - 1 if n else 0 for s, n in zip(strides, ct.shape)])]


@batching_rule("slice")
def _batch_slice(b, op, operands, dims):
    x, a = to_front(b, operands[0], dims[0]), op.attrs
    return [b.slice(x, (0,) + tuple(a["start_indices"]),
                    (x.shape[0],) + tuple(a["limit_indices"]), (1,) + tuple(a["strides"]))], [0]


@checks("pad")
def _check_pad(operands, attrs):
    x, pad_value = operands
    same_dtypes("pad", operands)
    require(pad_value.shape == (), PSCShapeError, "pad value must be a scalar")
    low, high, interior = attrs["low"], attrs["high"], attrs["interior"]
    require(len(low) == len(high) == len(interior) == x.ndim, PSCShapeError,
            f"pad of {fmt(x)} needs {x.ndim} low/high/interior values")
    shape = []
    for d, size in enumerate(x.shape):
        require(interior[d] >= 0, PSCValueError, "interior padding must be non-negative")
        out = low[d] + high[d] + size + max(size - 1, 0) * interior[d]
        require(out >= 0, PSCValueError, f"pad makes dimension {d} negative")
        shape.append(out)
    return [(tuple(shape), x.dtype)]


lowers("pad")(_lower_with(("edge_padding_low", "low", i64_array),
                          ("edge_padding_high", "high", i64_array),
                          ("interior_padding", "interior", i64_array)))
linear_jvp("pad", (0, 1))


@vjp_rule("pad")
def _pad_vjp(b, op, primals, results, cts):
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


@batching_rule("pad")
def _batch_pad(b, op, operands, dims):
    (x, value), a = operands, op.attrs
    size = x.shape[dims[0]] if dims[0] is not None else value.shape[dims[1]]
    x = to_front(b, x, dims[0], size)
    widths = [(0,) + tuple(a[k]) for k in ("low", "high", "interior")]
    if dims[1] is None:
        return [b.pad(x, value, *widths)], [0]
    # one padding value per lane: pad with zeros, then fill the padding lane by lane
    zero = b.constant(np.zeros((), x.dtype))
    padded = b.pad(x, zero, *widths)
    inside = b.pad(b.broadcast_in_dim(b.constant(True), x.shape, ()), b.constant(False),
                   *widths)
    fill = b.broadcast_in_dim(value, padded.shape, (0,))
    return [b.select(inside, padded, fill)], [0]

# --- concatenate ---------------------------------------------------------------------------


@checks("concatenate")
def _check_concatenate(operands, attrs):
    dim = attrs["dimension"]
    require(len(operands) >= 1, PSCValueError, "concatenate needs at least one operand")
    same_dtypes("concatenate", operands)
    first = operands[0]
    require(0 <= dim < first.ndim, PSCValueError,
            f"concatenate dimension {dim} is out of range for rank {first.ndim}")
    for v in operands:
        require(v.ndim == first.ndim and all(
            a == b for i, (a, b) in enumerate(zip(v.shape, first.shape)) if i != dim),
            PSCShapeError, "concatenate operands must match except along dimension "
            f"{dim}, got " + ", ".join(fmt(o) for o in operands))
    shape = list(first.shape)
    shape[dim] = sum(v.shape[dim] for v in operands)
    return [(tuple(shape), first.dtype)]


lowers("concatenate")(_lower_with(("dimension", "dimension", i64)))
linear_jvp("concatenate")


@vjp_rule("concatenate")
def _concatenate_vjp(b, op, primals, results, cts):
    (ct,), dim = cts, op.attrs["dimension"]
    out, offset = [], 0
    for x in primals:
        start = [0] * ct.ndim
        limit = list(ct.shape)
        start[dim], limit[dim] = offset, offset + x.shape[dim]
        out.append(b.slice(ct, start, limit))
        offset += x.shape[dim]
    return out


@batching_rule("concatenate")
def _batch_concatenate(b, op, operands, dims):
    size = next(v.shape[d] for v, d in zip(operands, dims) if d is not None)
    moved = [to_front(b, v, d, size) for v, d in zip(operands, dims)]
    return [b.concatenate(moved, op.attrs["dimension"] + 1)], [0]
