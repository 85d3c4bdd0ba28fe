"""Op definitions: for each primitive, the check and the result types of one application.

`OP_DEFS` maps a primitive name to a function ``infer(operands, attrs) -> [(shape, dtype)]``
that raises a `PSCError` for ill-formed operands.  The builder calls it before recording an
operation, so every operation in the IR is well-typed by construction, and XLA never sees a
program it would reject (or, worse, abort on).  The lowering (`lowering.py`) has a printer
for every name here; `tests/test_registries.py` checks that.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from . import dtypes
from .errors import PSCShapeError, PSCTypeError, PSCValueError
from .ir import check_extent

Aval = tuple  # (shape, dtype)
OP_DEFS: dict[str, Callable] = {}


def _defines(*names: str):
    def register(infer):
        for name in names:
            OP_DEFS[name] = infer
        return infer
    return register


def _fmt(v) -> str:
    return f"{v.dtype}{list(v.shape)}"


def _require(condition: bool, error, message: str, hint: str | None = None):
    if not condition:
        raise error(message, hint=hint)


def _same_dtypes(name: str, operands) -> None:
    if any(v.dtype != operands[0].dtype for v in operands):   # (the message costs more)
        raise PSCTypeError(f"operands of {name} must have one dtype, got "
                           + ", ".join(_fmt(v) for v in operands),
                           hint="builder ops are strict: convert operands first (NumPy "
                                "promotion lives in the translation rules)")


def _same_shapes(name: str, operands) -> None:
    if any(v.shape != operands[0].shape for v in operands):
        raise PSCShapeError(f"operands of {name} must have one shape, got "
                            + ", ".join(_fmt(v) for v in operands),
                            hint="builder ops are strict: broadcast operands first with "
                                 "broadcast_in_dim")


# --- element-wise -----------------------------------------------------------------------

# name -> predicate on the dtype, and a phrase for the error message.
_NUMERIC = (lambda d: not dtypes.is_bool(d), "numeric (not bool)")
_INEXACT = (dtypes.is_inexact, "floating or complex")
_FLOAT = (dtypes.is_floating, "floating")
_INTEGRAL = (lambda d: dtypes.is_integer(d) or dtypes.is_bool(d), "integer or bool")
_INTEGER = (dtypes.is_integer, "integer")
_ANY = (lambda d: True, "any")

UNARY_OPS = {
    "negate": _NUMERIC, "abs": _NUMERIC, "sign": _NUMERIC,
    "exponential": _INEXACT, "log": _INEXACT, "log_plus_one": _INEXACT,
    "exponential_minus_one": _INEXACT, "sqrt": _INEXACT, "rsqrt": _INEXACT,
    "cbrt": _FLOAT, "sine": _INEXACT, "cosine": _INEXACT, "tan": _INEXACT,
    "tanh": _INEXACT, "logistic": _INEXACT, "floor": _FLOAT, "ceil": _FLOAT,
    "round_nearest_afz": _FLOAT, "round_nearest_even": _FLOAT, "not": _INTEGRAL,
    "is_finite": _FLOAT,
    # CHLO decompositions, legalized by XLA like the StableHLO ops.
    "asin": _INEXACT, "acos": _INEXACT, "atan": _INEXACT, "sinh": _INEXACT,
    "cosh": _INEXACT, "asinh": _INEXACT, "acosh": _INEXACT, "atanh": _INEXACT,
    "erf": _FLOAT, "erfc": _FLOAT, "erf_inv": _FLOAT, "lgamma": _FLOAT, "digamma": _FLOAT,
}
CHLO_OPS = frozenset({"asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
                      "erf", "erfc", "erf_inv", "lgamma", "digamma"})

BINARY_OPS = {
    "add": _ANY, "subtract": _NUMERIC, "multiply": _ANY, "divide": _NUMERIC,
    "remainder": _NUMERIC, "power": _NUMERIC, "maximum": _ANY, "minimum": _ANY,
    "atan2": _INEXACT, "and": _INTEGRAL, "or": _INTEGRAL, "xor": _INTEGRAL,
    "shift_left": _INTEGER, "shift_right_arithmetic": _INTEGER,
    "shift_right_logical": _INTEGER,
}


def _check_kind(name: str, v, kind) -> None:
    accepts, phrase = kind
    if not accepts(v.dtype):
        raise PSCTypeError(f"{name} needs a {phrase} operand, got {_fmt(v)}")


def _infer_unary(name):
    def infer(operands, attrs):
        (x,) = operands
        _check_kind(name, x, UNARY_OPS[name])
        if name == "abs" and dtypes.is_complex(x.dtype):
            return [(x.shape, dtypes.real_dtype(x.dtype))]
        if name == "is_finite":
            return [(x.shape, dtypes.bool_)]
        return [(x.shape, x.dtype)]
    return infer


def _infer_binary(name):
    def infer(operands, attrs):
        _same_dtypes(name, operands)
        _same_shapes(name, operands)
        _check_kind(name, operands[0], BINARY_OPS[name])
        return [(operands[0].shape, operands[0].dtype)]
    return infer


for _name in UNARY_OPS:
    OP_DEFS[_name] = _infer_unary(_name)
for _name in BINARY_OPS:
    OP_DEFS[_name] = _infer_binary(_name)

COMPARISON_DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")


@_defines("compare")
def _infer_compare(operands, attrs):
    _same_dtypes("compare", operands)
    _same_shapes("compare", operands)
    _require(attrs["direction"] in COMPARISON_DIRECTIONS, PSCValueError,
             f"unknown comparison direction {attrs['direction']!r}")
    return [(operands[0].shape, dtypes.bool_)]


@_defines("select")
def _infer_select(operands, attrs):
    pred, on_true, on_false = operands
    _require(pred.dtype == dtypes.bool_, PSCTypeError,
             f"select needs a bool predicate, got {_fmt(pred)}")
    _same_dtypes("select", (on_true, on_false))
    _same_shapes("select", (on_true, on_false))
    _require(pred.shape in ((), on_true.shape), PSCShapeError,
             f"select predicate {_fmt(pred)} must be a scalar or have the shape of its "
             f"operands {_fmt(on_true)}")
    return [(on_true.shape, on_true.dtype)]


@_defines("convert")
def _infer_convert(operands, attrs):
    (x,) = operands
    return [(x.shape, attrs["dtype"])]


@_defines("constant")
def _infer_constant(operands, attrs):
    value = attrs["value"]
    return [(value.shape, value.dtype)]


@_defines("iota")
def _infer_iota(operands, attrs):
    shape, dim = attrs["shape"], attrs["dimension"]
    _require(0 <= dim < len(shape), PSCValueError,
             f"iota dimension {dim} is out of range for shape {list(shape)}")
    _require(not dtypes.is_bool(attrs["dtype"]), PSCTypeError, "iota cannot produce bool")
    return [(shape, attrs["dtype"])]


# --- shape manipulation -----------------------------------------------------------------

@_defines("broadcast_in_dim")
def _infer_broadcast_in_dim(operands, attrs):
    (x,) = operands
    shape, dims = attrs["shape"], attrs["broadcast_dimensions"]
    _require(len(dims) == x.ndim, PSCShapeError,
             f"broadcast_in_dim: {len(dims)} broadcast dimensions for an operand of rank "
             f"{x.ndim}")
    _require(len(set(dims)) == len(dims) and all(0 <= d < len(shape) for d in dims),
             PSCShapeError, f"broadcast_in_dim: bad broadcast dimensions {list(dims)} for "
             f"result shape {list(shape)}")
    for in_dim, out_dim in enumerate(dims):
        _require(x.shape[in_dim] in (1, shape[out_dim]), PSCShapeError,
                 f"cannot broadcast {_fmt(x)} to shape {list(shape)}: operand dimension "
                 f"{in_dim} has size {x.shape[in_dim]}, result dimension {out_dim} has "
                 f"size {shape[out_dim]}")
    return [(tuple(shape), x.dtype)]


@_defines("reshape")
def _infer_reshape(operands, attrs):
    (x,) = operands
    shape = attrs["shape"]
    _require(all(d >= 0 for d in shape) and int(np.prod(shape, dtype=np.int64)) == x.size,
             PSCShapeError, f"cannot reshape {_fmt(x)} (size {x.size}) into shape "
             f"{list(shape)}")
    return [(tuple(shape), x.dtype)]


@_defines("transpose")
def _infer_transpose(operands, attrs):
    (x,) = operands
    perm = attrs["permutation"]
    _require(sorted(perm) == list(range(x.ndim)), PSCValueError,
             f"transpose: {list(perm)} is not a permutation of the {x.ndim} axes of "
             f"{_fmt(x)}")
    return [(tuple(x.shape[p] for p in perm), x.dtype)]


@_defines("reverse")
def _infer_reverse(operands, attrs):
    (x,) = operands
    dims = attrs["dimensions"]
    _require(len(set(dims)) == len(dims) and all(0 <= d < x.ndim for d in dims),
             PSCValueError, f"reverse: dimensions {list(dims)} do not fit {_fmt(x)}")
    return [(x.shape, x.dtype)]


@_defines("slice")
def _infer_slice(operands, attrs):
    (x,) = operands
    start, limit, strides = attrs["start_indices"], attrs["limit_indices"], attrs["strides"]
    _require(len(start) == len(limit) == len(strides) == x.ndim, PSCShapeError,
             f"slice of {_fmt(x)} needs {x.ndim} start/limit/stride values")
    for d in range(x.ndim):
        _require(0 <= start[d] <= limit[d] <= x.shape[d] and strides[d] >= 1, PSCValueError,
                 f"slice [{start[d]}:{limit[d]}:{strides[d]}] is out of bounds for "
                 f"dimension {d} of {_fmt(x)}")
    shape = tuple(-(-(limit[d] - start[d]) // strides[d]) for d in range(x.ndim))
    return [(shape, x.dtype)]


def _check_scalar_indices(name, x, indices):
    _require(len(indices) == x.ndim, PSCShapeError,
             f"{name} of {_fmt(x)} needs {x.ndim} start indices, got {len(indices)}")
    for i in indices:
        _require(i.shape == () and dtypes.is_integer(i.dtype), PSCTypeError,
                 f"{name} start indices must be integer scalars, got {_fmt(i)}")
    if indices:
        _same_dtypes(name + " indices", indices)


@_defines("dynamic_slice")
def _infer_dynamic_slice(operands, attrs):
    x, *indices = operands
    sizes = attrs["slice_sizes"]
    _check_scalar_indices("dynamic_slice", x, indices)
    _require(len(sizes) == x.ndim and all(0 <= s <= d for s, d in zip(sizes, x.shape)),
             PSCShapeError, f"dynamic_slice sizes {list(sizes)} do not fit {_fmt(x)}")
    return [(tuple(sizes), x.dtype)]


@_defines("dynamic_update_slice")
def _infer_dynamic_update_slice(operands, attrs):
    x, update, *indices = operands
    _check_scalar_indices("dynamic_update_slice", x, indices)
    _same_dtypes("dynamic_update_slice", (x, update))
    _require(update.ndim == x.ndim and all(u <= d for u, d in zip(update.shape, x.shape)),
             PSCShapeError, f"dynamic_update_slice: update {_fmt(update)} does not fit in "
             f"{_fmt(x)}")
    return [(x.shape, x.dtype)]


@_defines("concatenate")
def _infer_concatenate(operands, attrs):
    dim = attrs["dimension"]
    _require(len(operands) >= 1, PSCValueError, "concatenate needs at least one operand")
    _same_dtypes("concatenate", operands)
    first = operands[0]
    _require(0 <= dim < first.ndim, PSCValueError,
             f"concatenate dimension {dim} is out of range for rank {first.ndim}")
    for v in operands:
        _require(v.ndim == first.ndim and all(
            a == b for i, (a, b) in enumerate(zip(v.shape, first.shape)) if i != dim),
            PSCShapeError, "concatenate operands must match except along dimension "
            f"{dim}, got " + ", ".join(_fmt(o) for o in operands))
    shape = list(first.shape)
    shape[dim] = sum(v.shape[dim] for v in operands)
    return [(tuple(shape), first.dtype)]


@_defines("pad")
def _infer_pad(operands, attrs):
    x, pad_value = operands
    _same_dtypes("pad", operands)
    _require(pad_value.shape == (), PSCShapeError, "pad value must be a scalar")
    low, high, interior = attrs["low"], attrs["high"], attrs["interior"]
    _require(len(low) == len(high) == len(interior) == x.ndim, PSCShapeError,
             f"pad of {_fmt(x)} needs {x.ndim} low/high/interior values")
    shape = []
    for d, size in enumerate(x.shape):
        _require(interior[d] >= 0, PSCValueError, "interior padding must be non-negative")
        out = low[d] + high[d] + size + max(size - 1, 0) * interior[d]
        _require(out >= 0, PSCValueError, f"pad makes dimension {d} negative")
        shape.append(out)
    return [(tuple(shape), x.dtype)]


# --- contractions and reductions ----------------------------------------------------------

@_defines("dot_general")
def _infer_dot_general(operands, attrs):
    lhs, rhs = operands
    _same_dtypes("dot_general", operands)
    _check_kind("dot_general", lhs, _NUMERIC)   # XLA dots on i1 are not reliable everywhere
    lb, rb = attrs["lhs_batch"], attrs["rhs_batch"]
    lc, rc = attrs["lhs_contract"], attrs["rhs_contract"]
    _require(len(lb) == len(rb) and len(lc) == len(rc), PSCShapeError,
             "dot_general needs as many lhs as rhs batch and contracting dimensions")
    for dims, v in ((lb + lc, lhs), (rb + rc, rhs)):
        _require(len(set(dims)) == len(dims) and all(0 <= d < v.ndim for d in dims),
                 PSCValueError, f"dot_general dimensions {list(dims)} do not fit {_fmt(v)}")
    for a, b in zip(lb + lc, rb + rc):
        _require(lhs.shape[a] == rhs.shape[b], PSCShapeError,
                 f"dot_general: {_fmt(lhs)} dimension {a} (size {lhs.shape[a]}) does not "
                 f"match {_fmt(rhs)} dimension {b} (size {rhs.shape[b]})")
    lhs_free = [d for d in range(lhs.ndim) if d not in lb and d not in lc]
    rhs_free = [d for d in range(rhs.ndim) if d not in rb and d not in rc]
    shape = ([lhs.shape[d] for d in lb] + [lhs.shape[d] for d in lhs_free]
             + [rhs.shape[d] for d in rhs_free])
    return [(tuple(shape), lhs.dtype)]


REDUCTIONS = ("sum", "prod", "max", "min", "and", "or")


def _reduced_shape(name, x, dims):
    _require(len(set(dims)) == len(dims) and all(0 <= d < x.ndim for d in dims),
             PSCValueError, f"{name}: dimensions {list(dims)} do not fit {_fmt(x)}")
    return tuple(s for d, s in enumerate(x.shape) if d not in dims)


@_defines("reduce")
def _infer_reduce(operands, attrs):
    (x,) = operands
    kind = attrs["kind"]
    _require(kind in REDUCTIONS, PSCValueError, f"unknown reduction {kind!r}")
    if kind in ("and", "or"):
        _check_kind(f"reduce_{kind}", x, _INTEGRAL)
    return [(_reduced_shape("reduce", x, attrs["dimensions"]), x.dtype)]


@_defines("argmax", "argmin")
def _infer_argreduce(operands, attrs):
    (x,) = operands
    axis = attrs["axis"]
    _require(0 <= axis < x.ndim, PSCValueError,
             f"argmax/argmin axis {axis} is out of range for {_fmt(x)}")
    _require(x.shape[axis] > 0, PSCValueError,
             f"attempt to get argmax/argmin of an empty sequence ({_fmt(x)}, axis {axis})")
    _require(dtypes.is_integer(attrs["index_dtype"]), PSCTypeError,
             "argmax/argmin index dtype must be an integer")
    # the lowering reduces over an iota of indices of the operand's shape: it too must
    # be an array XLA can address
    check_extent(x.shape, np.dtype(attrs["index_dtype"]))
    return [(_reduced_shape("argmax", x, (axis,)), attrs["index_dtype"])]


@_defines("cumulative")
def _infer_cumulative(operands, attrs):
    (x,) = operands
    _require(attrs["kind"] in ("sum", "prod", "max", "min"), PSCValueError,
             f"unknown cumulative reduction {attrs['kind']!r}")
    _require(0 <= attrs["axis"] < x.ndim, PSCValueError,
             f"cumulative axis {attrs['axis']} is out of range for {_fmt(x)}")
    return [(x.shape, x.dtype)]


@_defines("sort")
def _infer_sort(operands, attrs):
    _same_shapes("sort", operands)
    dim, num_keys = attrs["dimension"], attrs["num_keys"]
    _require(0 <= dim < operands[0].ndim, PSCValueError,
             f"sort dimension {dim} is out of range for {_fmt(operands[0])}")
    _require(1 <= num_keys <= len(operands), PSCValueError, "sort needs 1..n key operands")
    for key in operands[:num_keys]:
        _require(not dtypes.is_complex(key.dtype), PSCTypeError, "cannot sort complex keys")
    return [(v.shape, v.dtype) for v in operands]


# --- gather and scatter -------------------------------------------------------------------

def _check_dims(name: str, what: str, dims, bound: int, ordered: bool = True) -> None:
    """Dimension numbers must be in range and unique (and sorted, where StableHLO says)."""
    _require(all(0 <= d < bound for d in dims) and len(set(dims)) == len(dims) and
             (not ordered or list(dims) == sorted(dims)), PSCValueError,
             f"{name}: {what} {list(dims)} must be {'sorted, ' if ordered else ''}unique and "
             f"below {bound}")


def _index_batch_shape(indices, index_vector_dim):
    shape = list(indices.shape)
    if index_vector_dim < len(shape):
        return shape[:index_vector_dim] + shape[index_vector_dim + 1:], shape[index_vector_dim]
    return shape, 1


@_defines("gather")
def _infer_gather(operands, attrs):
    x, indices = operands
    _require(dtypes.is_integer(indices.dtype), PSCTypeError,
             f"gather indices must be integers, got {_fmt(indices)}")
    sizes = attrs["slice_sizes"]
    collapsed, batching = attrs["collapsed_slice_dims"], attrs["operand_batching_dims"]
    offset_dims, start_index_map = attrs["offset_dims"], attrs["start_index_map"]
    ivd = attrs["index_vector_dim"]
    _require(0 <= ivd <= indices.ndim, PSCValueError, "gather index_vector_dim out of range")
    _check_dims("gather", "collapsed_slice_dims", collapsed, x.ndim)
    _check_dims("gather", "operand_batching_dims", batching, x.ndim)
    _check_dims("gather", "start_index_map", start_index_map, x.ndim, ordered=False)
    batch_shape, vector_size = _index_batch_shape(indices, ivd)
    _require(len(sizes) == x.ndim and all(0 <= s <= d for s, d in zip(sizes, x.shape)),
             PSCShapeError, f"gather slice sizes {list(sizes)} do not fit {_fmt(x)}")
    _require(len(start_index_map) == vector_size and
             all(0 <= d < x.ndim for d in start_index_map), PSCShapeError,
             f"gather start_index_map {list(start_index_map)} does not match an index vector "
             f"of size {vector_size}")
    _require(all(sizes[d] <= 1 for d in list(collapsed) + list(batching)), PSCShapeError,
             "gather: collapsed and batching dimensions need slice size 1")
    offset_sizes = [s for d, s in enumerate(sizes) if d not in collapsed and d not in batching]
    rank = len(batch_shape) + len(offset_sizes)
    _check_dims("gather", "offset_dims", offset_dims, rank)
    _require(len(offset_dims) == len(offset_sizes), PSCShapeError,
             f"gather offset_dims {list(offset_dims)} do not fit a result of rank {rank}")
    offsets, batches = iter(offset_sizes), iter(batch_shape)
    shape = tuple(next(offsets) if d in offset_dims else next(batches) for d in range(rank))
    return [(shape, x.dtype)]


SCATTER_MODES = ("set", "add", "mul", "min", "max")


@_defines("scatter")
def _infer_scatter(operands, attrs):
    x, indices, updates = operands
    _same_dtypes("scatter", (x, updates))
    _require(dtypes.is_integer(indices.dtype), PSCTypeError,
             f"scatter indices must be integers, got {_fmt(indices)}")
    _require(attrs["mode"] in SCATTER_MODES, PSCValueError,
             f"unknown scatter mode {attrs['mode']!r}")
    window_dims, inserted = attrs["update_window_dims"], attrs["inserted_window_dims"]
    batching = attrs["input_batching_dims"]
    to_operand = attrs["scatter_dims_to_operand_dims"]
    _require(0 <= attrs["index_vector_dim"] <= indices.ndim, PSCValueError,
             "scatter index_vector_dim out of range")
    _check_dims("scatter", "inserted_window_dims", inserted, x.ndim)
    _check_dims("scatter", "input_batching_dims", batching, x.ndim)
    _check_dims("scatter", "scatter_dims_to_operand_dims", to_operand, x.ndim, ordered=False)
    _check_dims("scatter", "update_window_dims", window_dims, updates.ndim)
    batch_shape, vector_size = _index_batch_shape(indices, attrs["index_vector_dim"])
    _require(len(to_operand) == vector_size, PSCShapeError,
             "scatter_dims_to_operand_dims does not match the index vector size")
    _require(len(window_dims) + len(inserted) + len(batching) == x.ndim, PSCShapeError,
             "scatter window dimensions do not add up to the operand's rank")
    _require(updates.ndim == len(batch_shape) + len(window_dims), PSCShapeError,
             f"scatter updates {_fmt(updates)} need rank "
             f"{len(batch_shape) + len(window_dims)}")
    scatter_dims = [d for d in range(updates.ndim) if d not in window_dims]
    _require([updates.shape[d] for d in scatter_dims] == list(batch_shape), PSCShapeError,
             f"scatter updates {_fmt(updates)} do not match indices {_fmt(indices)}")
    operand_window = [d for d in range(x.ndim) if d not in inserted and d not in batching]
    for u, o in zip(window_dims, operand_window):
        _require(updates.shape[u] <= x.shape[o], PSCShapeError,
                 f"scatter update window {_fmt(updates)} is larger than {_fmt(x)}")
    return [(x.shape, x.dtype)]


# --- control flow -------------------------------------------------------------------------
# The control-flow builders check their regions themselves (they own the regions); the
# result types are those of the loop state / branch outputs, which they pass in attrs.

@_defines("while", "case")
def _infer_control_flow(operands, attrs):
    return list(attrs["result_avals"])
