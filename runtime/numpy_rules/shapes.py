"""Shape manipulation, joining, selection and sorting: reshape, transpose, concatenate,
stack, where, clip, sort, ... and ``np.array`` of lists holding traced values.

Shapes are static, so every rule here computes its output shape at build time with NumPy's
own rules (``-1`` in reshape, negative axes, broadcasting) and raises NumPy's error, as a
`PSCError` at the user's line, when NumPy would.
"""
from __future__ import annotations

import operator


import numpy as np

from .. import dtypes
from ..builder import Builder
from ..errors import PSCShapeError, PSCValueError
from ..ir import Value
from ..translation import has_traced, register_translation_rule
from ._core import (array, broadcast_shapes, broadcast_to, cast, lift, normalize_axis,
                    normalize_axes, raveled_if_0d, reduction_axes, result_dtype, static_int,
                    static_shape)
from ._core import rule_table
from .elementwise import UFUNC_RULES

RULES, _rule = rule_table()


# --- reshaping ------------------------------------------------------------------------------

def _reshape_target(b: Builder, x: Value, shape) -> tuple[int, ...]:
    shape = static_shape(b, shape)
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise b.error(PSCValueError, "can only specify one unknown dimension")
    if unknown:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        if known == 0 or x.size % known:
            raise b.error(PSCValueError, f"cannot reshape array of size {x.size} into shape "
                          f"{tuple(shape)}")
        shape = tuple(x.size // known if s == -1 else s for s in shape)
    if int(np.prod(shape, dtype=np.int64)) != x.size or any(s < 0 for s in shape):
        raise b.error(PSCValueError, f"cannot reshape array of size {x.size} into shape "
                      f"{tuple(shape)}")
    return tuple(shape)


def _order_c(b: Builder, order) -> None:
    if order not in ("C", "A", None):
        raise b.error(PSCValueError, f"order={order!r} is not supported", "only C order")


@_rule("numpy.reshape")
def reshape(b, a, shape=None, order="C", *, newshape=None, copy=None):
    _order_c(b, order)
    x = lift(b, a)
    return b.reshape(x, _reshape_target(b, x, shape if shape is not None else newshape))


@_rule("numpy.ndarray.reshape")
def reshape_method(b, a, *shape, order="C", copy=None):
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    return reshape(b, a, shape, order)


@_rule("numpy.ravel", "numpy.ndarray.ravel", "numpy.ndarray.flatten")
def ravel(b, a, order="C"):
    _order_c(b, order)
    x = lift(b, a)
    return b.reshape(x, (x.size,))


@_rule("numpy.transpose")
def transpose(b, a, axes=None):
    x = lift(b, a)
    if axes is None:
        return b.transpose(x, tuple(reversed(range(x.ndim))))
    axes = [normalize_axis(b, ax, x.ndim) for ax in axes]
    if sorted(axes) != list(range(x.ndim)):
        raise b.error(PSCValueError, "axes don't match array")
    return b.transpose(x, axes)


@_rule("numpy.ndarray.transpose")
def transpose_method(b, a, *axes):
    axes = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list, type(None))) \
        else axes
    return transpose(b, a, axes if axes != () else None)


@_rule("numpy.matrix_transpose")
def matrix_transpose(b, a):
    x = lift(b, a)
    if x.ndim < 2:
        raise b.error(PSCValueError, "matrix transpose needs at least 2 dimensions")
    perm = list(range(x.ndim))
    perm[-2:] = perm[-1], perm[-2]
    return b.transpose(x, perm)


@_rule("numpy.swapaxes", "numpy.ndarray.swapaxes")
def swapaxes(b, a, axis1, axis2):
    x = lift(b, a)
    perm = list(range(x.ndim))
    i, j = normalize_axis(b, axis1, x.ndim), normalize_axis(b, axis2, x.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return b.transpose(x, perm)


@_rule("numpy.moveaxis")
def moveaxis(b, a, source, destination):
    x = lift(b, a)
    source = normalize_axes_ordered(b, source, x.ndim)
    destination = normalize_axes_ordered(b, destination, x.ndim)
    if len(source) != len(destination):
        raise b.error(PSCValueError, "`source` and `destination` arguments must have the "
                      "same number of elements")
    order = [n for n in range(x.ndim) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return b.transpose(x, order)


def normalize_axes_ordered(b: Builder, axes, ndim: int) -> list[int]:
    axes = list(axes) if isinstance(axes, (tuple, list)) else [axes]
    return [normalize_axis(b, a, ndim) for a in axes]


@_rule("numpy.expand_dims")
def expand_dims(b, a, axis):
    x = lift(b, a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    ndim = x.ndim + len(axes)
    axes = normalize_axes(b, axes, ndim)
    shape, it = [], iter(x.shape)
    for d in range(ndim):
        shape.append(1 if d in axes else next(it))
    return b.reshape(x, shape)


@_rule("numpy.squeeze", "numpy.ndarray.squeeze")
def squeeze(b, a, axis=None):
    x = lift(b, a)
    if axis is None:
        axes = tuple(d for d, s in enumerate(x.shape) if s == 1)
    else:
        axes = reduction_axes(b, axis, x.ndim)   # NumPy: axis 0 or -1 of a 0-d operand too
        for d in axes:
            if x.shape[d] != 1:
                raise b.error(PSCValueError, "cannot select an axis to squeeze out which has "
                              "size not equal to one")
    return b.reshape(x, [s for d, s in enumerate(x.shape) if d not in axes])


@_rule("numpy.broadcast_to")
def broadcast_to_rule(b, array, shape):
    return broadcast_to(b, lift(b, array), static_shape(b, shape))


def _atleast_rule(ndim: int):
    # NumPy's placement: 1-d (n,) becomes (1, n) for 2-d and (1, n, 1) for 3-d.
    def rule(b, *arys):
        out = []
        for a in arys:
            x = lift(b, a)
            if x.ndim >= ndim:
                out.append(x)
            elif ndim == 3 and x.ndim == 2:
                out.append(b.reshape(x, x.shape + (1,)))
            elif ndim == 3 and x.ndim == 1:
                out.append(b.reshape(x, (1,) + x.shape + (1,)))
            else:
                out.append(b.reshape(x, (1,) * (ndim - x.ndim) + x.shape))
        return out[0] if len(out) == 1 else out
    return rule


for _n in (1, 2, 3):
    RULES[f"numpy.atleast_{_n}d"] = _atleast_rule(_n)


# --- joining --------------------------------------------------------------------------------

def _common(b: Builder, arrays, dtype=None) -> list[Value]:
    if not isinstance(arrays, (list, tuple)) or not arrays:
        if isinstance(arrays, Value):   # np.concatenate(x) iterates x's leading axis
            arrays = [b.reshape(b.slice(arrays, [i] + [0] * (arrays.ndim - 1),
                                        [i + 1] + list(arrays.shape[1:])), arrays.shape[1:])
                      for i in range(arrays.shape[0])]
        else:
            raise b.error(PSCValueError, "need at least one array to concatenate")
    dtype = np.dtype(dtype) if dtype is not None else result_dtype(b, arrays)
    return [lift(b, a, dtype) for a in arrays]


@_rule("numpy.concatenate", "numpy.concat")
def concatenate(b, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    values = _common(b, arrays, dtype)
    if axis is None:
        return b.concatenate([b.reshape(v, (v.size,)) for v in values], 0)
    if any(v.ndim == 0 for v in values):
        raise b.error(PSCValueError, "zero-dimensional arrays cannot be concatenated")
    ndim = values[0].ndim
    for v in values:
        if v.ndim != ndim:
            raise b.error(PSCValueError, "all the input arrays must have same number of "
                          f"dimensions, but got {ndim} and {v.ndim}")
    axis = normalize_axis(b, axis, ndim)
    for v in values:
        if any(s != t for d, (s, t) in enumerate(zip(v.shape, values[0].shape)) if d != axis):
            raise b.error(PSCShapeError, "all the input array dimensions except for the "
                          f"concatenation axis must match exactly, got {values[0].shape} and "
                          f"{v.shape} along axis {axis}")
    return b.concatenate(values, axis)


@_rule("numpy.stack")
def stack(b, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    values = _common(b, arrays, dtype)
    shapes = {v.shape for v in values}
    if len(shapes) != 1:
        raise b.error(PSCShapeError, "all input arrays must have the same shape")
    axis = normalize_axis(b, axis, values[0].ndim + 1)
    return b.concatenate([expand_dims(b, v, axis) for v in values], axis)


@_rule("numpy.vstack", "numpy.row_stack")
def vstack(b, tup, dtype=None, casting="same_kind"):
    values = [RULES["numpy.atleast_2d"](b, v) for v in _common(b, tup, dtype)]
    return concatenate(b, values, axis=0)


@_rule("numpy.hstack")
def hstack(b, tup, dtype=None, casting="same_kind"):
    values = [RULES["numpy.atleast_1d"](b, v) for v in _common(b, tup, dtype)]
    return concatenate(b, values, axis=0 if values[0].ndim == 1 else 1)


@_rule("numpy.column_stack")
def column_stack(b, tup):
    values = [b.reshape(v, (v.size, 1)) if v.ndim < 2 else v for v in _common(b, tup)]
    return concatenate(b, values, axis=1)


@_rule("numpy.array", "numpy.asarray", "numpy.asanyarray", "numpy.ascontiguousarray")
def array_rule(b, obj, dtype=None, *, copy=None, order=None, ndmin=0, like=None):
    result = array(b, obj, dtype)
    if ndmin and result.ndim < ndmin:
        result = b.reshape(result, (1,) * (ndmin - result.ndim) + result.shape)
    return result


@_rule("numpy.ndarray.astype")
def astype(b, a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    return cast(b, lift(b, a), np.dtype(dtype))


@_rule("numpy.copy", "numpy.ndarray.copy")
def copy(b, a, order="K", subok=False):
    return lift(b, a)


# --- reordering -----------------------------------------------------------------------------

@_rule("numpy.flip")
def flip(b, m, axis=None):
    x = lift(b, m)
    return b.reverse(x, normalize_axes(b, axis, x.ndim))


@_rule("numpy.fliplr")
def fliplr(b, m):
    return flip(b, m, 1)


@_rule("numpy.flipud")
def flipud(b, m):
    return flip(b, m, 0)


@_rule("numpy.roll")
def roll(b, a, shift, axis=None):
    x = lift(b, a)
    if axis is None:
        return b.reshape(roll(b, b.reshape(x, (x.size,)), shift, 0), x.shape)
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    for s, ax in zip(shifts, axes):
        ax = normalize_axis(b, ax, x.ndim)
        n = x.shape[ax]
        if n == 0:
            continue
        s = static_int(b, s, "roll shift") % n
        if s:
            x = b.concatenate([_take_range(b, x, ax, n - s, n), _take_range(b, x, ax, 0, n - s)],
                              ax)
    return x


def _take_range(b: Builder, x: Value, axis: int, start: int, stop: int) -> Value:
    starts = [0] * x.ndim
    limits = list(x.shape)
    starts[axis], limits[axis] = start, stop
    return b.slice(x, starts, limits)


@_rule("numpy.tile")
def tile(b, A, reps):
    x = lift(b, A)
    reps = static_shape(b, reps, "reps")
    ndim = max(x.ndim, len(reps))
    reps = (1,) * (ndim - len(reps)) + tuple(reps)
    x = b.reshape(x, (1,) * (ndim - x.ndim) + x.shape)
    # broadcast to (r0, s0, r1, s1, ...) then merge each pair
    shape = [d for pair in zip(reps, x.shape) for d in pair]
    tiled = b.broadcast_in_dim(x, shape, range(1, 2 * ndim, 2))
    return b.reshape(tiled, [r * s for r, s in zip(reps, x.shape)])


@_rule("numpy.repeat", "numpy.ndarray.repeat")
def repeat(b, a, repeats, axis=None):
    x = lift(b, a)
    if axis is None:
        x, axis = b.reshape(x, (x.size,)), 0
    x = raveled_if_0d(b, x)   # NumPy: a 0-d operand repeats as 1-d (axis 0 or -1)
    axis = normalize_axis(b, axis, x.ndim)
    count = static_int(b, repeats, "repeats") if not isinstance(repeats, (list, tuple,
                                                                          np.ndarray)) \
        else None
    if count is None:
        raise b.error(PSCValueError, "np.repeat with per-element repeats is not supported",
                      "repeat with one static count")
    shape = list(x.shape[:axis + 1]) + [count] + list(x.shape[axis + 1:])
    dims = [d if d <= axis else d + 1 for d in range(x.ndim)]
    spread = b.broadcast_in_dim(x, shape, dims)
    out = list(x.shape)
    out[axis] *= count
    return b.reshape(spread, out)


# --- selection ------------------------------------------------------------------------------

@_rule("numpy.where")
def where(b, condition, x=None, y=None):
    if x is None and y is None:
        raise b.error(PSCValueError, "np.where(condition) with one argument returns indices "
                      "whose number depends on the data", "use np.where(condition, x, y)")
    cond = lift(b, condition)
    if cond.dtype != dtypes.bool_:
        cond = b.ne(cond, b.broadcast_in_dim(b.constant(np.zeros((), cond.dtype)),
                                             cond.shape, ()))
    dtype = result_dtype(b, [x, y])
    xv, yv = lift(b, x, dtype), lift(b, y, dtype)
    shape = broadcast_shapes(b, cond.shape, xv.shape, yv.shape)
    result = b.select(broadcast_to(b, cond, shape), broadcast_to(b, xv, shape),
                      broadcast_to(b, yv, shape))
    if result.dtype != dtypes.bool_ and getattr(x, "weak", type(x) in (int, float)) and \
            getattr(y, "weak", type(y) in (int, float)):
        result = b.convert(result, result.dtype)
        result.weak = True
    return result


@_rule("numpy.clip", "numpy.ndarray.clip")
def clip(b, a, a_min=None, a_max=None, out=None, *, min=None, max=None, **kwargs):
    low = a_min if a_min is not None else min
    high = a_max if a_max is not None else max
    result = a
    if low is not None:
        result = UFUNC_RULES[np.maximum](b, result, low)
    if high is not None:
        result = UFUNC_RULES[np.minimum](b, result, high)
    return lift(b, result)


@_rule("numpy.sort")
def sort(b, a, axis=-1, kind=None, order=None, *, stable=None):
    x = lift(b, a)
    if axis is None:
        x, axis = b.reshape(x, (x.size,)), 0
    if x.ndim == 0:
        raise b.error(PSCValueError, "Cannot sort a 0-d array")
    (result,) = b.sort([x], normalize_axis(b, axis, x.ndim))
    return result


@_rule("numpy.argsort", "numpy.ndarray.argsort")
def argsort(b, a, axis=-1, kind=None, order=None, *, stable=None):
    x = lift(b, a)
    if axis is None:
        x, axis = b.reshape(x, (x.size,)), 0
    x = raveled_if_0d(b, x)   # NumPy: a 0-d operand sorts as 1-d (axis 0 or -1)
    axis = normalize_axis(b, axis, x.ndim)
    _, indices = b.sort([x, b.iota(x.shape, np.int64, axis)], axis, num_keys=1)
    return indices



def _triangle(b, m, k, keep_lower: bool):
    """np.tril / np.triu: zero the elements above (tril) or below (triu) diagonal ``k`` of
    the last two dimensions; a 1-d ``m`` is broadcast to (N, N) first, as NumPy's mask
    does."""
    x = lift(b, m)
    if has_traced(k):
        raise b.error(PSCValueError, "the diagonal k of np.tril/np.triu must be known when "
                      "the program is built")
    k = operator.index(k)
    if x.ndim == 0:
        raise b.error(PSCValueError, "np.tril/np.triu need an array of 1 or more dimensions")
    if x.ndim == 1:
        x = b.broadcast_in_dim(x, x.shape * 2, (1,))
    rows = b.iota(x.shape, np.int64, x.ndim - 2)
    cols = b.iota(x.shape, np.int64, x.ndim - 1)
    shifted = b.add(rows, b.broadcast_in_dim(b.constant(np.int64(k)), x.shape, ()))
    keep = b.ge(shifted, cols) if keep_lower else b.le(shifted, cols)
    zero = b.broadcast_in_dim(b.constant(np.zeros((), x.dtype)), x.shape, ())
    return b.select(keep, x, zero)


@_rule("numpy.tril")
def tril(b, m, k=0):
    return _triangle(b, m, k, keep_lower=True)


@_rule("numpy.triu")
def triu(b, m, k=0):
    return _triangle(b, m, k, keep_lower=False)


for _name, _rule_fn in RULES.items():
    register_translation_rule(_name, _rule_fn)
