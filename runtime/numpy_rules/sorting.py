"""Sorting and searching: searchsorted, digitize, lexsort, partition, argpartition,
sort_complex, with NumPy's signatures, dtypes (indices are int64, ``intp``) and ordering
(NaN after every number, as NumPy sorts; ties keep their order).

* ``searchsorted``: a count of the elements of ``a`` ordered before each ``v`` (one
  comparison per pair) when ``a`` is short, else a binary search of fixed trip count
  ``ceil(log2(len(a) + 1))`` (``O(len(v) log len(a))``).  Both give NumPy's answer for a
  sorted ``a`` (for an unsorted one NumPy's answer is unspecified too).
* ``digitize`` with traced bins cannot check that they are monotonic (NumPy raises
  ValueError when not): the direction is chosen when the program runs (increasing unless
  every step is a decrease), and bins that are neither give the increasing answer.  Static
  bins are checked while building, as NumPy does.
* ``partition``/``argpartition`` sort the whole axis: a sorted axis has NumPy's partition
  property for every ``kth``, and the ``kth`` elements are NumPy's.  The order of the other
  elements, which NumPy leaves unspecified, is the sorted one.
* Complex operands are refused (the IR has no real/imaginary-part operation to build
  NumPy's lexicographic complex order from); ``sort_complex`` of a real array works.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..errors import PSCTypeError, PSCValueError
from ..ir import Value
from ..translation import register_translation_rule
from ._core import (broadcast_to, full_like_value, lift, normalize_axis,
                    raveled_if_0d, result_dtype, static_int)
from ._core import rule_table

INDEX = np.dtype(np.int64)   # NumPy's intp
COMPARE_ALL_LIMIT = 64       # searchsorted: below this len(a), count comparisons

COVERAGE_NOTES = {
    "numpy.searchsorted": "partial: complex operands refused",
    "numpy.digitize": "partial: traced bins that are not monotonic give the increasing "
                      "answer instead of NumPy's ValueError",
    "numpy.lexsort": "partial: complex keys refused",
    "numpy.partition": "partial: complex refused; kind/order ignored (the axis is sorted)",
    "numpy.argpartition": "partial: complex refused; kind/order ignored (the axis is sorted)",
    "numpy.sort_complex": "partial: complex input refused (real input works)",
}

RULES, _rule = rule_table()


def refuse_complex(b: Builder, x: Value, name: str) -> None:
    if dtypes.is_complex(x.dtype):
        raise b.error(PSCTypeError, f"{name} of a complex array is not supported: NumPy orders "
                      "complex numbers by real then imaginary part, which the compiled "
                      "program cannot take apart", "sort the real and imaginary parts "
                      "yourself (np.lexsort((z.imag, z.real)) on real arrays)")


# --- NumPy's order: NaN last ---------------------------------------------------------------

def _isnan(b: Builder, x: Value) -> Value:
    return b.ne(x, x)


def less(b: Builder, x: Value, y: Value) -> Value:
    """``x < y`` in NumPy's sort order: every NaN after every number (same shapes)."""
    if not dtypes.is_inexact(x.dtype):
        return b.lt(x, y)
    return b.or_(b.lt(x, y), b.and_(_isnan(b, y), b.not_(_isnan(b, x))))


def less_equal(b: Builder, x: Value, y: Value) -> Value:
    """``x <= y`` in NumPy's sort order (NaN equal to NaN, after every number)."""
    if not dtypes.is_inexact(x.dtype):
        return b.le(x, y)
    return b.or_(b.le(x, y), _isnan(b, y))


def argsort_axis(b: Builder, x: Value, axis: int) -> tuple[Value, Value]:
    """(sorted ``x``, the int64 indices that sort it) along ``axis``, stable."""
    return tuple(b.sort([x, b.iota(x.shape, INDEX, axis)], axis, num_keys=1))


# --- searchsorted ----------------------------------------------------------------------------

def _one_d(b: Builder, a, name: str, what: str = "a") -> Value:
    x = lift(b, a)
    if x.ndim != 1:
        raise b.error(PSCValueError, f"{name}: {what} must be 1-dimensional, got shape "
                      f"{x.shape}")
    return x


def search(b: Builder, a: Value, v: Value, right: bool) -> Value:
    """Insertion points of ``v`` into the sorted 1-d ``a`` (same dtype), int64, shape
    ``v.shape``: NumPy's ``searchsorted`` with ``side='right'`` when ``right``."""
    n = a.shape[0]
    if n == 0 or v.size == 0:
        return b.broadcast_in_dim(b.constant(np.int64(0)), v.shape, ())
    before = less_equal if right else less   # does a[i] go before v?
    if n <= COMPARE_ALL_LIMIT:
        shape = v.shape + (n,)
        pairs = before(b, b.broadcast_in_dim(a, shape, (v.ndim,)),
                       b.broadcast_in_dim(v, shape, range(v.ndim)))
        return b.reduce(b.convert(pairs, INDEX), "sum", (v.ndim,))
    return _binary_search(b, a, v, before)


def _binary_search(b: Builder, a: Value, v: Value, before) -> Value:
    """Python-unrolled bisection: ``lo`` ends at the first index whose element does not go
    before ``v``.  Each step gathers ``a[mid]`` for every element of ``v``."""
    n = a.shape[0]
    lo = b.broadcast_in_dim(b.constant(np.int64(0)), v.shape, ())
    hi = b.broadcast_in_dim(b.constant(np.int64(n)), v.shape, ())
    one = full_like_value(b, 1, lo)
    for _ in range(math.ceil(math.log2(n + 1))):
        mid = b.div(b.add(lo, hi), full_like_value(b, 2, lo))
        probe = _gather_1d(b, a, b.min(mid, full_like_value(b, n - 1, mid)))
        active = b.lt(lo, hi)
        goes_before = before(b, probe, v)
        lo = b.select(b.and_(active, goes_before), b.add(mid, one), lo)
        hi = b.select(b.and_(active, b.not_(goes_before)), mid, hi)
    return lo


def _gather_1d(b: Builder, a: Value, indices: Value) -> Value:
    """``a[indices]`` for a 1-d ``a`` and in-range int indices of any shape."""
    return b.gather(a, b.reshape(indices, indices.shape + (1,)), offset_dims=(),
                    collapsed_slice_dims=(0,), start_index_map=(0,),
                    index_vector_dim=indices.ndim, slice_sizes=(1,))


def gather_1d(b: Builder, a: Value, indices: Value) -> Value:
    return _gather_1d(b, a, indices)


def _common_operands(b: Builder, a, v, name: str) -> tuple[Value, Value]:
    dtype = result_dtype(b, [a, v])
    av, vv = lift(b, a, dtype), lift(b, v, dtype)
    refuse_complex(b, av, name)
    return av, vv


@_rule("numpy.searchsorted", "numpy.ndarray.searchsorted")
def searchsorted(b, a, v, side="left", sorter=None):
    if side not in ("left", "right"):
        raise b.error(PSCValueError, f"side must be 'left' or 'right' (got {side!r})")
    a = _one_d(b, a, "searchsorted")
    if sorter is not None:
        order = lift(b, sorter)
        if order.shape != a.shape or not dtypes.is_integer(order.dtype):
            raise b.error(PSCValueError, "sorter must be an integer array of a's shape")
        order = b.convert(order, INDEX)
        a = _gather_1d(b, a, b.max(b.min(order, full_like_value(b, max(a.shape[0] - 1, 0),
                                                                order)),
                                   full_like_value(b, 0, order)))
    av, vv = _common_operands(b, a, v, "searchsorted")
    return search(b, av, vv, right=side == "right")


# --- digitize --------------------------------------------------------------------------------

@_rule("numpy.digitize")
def digitize(b, x, bins, right=False):
    xv = lift(b, x)
    if dtypes.is_complex(xv.dtype):
        raise b.error(PSCTypeError, "x may not be complex")
    direction = _static_direction(b, bins)
    bv = _one_d(b, bins, "digitize", "bins")
    bv, xv = _common_operands(b, bv, xv, "digitize")
    increasing = search(b, bv, xv, right=not right)
    decreasing = b.sub(full_like_value(b, bv.shape[0], increasing),
                       search(b, b.reverse(bv, (0,)), xv, right=not right))
    if direction is not None:
        return increasing if direction > 0 else decreasing
    return b.select(broadcast_to(b, _all_decreasing(b, bv), xv.shape), decreasing, increasing)


def _static_direction(b: Builder, bins):
    """+1/-1 for static bins (NumPy's ValueError when neither), None for traced ones."""
    if isinstance(bins, Value) or not isinstance(bins, (np.ndarray, list, tuple, int, float)):
        return None
    try:
        array = np.asarray(bins)
    except (TypeError, ValueError):
        return None
    if array.dtype == object:
        return None
    if array.ndim != 1:
        return None   # `_one_d` says what is wrong
    steps = np.diff(array)
    if np.all(steps >= 0):
        return 1
    if np.all(steps <= 0):
        return -1
    raise b.error(PSCValueError, "bins must be monotonically increasing or decreasing")


def _all_decreasing(b: Builder, bins: Value) -> Value:
    """A bool scalar: every step of ``bins`` is <= 0 and one is < 0 (NumPy's
    ``_monotonicity``: constant bins count as increasing)."""
    n = bins.shape[0]
    if n < 2:
        return b.constant(np.bool_(False))
    head, tail = b.slice(bins, [0], [n - 1]), b.slice(bins, [1], [n])
    not_up = b.reduce(b.le(tail, head), "and", (0,))
    some_down = b.reduce(b.lt(tail, head), "or", (0,))
    return b.and_(not_up, some_down)


# --- lexsort ---------------------------------------------------------------------------------

@_rule("numpy.lexsort")
def lexsort(b, keys, axis=-1):
    if isinstance(keys, Value):
        if keys.ndim == 0:
            raise b.error(PSCTypeError, "need sequence of keys with len > 0 in lexsort")
        keys = [b.reshape(b.slice(keys, [i] + [0] * (keys.ndim - 1),
                                  [i + 1] + list(keys.shape[1:])), keys.shape[1:])
                for i in range(keys.shape[0])]
    if not isinstance(keys, (list, tuple)) or not keys:
        raise b.error(PSCTypeError, "need sequence of keys with len > 0 in lexsort")
    values = [lift(b, k) for k in keys]
    shape = values[0].shape
    for v in values:
        refuse_complex(b, v, "lexsort")
        if v.shape != shape:
            raise b.error(PSCValueError, "all keys need to be the same shape")
    values = [raveled_if_0d(b, v) for v in values]
    axis = normalize_axis(b, axis, values[0].ndim)
    primary_first = list(reversed(values))
    order = b.sort(primary_first + [b.iota(values[0].shape, INDEX, axis)], axis,
                   num_keys=len(values))
    return order[-1]


# --- partition -------------------------------------------------------------------------------

def _kth_list(b: Builder, kth, n: int) -> list[int]:
    many = isinstance(kth, (list, tuple, np.ndarray))
    items = list(np.asarray(kth).ravel()) if isinstance(kth, np.ndarray) else \
        (list(kth) if many else [kth])
    out = []
    for k in items:
        if isinstance(k, (bool, np.bool_)):
            raise b.error(PSCTypeError, "Partitioning with a boolean kth is not supported",
                          "pass an integer")
        k = static_int(b, k, "kth")
        if not -n <= k < n:
            raise b.error(PSCValueError, f"kth(={k}) out of bounds ({n})")
        out.append(k % n)
    return out


def _partition_operand(b: Builder, a, axis, name: str) -> tuple[Value, int]:
    x = lift(b, a)
    refuse_complex(b, x, name)
    if axis is None:
        return b.reshape(x, (x.size,)), 0
    if x.ndim == 0:
        raise b.error(PSCValueError, "Cannot partition a 0-d array")   # NumPy: AxisError
    return x, normalize_axis(b, axis, x.ndim)


@_rule("numpy.partition", "numpy.ndarray.partition")
def partition(b, a, kth, axis=-1, kind="introselect", order=None):
    x, axis = _partition_operand(b, a, axis, "partition")
    _kth_list(b, kth, x.shape[axis])
    (result,) = b.sort([x], axis)
    return result


@_rule("numpy.argpartition", "numpy.ndarray.argpartition")
def argpartition(b, a, kth, axis=-1, kind="introselect", order=None):
    x, axis = _partition_operand(b, a, axis, "argpartition")
    _kth_list(b, kth, x.shape[axis])
    return argsort_axis(b, x, axis)[1]


# --- sort_complex ----------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _sort_complex_dtype(dtype: np.dtype) -> np.dtype:
    return np.sort_complex(np.zeros(1, dtype)).dtype


@_rule("numpy.sort_complex")
def sort_complex(b, a):
    x = lift(b, a)
    refuse_complex(b, x, "sort_complex")
    if x.ndim == 0:
        raise b.error(PSCValueError, "Cannot sort a 0-d array")
    (result,) = b.sort([x], x.ndim - 1)
    return b.convert(result, _sort_complex_dtype(x.dtype))


for _name, _rule_fn in RULES.items():
    register_translation_rule(_name, _rule_fn)
