"""Indexing primitives: ``dynamic_slice``, ``dynamic_update_slice``, ``gather``, ``scatter``.

Start indices are traced values.  ``dynamic_slice``, ``dynamic_update_slice`` and
``gather`` clamp them so the slice stays inside the operand; ``scatter`` skips an update
whose window would fall outside.  The derivatives are linear: a gather's VJP is a
scatter-add, a scatter's a gather.  Under `vmap`, batched start indices turn the dynamic
slices into a gather or scatter with one batching dimension (StableHLO's
``operand_batching_dims``), each lane reading or writing its own slice.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autodiff.tangents import is_float, tangent_or_zeros, zeros_like
from ..autodiff.trace import replay
from ..errors import PSCShapeError, PSCTypeError, PSCUnsupportedCallError, PSCValueError
from ..lowering import binary_body, dims_attr, i64_array
from ..primitive import batching_rule, checks, jvp_rule, lowers, vjp_rule
from .support import (check_dims, check_scalar_indices, const, fmt, linear_jvp, require,
                      same_dtypes, to_front)


def _shift(dims):
    return tuple(d + 1 for d in dims)

# --- dynamic_slice and dynamic_update_slice -------------------------------------------------

@checks("dynamic_slice")
def _check_dynamic_slice(operands, attrs):
    x, *indices = operands
    sizes = attrs["slice_sizes"]
    check_scalar_indices("dynamic_slice", x, indices)
    require(len(sizes) == x.ndim and all(0 <= s <= d for s, d in zip(sizes, x.shape)),
            PSCShapeError, f"dynamic_slice sizes {list(sizes)} do not fit {fmt(x)}")
    return [(tuple(sizes), x.dtype)]


lowers("dynamic_slice")(lambda p, op: p.generic(
    op, "dynamic_slice", f"slice_sizes = {i64_array(op.attrs['slice_sizes'])}"))
linear_jvp("dynamic_slice", (0,))


@vjp_rule("dynamic_slice")
def _dynamic_slice_vjp(b, op, primals, results, cts):
    x, *indices = primals
    return [b.dynamic_update_slice(zeros_like(b, x), cts[0], indices)] + [None] * len(indices)


@batching_rule("dynamic_slice")
def _batch_dynamic_slice(b, op, operands, dims):
    (x, *indices), sizes = operands, tuple(op.attrs["slice_sizes"])
    if all(d is None for d in dims[1:]):   # one slice position for all lanes
        x = to_front(b, x, dims[0])
        start = b.constant(np.zeros((), indices[0].dtype if indices else np.int32))
        return [b.dynamic_slice(x, [start, *indices], (x.shape[0],) + sizes)], [0]
    n = len(indices)
    if dims[0] is None:   # one array, many positions: no copy of it per lane
        starts = _starts(b, indices, dims[1:])
        return [b.gather(x, starts, offset_dims=range(1, n + 1), collapsed_slice_dims=(),
                         start_index_map=range(n), index_vector_dim=1,
                         slice_sizes=sizes)], [0]
    x, starts = _lanes_and_starts(b, x, dims[0], indices, dims[1:])
    return [b.gather(x, starts, offset_dims=range(1, n + 1), collapsed_slice_dims=(),
                     start_index_map=range(1, n + 1), index_vector_dim=1,
                     slice_sizes=(1,) + sizes, operand_batching_dims=(0,),
                     start_indices_batching_dims=(0,))], [0]


def _lanes_and_starts(b, x, x_dim, indices, index_dims):
    """``x`` with its lanes first (broadcast if unbatched) and the start indices as one
    ``(lanes, len(indices))`` array."""
    size = next(v.shape[d] for v, d in zip([x, *indices], [x_dim, *index_dims])
                if d is not None)
    return to_front(b, x, x_dim, size), _starts(b, indices, index_dims, size)


def _starts(b, indices, index_dims, size=None):
    """The start indices, some batched, as one ``(lanes, len(indices))`` array."""
    if size is None:
        size = next(i.shape[d] for i, d in zip(indices, index_dims) if d is not None)
    dtype = next(i.dtype for i, d in zip(indices, index_dims) if d is not None)
    columns = [b.reshape(to_front(b, b.convert(i, dtype) if i.dtype != dtype else i, d,
                                  size), (size, 1))
               for i, d in zip(indices, index_dims)]
    return b.concatenate(columns, 1)


@checks("dynamic_update_slice")
def _check_dynamic_update_slice(operands, attrs):
    x, update, *indices = operands
    check_scalar_indices("dynamic_update_slice", x, indices)
    same_dtypes("dynamic_update_slice", (x, update))
    require(update.ndim == x.ndim and all(u <= d for u, d in zip(update.shape, x.shape)),
            PSCShapeError, f"dynamic_update_slice: update {fmt(update)} does not fit in "
            f"{fmt(x)}")
    return [(x.shape, x.dtype)]


lowers("dynamic_update_slice")(lambda p, op: p.generic(op, "dynamic_update_slice"))
linear_jvp("dynamic_update_slice", (0, 1))


@vjp_rule("dynamic_update_slice")
def _dynamic_update_slice_vjp(b, op, primals, results, cts):
    x, update, *indices = primals
    (ct,) = cts
    ct_x = b.dynamic_update_slice(ct, zeros_like(b, update), indices)
    return [ct_x, b.dynamic_slice(ct, indices, update.shape)] + [None] * len(indices)


@batching_rule("dynamic_update_slice")
def _batch_dynamic_update_slice(b, op, operands, dims):
    x, update, *indices = operands
    if all(d is None for d in dims[2:]):   # one position for all lanes
        size = x.shape[dims[0]] if dims[0] is not None else update.shape[dims[1]]
        x, update = to_front(b, x, dims[0], size), to_front(b, update, dims[1], size)
        start = b.constant(np.zeros((), indices[0].dtype if indices else np.int32))
        return [b.dynamic_update_slice(x, update, [start, *indices])], [0]
    # a scatter skips a window that does not fit: clamp the starts as the op would
    lane_x, lane_update = op.operands[0], op.operands[1]
    clamped = [b.min(b.max(i, const(b, 0, i)), const(b, n - u, i))
               for i, n, u in zip(indices, lane_x.shape, lane_update.shape)]
    x, starts = _lanes_and_starts(b, x, dims[0], clamped, dims[2:])
    update = to_front(b, update, dims[1], x.shape[0])
    n = len(indices)
    return [b.scatter(x, starts, update, update_window_dims=range(1, n + 1),
                      inserted_window_dims=(), scatter_dims_to_operand_dims=range(1, n + 1),
                      index_vector_dim=1, input_batching_dims=(0,),
                      scatter_indices_batching_dims=(0,))], [0]

# --- gather ----------------------------------------------------------------------------------


def _index_batch_shape(indices, index_vector_dim):
    shape = list(indices.shape)
    if index_vector_dim < len(shape):
        return shape[:index_vector_dim] + shape[index_vector_dim + 1:], shape[index_vector_dim]
    return shape, 1


@checks("gather")
def _check_gather(operands, attrs):
    x, indices = operands
    require(dtypes.is_integer(indices.dtype), PSCTypeError,
            f"gather indices must be integers, got {fmt(indices)}")
    sizes = attrs["slice_sizes"]
    collapsed, batching = attrs["collapsed_slice_dims"], attrs["operand_batching_dims"]
    offset_dims, start_index_map = attrs["offset_dims"], attrs["start_index_map"]
    ivd = attrs["index_vector_dim"]
    require(0 <= ivd <= indices.ndim, PSCValueError, "gather index_vector_dim out of range")
    check_dims("gather", "collapsed_slice_dims", collapsed, x.ndim)
    check_dims("gather", "operand_batching_dims", batching, x.ndim)
    check_dims("gather", "start_index_map", start_index_map, x.ndim, ordered=False)
    batch_shape, vector_size = _index_batch_shape(indices, ivd)
    require(len(sizes) == x.ndim and all(0 <= s <= d for s, d in zip(sizes, x.shape)),
            PSCShapeError, f"gather slice sizes {list(sizes)} do not fit {fmt(x)}")
    require(len(start_index_map) == vector_size and
            all(0 <= d < x.ndim for d in start_index_map), PSCShapeError,
            f"gather start_index_map {list(start_index_map)} does not match an index vector "
            f"of size {vector_size}")
    require(all(sizes[d] <= 1 for d in list(collapsed) + list(batching)), PSCShapeError,
            "gather: collapsed and batching dimensions need slice size 1")
    offset_sizes = [s for d, s in enumerate(sizes) if d not in collapsed and d not in batching]
    rank = len(batch_shape) + len(offset_sizes)
    check_dims("gather", "offset_dims", offset_dims, rank)
    require(len(offset_dims) == len(offset_sizes), PSCShapeError,
            f"gather offset_dims {list(offset_dims)} do not fit a result of rank {rank}")
    offsets, batches = iter(offset_sizes), iter(batch_shape)
    shape = tuple(next(offsets) if d in offset_dims else next(batches) for d in range(rank))
    return [(shape, x.dtype)]


@lowers("gather")
def _lower_gather(p, op):
    a = op.attrs
    fields = dims_attr([("offset_dims", a["offset_dims"]),
                        ("collapsed_slice_dims", a["collapsed_slice_dims"]),
                        ("operand_batching_dims", a["operand_batching_dims"]),
                        ("start_indices_batching_dims", a["start_indices_batching_dims"]),
                        ("start_index_map", a["start_index_map"])])
    sep = ", " if fields else ""
    p.generic(op, "gather",
              f"dimension_numbers = #stablehlo.gather<{fields}{sep}index_vector_dim = "
              f"{a['index_vector_dim']}>, slice_sizes = {i64_array(a['slice_sizes'])}, "
              f"indices_are_sorted = {str(a['indices_are_sorted']).lower()}")


linear_jvp("gather", (0,))


@vjp_rule("gather")
def _gather_vjp(b, op, primals, results, cts):
    (x, indices), (ct,), a = primals, cts, op.attrs
    ct_x = b.scatter(zeros_like(b, x), indices, ct, update_window_dims=a["offset_dims"],
                     inserted_window_dims=a["collapsed_slice_dims"],
                     scatter_dims_to_operand_dims=a["start_index_map"],
                     index_vector_dim=a["index_vector_dim"], mode="add",
                     input_batching_dims=a["operand_batching_dims"],
                     scatter_indices_batching_dims=a["start_indices_batching_dims"])
    return [ct_x, None]


@batching_rule("gather")
def _batch_gather(b, op, operands, dims):
    (x, indices), (x_dim, index_dim), a = operands, dims, op.attrs
    if index_dim is None:   # lanes of the operand: one more offset dimension, first
        x = to_front(b, x, x_dim)
        return [b.gather(
            x, indices, offset_dims=(0,) + _shift(a["offset_dims"]),
            collapsed_slice_dims=_shift(a["collapsed_slice_dims"]),
            start_index_map=_shift(a["start_index_map"]),
            index_vector_dim=a["index_vector_dim"],
            slice_sizes=(x.shape[0],) + tuple(a["slice_sizes"]),
            operand_batching_dims=_shift(a["operand_batching_dims"]),
            start_indices_batching_dims=a["start_indices_batching_dims"],
            indices_are_sorted=a["indices_are_sorted"])], [0]
    indices = to_front(b, indices, index_dim)
    if x_dim is None:   # lanes of the indices: one more index batch dimension, first
        return [b.gather(
            x, indices, offset_dims=_shift(a["offset_dims"]),
            collapsed_slice_dims=a["collapsed_slice_dims"],
            start_index_map=a["start_index_map"],
            index_vector_dim=a["index_vector_dim"] + 1, slice_sizes=a["slice_sizes"],
            operand_batching_dims=a["operand_batching_dims"],
            start_indices_batching_dims=_shift(a["start_indices_batching_dims"]))], [0]
    x = to_front(b, x, x_dim)   # both: lane k of the indices reads lane k of the operand
    return [b.gather(
        x, indices, offset_dims=_shift(a["offset_dims"]),
        collapsed_slice_dims=_shift(a["collapsed_slice_dims"]),
        start_index_map=_shift(a["start_index_map"]),
        index_vector_dim=a["index_vector_dim"] + 1,
        slice_sizes=(1,) + tuple(a["slice_sizes"]),
        operand_batching_dims=(0,) + _shift(a["operand_batching_dims"]),
        start_indices_batching_dims=(0,) + _shift(a["start_indices_batching_dims"]))], [0]

# --- scatter ---------------------------------------------------------------------------------


SCATTER_MODES = ("set", "add", "mul", "min", "max")


@checks("scatter")
def _check_scatter(operands, attrs):
    x, indices, updates = operands
    same_dtypes("scatter", (x, updates))
    require(dtypes.is_integer(indices.dtype), PSCTypeError,
            f"scatter indices must be integers, got {fmt(indices)}")
    require(attrs["mode"] in SCATTER_MODES, PSCValueError,
            f"unknown scatter mode {attrs['mode']!r}")
    window_dims, inserted = attrs["update_window_dims"], attrs["inserted_window_dims"]
    batching = attrs["input_batching_dims"]
    to_operand = attrs["scatter_dims_to_operand_dims"]
    require(0 <= attrs["index_vector_dim"] <= indices.ndim, PSCValueError,
            "scatter index_vector_dim out of range")
    check_dims("scatter", "inserted_window_dims", inserted, x.ndim)
    check_dims("scatter", "input_batching_dims", batching, x.ndim)
    check_dims("scatter", "scatter_dims_to_operand_dims", to_operand, x.ndim, ordered=False)
    check_dims("scatter", "update_window_dims", window_dims, updates.ndim)
    batch_shape, vector_size = _index_batch_shape(indices, attrs["index_vector_dim"])
    require(len(to_operand) == vector_size, PSCShapeError,
            "scatter_dims_to_operand_dims does not match the index vector size")
    require(len(window_dims) + len(inserted) + len(batching) == x.ndim, PSCShapeError,
            "scatter window dimensions do not add up to the operand's rank")
    require(updates.ndim == len(batch_shape) + len(window_dims), PSCShapeError,
            f"scatter updates {fmt(updates)} need rank "
            f"{len(batch_shape) + len(window_dims)}")
    scatter_dims = [d for d in range(updates.ndim) if d not in window_dims]
    require([updates.shape[d] for d in scatter_dims] == list(batch_shape), PSCShapeError,
            f"scatter updates {fmt(updates)} do not match indices {fmt(indices)}")
    operand_window = [d for d in range(x.ndim) if d not in inserted and d not in batching]
    for u, o in zip(window_dims, operand_window):
        require(updates.shape[u] <= x.shape[o], PSCShapeError,
                f"scatter update window {fmt(updates)} is larger than {fmt(x)}")
    return [(x.shape, x.dtype)]


SCATTER_COMBINERS = {"add": "add", "mul": "multiply", "min": "minimum", "max": "maximum"}


@lowers("scatter")
def _lower_scatter(p, op):
    a = op.attrs
    x = op.operands[0]
    if a["mode"] == "set":
        def combine(old, new, t):
            return [], new
    else:
        combine = binary_body(SCATTER_COMBINERS[a["mode"]])
    body = p.scalar_body(x.dtype, combine, op)
    fields = dims_attr([("update_window_dims", a["update_window_dims"]),
                        ("inserted_window_dims", a["inserted_window_dims"]),
                        ("input_batching_dims", a["input_batching_dims"]),
                        ("scatter_indices_batching_dims", a["scatter_indices_batching_dims"]),
                        ("scatter_dims_to_operand_dims", a["scatter_dims_to_operand_dims"])])
    sep = ", " if fields else ""
    p.generic(op, "scatter",
              f"scatter_dimension_numbers = #stablehlo.scatter<{fields}{sep}index_vector_dim = "
              f"{a['index_vector_dim']}>, indices_are_sorted = "
              f"{str(a['indices_are_sorted']).lower()}, unique_indices = "
              f"{str(a['unique_indices']).lower()}", regions=[body])


@jvp_rule("scatter")
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
    operands = [tangent_or_zeros(b, tx, x), indices, tangent_or_zeros(b, tu, updates)]
    return [result], [replay(b, op, operands)[0]]


@vjp_rule("scatter")
def _scatter_vjp(b, op, primals, results, cts):
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


@batching_rule("scatter")
def _batch_scatter(b, op, operands, dims):
    """Every lane scatters into its own operand: operand, indices and updates all get
    the lanes first, paired by one more batching dimension."""
    a = op.attrs
    size = next(v.shape[d] for v, d in zip(operands, dims) if d is not None)
    x, indices, updates = [to_front(b, v, d, size) for v, d in zip(operands, dims)]
    return [b.scatter(
        x, indices, updates, update_window_dims=_shift(a["update_window_dims"]),
        inserted_window_dims=_shift(a["inserted_window_dims"]),
        scatter_dims_to_operand_dims=_shift(a["scatter_dims_to_operand_dims"]),
        index_vector_dim=a["index_vector_dim"] + 1, mode=a["mode"],
        input_batching_dims=(0,) + _shift(a["input_batching_dims"]),
        scatter_indices_batching_dims=(0,) + _shift(a["scatter_indices_batching_dims"]),
        unique_indices=a["unique_indices"])], [0]
