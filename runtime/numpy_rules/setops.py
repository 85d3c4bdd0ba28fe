"""Functions whose result length depends on the data: nonzero, argwhere, flatnonzero,
extract, compress, unique (and the array-API unique_* functions), union1d, intersect1d,
setdiff1d, setxor1d, bincount, trim_zeros; and isin, whose result has the operand's shape.

An XLA array has a static shape, so with traced operands these take ``jax.numpy``'s
keywords: ``size=`` (static) makes the result that long, truncated, or padded with
``fill_value`` (defaults as in jax: 0 for nonzero-like functions and setdiff1d, the first
(smallest) result for unique, union1d, intersect1d and setxor1d; the padded entries of
``unique``'s ``return_index`` are the index of the smallest element, its padded counts 0,
``intersect1d``'s padded indices ``len(ar1)``/``len(ar2)``).  Without ``size=`` they raise
a `PSCValueError` naming it.  With ``size`` equal to NumPy's length the results are
NumPy's.  ``bincount`` takes jax's static ``length=``, or works out a static length when
``minlength`` covers every value x's dtype can hold.  A static condition (``np.compress``,
``np.extract``) has a static result length and needs no ``size``.

NumPy semantics kept: sorted results, NumPy 2's ``return_inverse`` shape (the input's
shape for ``axis=None``, ``(n,)`` along an axis), ``equal_nan`` (all NaNs one unique value
for ``axis=None``; never along an axis, as NumPy's row comparison), the array-API unique_*
functions with ``equal_nan=False`` returning NumPy's namedtuples, NaN never equal in set
operations.  Deviations: ``unique_values`` is sorted (NumPy 2.4's hash path leaves ints
unsorted, an order it documents as unspecified); complex operands are refused by the
sorting ones (see `sorting`); negative ``bincount`` inputs are dropped (NumPy raises; the
``index`` run-time check reports them).
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..checks import guard
from ..errors import PSCIndexError, PSCTypeError, PSCValueError
from ..ir import Value
from ..translation import register_translation_rule
from . import indexing
from ._core import full_like_value, lift, normalize_axis, result_dtype, static_int
from ._core import rule_table
from .sorting import INDEX, argsort_axis, gather_1d, refuse_complex, search

COVERAGE_NOTES = {
    "numpy.nonzero": "partial: traced input needs jax's size=/fill_value=",
    "numpy.argwhere": "partial: traced input needs jax's size=/fill_value=",
    "numpy.flatnonzero": "partial: traced input needs jax's size=/fill_value=",
    "numpy.extract": "partial: a traced condition needs jax's size=/fill_value=",
    "numpy.compress": "partial: a traced condition needs jax's size=/fill_value=",
    "numpy.unique": "partial: traced input needs size=; complex refused",
    "numpy.unique_all": "partial: traced input needs size=; complex refused",
    "numpy.unique_counts": "partial: traced input needs size=; complex refused",
    "numpy.unique_inverse": "partial: traced input needs size=; complex refused",
    "numpy.unique_values": "partial: traced input needs size=; complex refused; sorted",
    "numpy.union1d": "partial: traced input needs size=; complex refused",
    "numpy.intersect1d": "partial: traced input needs size=; complex refused",
    "numpy.setdiff1d": "partial: traced input needs size=; complex refused",
    "numpy.setxor1d": "partial: traced input needs size=; complex refused",
    "numpy.bincount": "partial: needs a static length (length= or a covering minlength); "
                      "negative inputs dropped",
    "numpy.isin": "partial: complex compared pairwise only (no sort)",
}
UNSUPPORTED = {
    "numpy.trim_zeros": "the result length depends on the data and jax has no size= for it",
}

RULES, _rule = rule_table()
COMPARE_ALL_LIMIT = 1 << 14   # isin: below this many pairs, compare every pair

_UNIQUE_ALL = type(np.unique_all(np.zeros(1)))
_UNIQUE_COUNTS = type(np.unique_counts(np.zeros(1)))
_UNIQUE_INVERSE = type(np.unique_inverse(np.zeros(1)))


def _static_size(b: Builder, size, name: str) -> int:
    if size is None:
        raise b.error(PSCValueError, f"np.{name} of a traced array has a length that depends "
                      "on the data, which a compiled array cannot have", "pass a static "
                      "size=N (as in jax.numpy): the result is truncated or padded to N "
                      "(with fill_value)")
    size = static_int(b, size, "size")
    if size < 0:
        raise b.error(PSCValueError, f"size must be non-negative, got {size}")
    return size


def _flat(b: Builder, x: Value) -> Value:
    return b.reshape(x, (x.size,))


def _truth(b: Builder, x: Value) -> Value:
    return x if x.dtype == dtypes.bool_ else b.ne(x, full_like_value(b, 0, x))


def _fill(b: Builder, fill, dtype, shape) -> Value:
    """``fill`` (static, or a traced value of shape ``shape[1:]`` or a scalar) cast to
    ``dtype`` and broadcast to ``shape``."""
    value = lift(b, fill, dtype)
    if value.ndim == 0:
        return b.broadcast_in_dim(value, shape, ())
    if value.shape != tuple(shape[1:]):
        raise b.error(PSCValueError, f"fill_value of shape {value.shape} does not fit "
                      f"elements of shape {tuple(shape[1:])}")
    return b.broadcast_in_dim(value, shape, range(1, len(shape)))


def compact(b: Builder, keep: Value, payloads, size: int, fills) -> list[Value]:
    """The elements (rows) of each payload where the bool (n,) ``keep`` is true, in order,
    first ``size`` of them, the rest of the ``size`` slots ``fill``: a cumulative count
    numbers the kept elements and one scatter writes them into ``size + 1`` slots, the
    elements not kept (or past ``size``) into the last one, which is then cut off.  (Every
    index in range: the scatter's derivative then gives the dropped ones nothing.)"""
    n = keep.shape[0]
    if n == 0 or size == 0:
        return [_fill(b, fill, p.dtype, (size,) + p.shape[1:])
                for p, fill in zip(payloads, fills)]
    ones = b.convert(keep, INDEX)
    slot = b.sub(b.cumsum(ones, 0), full_like_value(b, 1, ones))
    trash = full_like_value(b, size, slot)
    slot = b.reshape(b.select(keep, b.min(slot, trash), trash), (n, 1))
    outs = []
    for p, fill in zip(payloads, fills):
        base = _fill(b, fill, p.dtype, (size + 1,) + p.shape[1:])
        written = b.scatter(base, slot, p, update_window_dims=tuple(range(1, p.ndim)),
                            inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                            index_vector_dim=1, mode="set")
        outs.append(b.slice(written, [0] * p.ndim, [size] + list(p.shape[1:])))
    return outs


# --- nonzero and relatives -------------------------------------------------------------------

def _coordinates(b: Builder, x: Value, size: int, fill_value) -> list[Value]:
    fills = fill_value if isinstance(fill_value, (tuple, list)) else [fill_value] * x.ndim
    if len(fills) != x.ndim:
        raise b.error(PSCValueError, f"fill_value must be a scalar or a tuple of length "
                      f"{x.ndim}, got length {len(fills)}")
    fills = [0 if f is None else f for f in fills]
    coords = [_flat(b, b.iota(x.shape, INDEX, d)) for d in range(x.ndim)]
    return compact(b, _flat(b, _truth(b, x)), coords, size, fills)


@_rule("numpy.nonzero", "numpy.ndarray.nonzero")
def nonzero(b, a, *, size=None, fill_value=None):
    x = lift(b, a)
    if x.ndim == 0:
        raise b.error(PSCValueError, "Calling nonzero on 0d arrays is not allowed. Use "
                      "np.atleast_1d(scalar).nonzero() instead.")
    return tuple(_coordinates(b, x, _static_size(b, size, "nonzero"), fill_value))


@_rule("numpy.flatnonzero")
def flatnonzero(b, a, *, size=None, fill_value=None):
    x = lift(b, a)
    return _coordinates(b, _flat(b, x), _static_size(b, size, "flatnonzero"), fill_value)[0]


@_rule("numpy.argwhere")
def argwhere(b, a, *, size=None, fill_value=None):
    x = lift(b, a)
    size = _static_size(b, size, "argwhere")
    if x.ndim == 0:
        return b.constant(np.zeros((size, 0), INDEX))
    coords = _coordinates(b, x, size, fill_value)
    return b.concatenate([b.reshape(c, (size, 1)) for c in coords], 1)


@_rule("numpy.extract")
def extract(b, condition, arr, *, size=None, fill_value=0):
    values = _flat(b, lift(b, arr))
    if not isinstance(condition, Value) and size is None:
        picked = np.flatnonzero(np.asarray(condition))
        _check_static_picks(b, picked, values.size, 0)
        return gather_1d(b, values, b.constant(picked.astype(INDEX)))
    cond = _flat(b, _truth(b, lift(b, condition)))
    if cond.size > values.size:
        raise b.error(PSCIndexError, f"condition has {cond.size} elements, more than arr "
                      f"({values.size})")
    size = _static_size(b, size, "extract")
    values = b.slice(values, [0], [cond.size])
    return compact(b, cond, [values], size, [fill_value])[0]


def _check_static_picks(b: Builder, picked, n: int, axis: int) -> None:
    if picked.size and picked[-1] >= n:
        raise b.error(PSCIndexError, f"index {picked[-1]} is out of bounds for axis {axis} "
                      f"with size {n}")


@_rule("numpy.compress", "numpy.ndarray.compress")
def compress(b, condition, a, axis=None, out=None, *, size=None, fill_value=0):
    if out is not None:
        raise b.error(PSCTypeError, "np.compress(..., out=...) is not supported",
                      "use the returned value")
    x = lift(b, a)
    if axis is None:
        x, axis = _flat(b, x), 0
    axis = normalize_axis(b, axis, x.ndim)
    if not isinstance(condition, Value) and size is None:
        cond = np.asarray(condition)
        if cond.ndim != 1:
            raise b.error(PSCValueError, "condition must be a 1-d array")
        picked = np.flatnonzero(cond)
        _check_static_picks(b, picked, x.shape[axis], axis)
        index = (slice(None),) * axis + (picked.astype(INDEX),)
        return indexing.getitem(b, x, index)
    cond = _truth(b, lift(b, condition))
    if cond.ndim != 1:
        raise b.error(PSCValueError, "condition must be a 1-d array")
    size = _static_size(b, size, "compress")
    n = x.shape[axis]
    if cond.shape[0] > n:
        raise b.error(PSCIndexError, f"condition has {cond.shape[0]} entries, more than axis "
                      f"{axis} of size {n}")
    front = b.transpose(x, [axis] + [d for d in range(x.ndim) if d != axis])
    front = b.slice(front, [0] * x.ndim, [cond.shape[0]] + list(front.shape[1:]))
    (rows,) = compact(b, cond, [front], size, [fill_value])
    back = list(range(1, x.ndim))
    back.insert(axis, 0)
    return b.transpose(rows, back)


@_rule("numpy.trim_zeros")
def trim_zeros(b, filt, trim="fb", axis=None):
    raise b.error(PSCValueError, "np.trim_zeros of a traced array has a length that depends "
                  "on the data, which a compiled array cannot have", "find the bounds with "
                  "np.argmax on (x != 0) and keep the full length, masking with np.where")


# --- bincount --------------------------------------------------------------------------------

@_rule("numpy.bincount")
def bincount(b, x, weights=None, minlength=0, *, length=None):
    xs = lift(b, x)
    if xs.ndim != 1:
        raise b.error(PSCValueError, "object too deep for desired array" if xs.ndim > 1
                      else "object of too small depth for desired array")
    if not (dtypes.is_integer(xs.dtype) or dtypes.is_bool(xs.dtype)):
        raise b.error(PSCTypeError, f"Cannot cast array data from dtype('{xs.dtype}') to "
                      "dtype('int64') according to the rule 'safe'")
    minlength = static_int(b, 0 if minlength is None else minlength, "minlength")
    if minlength < 0:
        raise b.error(PSCValueError, "'minlength' must not be negative")
    n = _bincount_length(b, xs, minlength, length)
    if weights is None:
        updates = b.broadcast_in_dim(b.constant(np.int64(1)), xs.shape, ())
    else:
        w = lift(b, weights)
        if dtypes.is_complex(w.dtype):
            raise b.error(PSCTypeError, "Cannot cast array data from dtype('complex128') "
                          "to dtype('float64') according to the rule 'safe'")
        if w.shape != xs.shape:
            raise b.error(PSCValueError, "The weights and list don't have the same length.")
        updates = b.convert(w, np.float64)
    if xs.size == 0 or n == 0:
        return b.broadcast_in_dim(b.constant(np.zeros((), updates.dtype)), (n,), ())
    index = b.convert(xs, INDEX)
    negative = b.lt(index, full_like_value(b, 0, index))
    if not dtypes.is_unsigned(xs.dtype) and not dtypes.is_bool(xs.dtype):
        guard(b, "index", negative, "np.bincount: the input has a negative value")
    # values outside [0, n) go to one extra bin, cut off (every scatter index in range)
    trash = full_like_value(b, n, index)
    index = b.select(b.or_(negative, b.gt(index, trash)), trash, index)
    zeros = b.broadcast_in_dim(b.constant(np.zeros((), updates.dtype)), (n + 1,), ())
    counts = b.scatter(zeros, b.reshape(index, (xs.size, 1)), updates,
                       update_window_dims=(), inserted_window_dims=(0,),
                       scatter_dims_to_operand_dims=(0,), index_vector_dim=1, mode="add")
    return b.slice(counts, [0], [n])


def _bincount_length(b: Builder, xs: Value, minlength: int, length) -> int:
    if length is not None:
        length = static_int(b, length, "length")
        if length < 0:
            raise b.error(PSCValueError, f"length must be non-negative, got {length}")
        return length
    top = 1 if dtypes.is_bool(xs.dtype) else int(np.iinfo(xs.dtype).max)
    if xs.size and minlength <= top:
        raise b.error(PSCValueError, "np.bincount of a traced array has length max(x) + 1, "
                      "which depends on the data", "pass a static length=N (as in "
                      "jax.numpy; larger values are dropped), or a minlength above every "
                      "value x can hold")
    return minlength


# --- isin ------------------------------------------------------------------------------------

def contains(b: Builder, sorted_pool: Value, v: Value) -> tuple[Value, Value]:
    """(whether each ``v`` is in the sorted 1-d ``sorted_pool``, the position of its first
    occurrence there, clamped), NaN never found."""
    n = sorted_pool.shape[0]
    pos = search(b, sorted_pool, v, right=False)
    pos = b.min(pos, full_like_value(b, n - 1, pos))
    return b.eq(gather_1d(b, sorted_pool, pos), v), pos


@_rule("numpy.isin")
def isin(b, element, test_elements, assume_unique=False, invert=False, *, kind=None):
    dtype = result_dtype(b, [element, test_elements])
    e, t = lift(b, element, dtype), _flat(b, lift(b, test_elements, dtype))
    if kind not in (None, "sort", "table"):
        raise b.error(PSCValueError, f"Invalid kind: '{kind}'. Please use None, 'sort' or "
                      "'table'.")
    if kind == "table" and not (dtypes.is_integer(dtype) or dtypes.is_bool(dtype)):
        raise b.error(PSCValueError, "The 'table' method is only supported for boolean or "
                      "integer arrays. Please select 'sort' or None for kind.")
    if t.size == 0 or e.size == 0:
        found = b.broadcast_in_dim(b.constant(np.bool_(False)), e.shape, ())
    elif e.size * t.size <= COMPARE_ALL_LIMIT or dtypes.is_complex(dtype):
        shape = e.shape + (t.size,)
        pairs = b.eq(b.broadcast_in_dim(e, shape, range(e.ndim)),
                     b.broadcast_in_dim(t, shape, (e.ndim,)))
        found = b.reduce(pairs, "or", (e.ndim,))
    else:
        (pool,) = b.sort([t], 0)
        found = b.reshape(contains(b, pool, _flat(b, e))[0], e.shape)
    return b.not_(found) if invert else found


# --- unique ----------------------------------------------------------------------------------

def _differs(b: Builder, x: Value, y: Value, equal_nan: bool) -> Value:
    """Row-wise ``x != y`` for (k,)+rest operands: any element differs."""
    ne = b.ne(x, y)
    if equal_nan and dtypes.is_inexact(x.dtype):
        ne = b.and_(ne, b.not_(b.and_(b.ne(x, x), b.ne(y, y))))
    return b.reduce(ne, "or", range(1, x.ndim)) if x.ndim > 1 else ne


def sorted_groups(b: Builder, x: Value, equal_nan: bool) -> tuple[Value, Value, Value]:
    """For ``x`` of shape (n,)+rest: (its rows sorted lexicographically, the int64
    permutation doing it (stable), a bool (n,) marking the first row of each run of
    equal rows)."""
    n, rest = x.shape[0], x.shape[1:]
    width = math.prod(rest)
    if n == 0:
        return x, b.constant(np.zeros(0, INDEX)), b.constant(np.zeros(0, bool))
    if width == 0:   # every row empty, so all equal
        first = b.eq(b.iota((n,), INDEX, 0), b.broadcast_in_dim(b.constant(np.int64(0)),
                                                                (n,), ()))
        return x, b.iota((n,), INDEX, 0), first
    if not rest:
        aux, perm = argsort_axis(b, x, 0)
    else:
        rows = b.reshape(x, (n, width))
        columns = [b.reshape(b.slice(rows, [0, j], [n, j + 1]), (n,)) for j in range(width)]
        perm = b.sort(columns + [b.iota((n,), INDEX, 0)], 0, num_keys=width)[-1]
        aux = b.gather(x, b.reshape(perm, (n, 1)), offset_dims=tuple(range(1, x.ndim)),
                       collapsed_slice_dims=(0,), start_index_map=(0,), index_vector_dim=1,
                       slice_sizes=(1,) + rest)
    head = b.slice(aux, [0] * x.ndim, [n - 1] + list(rest))
    tail = b.slice(aux, [1] + [0] * len(rest), list(aux.shape))
    first = b.concatenate([b.constant(np.ones(1, bool)), _differs(b, tail, head, equal_nan)],
                          0)
    return aux, perm, first


def _first_row(b: Builder, aux: Value) -> Value:
    return b.reshape(b.slice(aux, [0] * aux.ndim, [1] + list(aux.shape[1:])), aux.shape[1:])


def _unique(b, ar, return_index, return_inverse, return_counts, axis, equal_nan, size,
            fill_value, name):
    x = lift(b, ar)
    refuse_complex(b, x, f"np.{name}")
    size = _static_size(b, size, name)
    if axis is None:
        x, axis, merge_nan = _flat(b, x), 0, equal_nan
    else:
        x = b.reshape(x, (1,)) if x.ndim == 0 else x
        axis = normalize_axis(b, axis, x.ndim)
        x = b.transpose(x, [axis] + [d for d in range(x.ndim) if d != axis])
        merge_nan = False   # NumPy compares whole rows: NaN rows never equal
    n = x.shape[0]
    if n == 0 and size and fill_value is None:
        raise b.error(PSCValueError, f"np.{name}: for zero-sized input with nonzero size "
                      "argument, fill_value must be specified")
    aux, perm, first = sorted_groups(b, x, merge_nan)
    fill = fill_value if fill_value is not None else _first_row(b, aux)
    (values,) = compact(b, first, [aux], size, [fill])
    if values.ndim > 1:
        back = list(range(1, values.ndim))
        back.insert(axis, 0)
        values = b.transpose(values, back)
    out = [values]
    if return_index:
        out.append(compact(b, first, [perm], size, [_first_row(b, perm) if n else 0])[0])
    if return_inverse:
        out.append(_inverse(b, perm, first, (n,)))
    if return_counts:
        starts = compact(b, first, [b.iota((n,), INDEX, 0)], size + 1, [n])[0]
        out.append(b.sub(b.slice(starts, [1], [size + 1]), b.slice(starts, [0], [size])))
    return out


def _inverse(b: Builder, perm: Value, first: Value, shape) -> Value:
    n = perm.shape[0]
    if n == 0:
        return b.constant(np.zeros(shape, INDEX))
    group = b.sub(b.cumsum(b.convert(first, INDEX), 0), full_like_value(b, 1, perm))
    inverse = b.sort([perm, group], 0, num_keys=1)[1]
    return b.reshape(inverse, shape)


@_rule("numpy.unique")
def unique(b, ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, sorted=True, size=None, fill_value=None):
    flat_call = axis is None
    out = _unique(b, ar, return_index, return_inverse, return_counts, axis, equal_nan, size,
                  fill_value, "unique")
    if return_inverse and flat_call:
        shape = lift(b, ar).shape
        at = 1 + bool(return_index)
        out[at] = b.reshape(out[at], shape)
    return out[0] if len(out) == 1 else tuple(out)


@_rule("numpy.unique_values")
def unique_values(b, x, *, size=None, fill_value=None):
    return _unique(b, x, False, False, False, None, False, size, fill_value,
                   "unique_values")[0]


@_rule("numpy.unique_counts")
def unique_counts(b, x, *, size=None, fill_value=None):
    return _UNIQUE_COUNTS(*_unique(b, x, False, False, True, None, False, size, fill_value,
                                   "unique_counts"))


@_rule("numpy.unique_inverse")
def unique_inverse(b, x, *, size=None, fill_value=None):
    values, inverse = _unique(b, x, False, True, False, None, False, size, fill_value,
                              "unique_inverse")
    return _UNIQUE_INVERSE(values, b.reshape(inverse, lift(b, x).shape))


@_rule("numpy.unique_all")
def unique_all(b, x, *, size=None, fill_value=None):
    values, index, inverse, counts = _unique(b, x, True, True, True, None, False, size,
                                             fill_value, "unique_all")
    return _UNIQUE_ALL(values, index, b.reshape(inverse, lift(b, x).shape), counts)


# --- set operations on 1-d arrays ------------------------------------------------------------

def _flat_operands(b: Builder, ar1, ar2, name: str, dtype=None) -> tuple[Value, Value]:
    dtype = result_dtype(b, [ar1, ar2]) if dtype is None else dtype
    x1, x2 = _flat(b, lift(b, ar1, dtype)), _flat(b, lift(b, ar2, dtype))
    refuse_complex(b, x1, f"np.{name}")
    return x1, x2


def _distinct(b: Builder, x: Value, assume_unique: bool) -> tuple[Value, Value, Value]:
    """(sorted x, its permutation, which entries to count): the first of each run of
    equal values (NaNs one value), or every entry when ``assume_unique``."""
    aux, perm, first = sorted_groups(b, x, equal_nan=True)
    if assume_unique:
        first = b.broadcast_in_dim(b.constant(np.bool_(True)), x.shape, ())
    return aux, perm, first


def _smallest_result(b: Builder, values: Value, keep: Value) -> Value:
    """jax's default fill: the first (smallest) result, 0 when there is none."""
    if values.shape[0] == 0:
        return b.constant(np.zeros((), values.dtype))
    any_kept = b.reduce(keep, "or", (0,))
    head = compact(b, keep, [values], 1, [0])[0]
    return b.select(any_kept, b.reshape(head, ()), b.constant(np.zeros((), values.dtype)))


@_rule("numpy.union1d")
def union1d(b, ar1, ar2, *, size=None, fill_value=None):
    x1, x2 = _flat_operands(b, ar1, ar2, "union1d")
    size = _static_size(b, size, "union1d")
    both = b.concatenate([x1, x2], 0)
    if both.size == 0:
        return _fill(b, 0 if fill_value is None else fill_value, both.dtype, (size,))
    return _unique(b, both, False, False, False, None, True, size, fill_value, "union1d")[0]


@_rule("numpy.intersect1d")
def intersect1d(b, ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    x1, x2 = _flat_operands(b, ar1, ar2, "intersect1d")
    size = _static_size(b, size, "intersect1d")
    n1, n2 = x1.size, x2.size
    if n1 == 0 or n2 == 0:
        values = _fill(b, 0 if fill_value is None else fill_value, x1.dtype, (size,))
        if not return_indices:
            return values
        return (values, b.constant(np.full(size, n1, INDEX)),
                b.constant(np.full(size, n2, INDEX)))
    aux1, perm1, first1 = _distinct(b, x1, assume_unique)
    pool, perm2 = argsort_axis(b, x2, 0)
    found, pos = contains(b, pool, aux1)
    keep = b.and_(first1, found)
    fill = fill_value if fill_value is not None else _smallest_result(b, aux1, keep)
    (values,) = compact(b, keep, [aux1], size, [fill])
    if not return_indices:
        return values
    index1, index2 = compact(b, keep, [perm1, gather_1d(b, perm2, pos)], size, [n1, n2])
    return values, index1, index2


@_rule("numpy.setdiff1d")
def setdiff1d(b, ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    own = lift(b, ar1).dtype
    x1, x2 = _flat_operands(b, ar1, ar2, "setdiff1d")
    size = _static_size(b, size, "setdiff1d")
    fill = 0 if fill_value is None else fill_value
    if x1.size == 0:
        return _fill(b, fill, own, (size,))
    if assume_unique:   # NumPy keeps ar1's order then
        candidates, keep = x1, b.broadcast_in_dim(b.constant(np.bool_(True)), x1.shape, ())
    else:
        candidates, _, keep = _distinct(b, x1, False)
    if x2.size:
        (pool,) = b.sort([x2], 0)
        keep = b.and_(keep, b.not_(contains(b, pool, candidates)[0]))
    return compact(b, keep, [b.convert(candidates, own)], size, [fill])[0]


@_rule("numpy.setxor1d")
def setxor1d(b, ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    x1, x2 = _flat_operands(b, ar1, ar2, "setxor1d")
    size = _static_size(b, size, "setxor1d")
    if x1.size + x2.size == 0:
        return _fill(b, 0 if fill_value is None else fill_value, x1.dtype, (size,))
    parts = [_distinct(b, x, assume_unique) for x in (x1, x2) if x.size]
    values = b.concatenate([p[0] for p in parts], 0)
    valid = b.concatenate([p[2] for p in parts], 0)
    # the counted entries first, sorted (NaN last); a value is kept when neither
    # neighbour among them equals it (NaN != NaN: NumPy keeps a NaN from each side)
    invalid = b.convert(b.not_(valid), np.int8)
    invalid, values = b.sort([invalid, values], 0, num_keys=2)
    valid = b.eq(invalid, full_like_value(b, 0, invalid))
    m = values.shape[0]
    keep = valid
    if m > 1:
        differs = b.ne(b.slice(values, [1], [m]), b.slice(values, [0], [m - 1]))
        next_valid = b.slice(valid, [1], [m])
        unlike_prev = b.concatenate([b.constant(np.ones(1, bool)), differs], 0)
        unlike_next = b.concatenate([b.or_(differs, b.not_(next_valid)),
                                     b.constant(np.ones(1, bool))], 0)
        keep = b.and_(keep, b.and_(unlike_prev, unlike_next))
    fill = fill_value if fill_value is not None else _smallest_result(b, values, keep)
    return compact(b, keep, [values], size, [fill])[0]


for _name, _rule_fn in RULES.items():
    register_translation_rule(_name, _rule_fn)
