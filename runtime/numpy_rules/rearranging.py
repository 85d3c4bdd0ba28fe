"""Splitting, diagonals, rotations, insertion and deletion, blocks, grids, broadcasting and
index helpers on traced arrays: ``split`` & co, ``diag``, ``diagflat``, ``diagonal``,
``rot90``, ``append``, ``insert``, ``delete``, ``block``, ``meshgrid``,
``broadcast_arrays``, ``dstack``, ``resize``, ``rollaxis``, ``permute_dims``, ``unstack``,
``astype``, ``ix_`` and the ``*_indices_from`` helpers.

Positions (sections, ``obj``, offsets, shapes) must be static.  Where the layout of the
result is intricate (``insert``, ``delete``, the diagonals) NumPy itself computes it, on an
array of element numbers (``np.arange(x.size).reshape(x.shape)``) standing in for ``x``:
the result is then one gather of ``x``'s elements at the numbers NumPy's result holds, and
every shape, order, edge case and error is NumPy's own (its exceptions are re-raised as
`PSCError`s).  The other functions are slices, transposes, reverses, reshapes and
concatenations, with NumPy 2's promotion where arrays are joined (``append``, ``block``,
``dstack``).  Functions whose arguments are all static never reach these rules: NumPy runs
them while the program is built (``tri``, ``tril_indices``, ``indices``, ``mask_indices``,
``broadcast_shapes``...); given a traced size they raise a `PSCTracedValueError`.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import PSCIndexError, PSCTracedValueError, PSCTypeError, PSCValueError
from ..ir import Value
from ..translation import has_traced, register_translation_rule
from ._core import (broadcast_shapes, broadcast_to, cast, lift, normalize_axis, static_int,
                    static_shape)
from ._core import rule_table
from .indexing import getitem
from .shapes import RULES as SHAPE_RULES
from .shapes import concatenate, flip, moveaxis, transpose

RULES, _rule = rule_table()


def _numpy(b, fn, *args, **kwargs):
    """``fn(*args)`` run by NumPy on static stand-ins, its errors as PSC errors."""
    if has_traced((args, kwargs)):
        raise b.error(PSCTracedValueError, f"the positions given to np.{fn.__name__} must be "
                      "known when the program is built, but one is a traced value",
                      "pass them as static arguments (static_argnames) or compute them "
                      "from shapes")
    try:
        return fn(*args, **kwargs)
    except IndexError as err:
        raise b.error(PSCIndexError, str(err)) from None
    except TypeError as err:
        raise b.error(PSCTypeError, str(err)) from None
    except ValueError as err:   # AxisError included
        raise b.error(PSCValueError, str(err)) from None


def _numbers(shape, start: int = 0) -> np.ndarray:
    return np.arange(start, start + int(np.prod(shape)), dtype=np.int64).reshape(shape)


def _gather_numbers(b, sources, numbers: np.ndarray, dtype) -> Value:
    """The elements of ``sources`` (raveled and joined) at ``numbers``; -1 is a zero."""
    flat = [b.reshape(s, (s.size,)) for s in sources] + [b.constant(np.zeros(1, dtype))]
    joined = b.concatenate(flat, 0) if len(flat) > 1 else flat[0]
    numbers = np.where(numbers < 0, joined.shape[0] - 1, numbers)
    if numbers.size == 0:
        return b.constant(np.zeros(numbers.shape, dtype))
    if numbers.ndim and np.array_equal(numbers.ravel(), np.arange(numbers.size)):
        return b.reshape(b.slice(joined, [0], [numbers.size]), numbers.shape)
    return getitem(b, joined, numbers)


# --- splitting ------------------------------------------------------------------------------

def _split(b, ary, indices_or_sections, axis, equal: bool):
    x = lift(b, ary)
    axis_ = normalize_axis(b, axis, x.ndim) if x.ndim else axis
    n = x.shape[axis_] if x.ndim else 0
    if not x.ndim:
        raise b.error(PSCValueError, "array split does not work on 0-d arrays" if equal else
                      "array_split does not work on 0-d arrays")
    fn = np.split if equal else np.array_split
    parts = _numpy(b, fn, np.arange(n), indices_or_sections)
    out = []
    for part in parts:
        start = int(part[0]) if part.size else 0
        index = (slice(None),) * axis_ + (slice(start, start + part.size),)
        out.append(getitem(b, x, index))
    return out


@_rule("numpy.split")
def split(b, ary, indices_or_sections, axis=0):
    return _split(b, ary, indices_or_sections, axis, equal=True)


@_rule("numpy.array_split")
def array_split(b, ary, indices_or_sections, axis=0):
    return _split(b, ary, indices_or_sections, axis, equal=False)


@_rule("numpy.hsplit")
def hsplit(b, ary, indices_or_sections):
    x = lift(b, ary)
    if x.ndim == 0:
        raise b.error(PSCValueError, "hsplit only works on arrays of 1 or more dimensions")
    return _split(b, x, indices_or_sections, 1 if x.ndim > 1 else 0, equal=True)


def _fixed_split(name: str, axis: int, min_ndim: int):
    def rule(b, ary, indices_or_sections):
        x = lift(b, ary)
        if x.ndim < min_ndim:
            raise b.error(PSCValueError, f"{name} only works on arrays of {min_ndim} or more "
                          "dimensions")
        return _split(b, x, indices_or_sections, axis, equal=True)
    return rule


RULES["numpy.vsplit"] = _fixed_split("vsplit", 0, 2)
RULES["numpy.dsplit"] = _fixed_split("dsplit", 2, 3)


@_rule("numpy.unstack")
def unstack(b, x, /, *, axis=0):
    x = lift(b, x)
    if x.ndim == 0:
        raise b.error(PSCValueError, "Input array must be at least 1-d.")
    moved = moveaxis(b, x, axis, 0)
    return tuple(b.reshape(b.slice(moved, [i] + [0] * (x.ndim - 1),
                                   [i + 1] + list(moved.shape[1:])), moved.shape[1:])
                 for i in range(moved.shape[0]))


# --- diagonals ------------------------------------------------------------------------------

@_rule("numpy.diagonal", "numpy.ndarray.diagonal")
def diagonal(b, a, offset=0, axis1=0, axis2=1):
    x = lift(b, a)
    numbers = _numpy(b, np.diagonal, _numbers(x.shape), offset, axis1, axis2)
    return _gather_numbers(b, [x], numbers, x.dtype)


@_rule("numpy.diag")
def diag(b, v, k=0):
    x = lift(b, v)
    if x.ndim == 2:
        return diagonal(b, x, k)
    if x.ndim != 1:
        raise b.error(PSCValueError, "Input must be 1- or 2-d.")
    numbers = _numpy(b, np.diag, _numbers(x.shape, 1), k) - 1   # 0 off the diagonal: -1
    return _gather_numbers(b, [x], numbers, x.dtype)


@_rule("numpy.diagflat")
def diagflat(b, v, k=0):
    x = lift(b, v)
    return diag(b, b.reshape(x, (x.size,)), k)


def _from_shape(fn):
    """A function of ``arr``'s shape only: NumPy runs on a static array of that shape."""
    def rule(b, arr, *args, **kwargs):
        x = lift(b, arr)
        return _numpy(b, fn, np.zeros(x.shape, x.dtype), *args, **kwargs)
    return rule


for _fn in (np.tril_indices_from, np.triu_indices_from, np.diag_indices_from):
    RULES[f"numpy.{_fn.__name__}"] = _from_shape(_fn)


@_rule("numpy.rot90")
def rot90(b, m, k=1, axes=(0, 1)):
    x = lift(b, m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise b.error(PSCValueError, "len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == x.ndim:
        raise b.error(PSCValueError, "Axes must be different.")
    if axes[0] >= x.ndim or axes[0] < -x.ndim or axes[1] >= x.ndim or axes[1] < -x.ndim:
        raise b.error(PSCValueError, f"Axes={axes} out of range for array of ndim={x.ndim}.")
    k = static_int(b, k, "rot90's k") % 4
    if k == 0:
        return x
    if k == 2:
        return flip(b, flip(b, x, axes[0]), axes[1])
    order = list(range(x.ndim))
    order[axes[0]], order[axes[1]] = order[axes[1]], order[axes[0]]
    if k == 1:
        return transpose(b, flip(b, x, axes[1]), order)
    return flip(b, transpose(b, x, order), axes[1])


# --- insertion and deletion -----------------------------------------------------------------

@_rule("numpy.delete")
def delete(b, arr, obj, axis=None):
    x = lift(b, arr)
    obj = _static_positions(b, obj, "np.delete")
    numbers = _numpy(b, np.delete, _numbers(x.shape), obj, axis)
    return _gather_numbers(b, [x], numbers, x.dtype)


@_rule("numpy.insert")
def insert(b, arr, obj, values, axis=None):
    x = lift(b, arr)
    obj = _static_positions(b, obj, "np.insert")
    value = lift(b, values, x.dtype) if has_traced(values) else \
        b.constant(_numpy(b, np.array, values, dtype=x.dtype))   # as NumPy converts them
    numbers = _numpy(b, np.insert, _numbers(x.shape), obj,
                     _numbers(value.shape, x.size), axis)
    return _gather_numbers(b, [x, value], numbers, x.dtype)


def _static_positions(b, obj, what: str):
    if isinstance(obj, Value) or has_traced(obj):
        raise b.error(PSCTracedValueError, f"the positions given to {what} must be known "
                      "when the program is built, but they are traced",
                      "pass static positions (an int, a slice, a sequence or a boolean "
                      "mask), or use np.where to select values")
    if isinstance(obj, slice):
        return obj
    return obj if isinstance(obj, (int, np.integer)) else np.asarray(obj)


@_rule("numpy.append")
def append(b, arr, values, axis=None):
    x, v = _strong(b, arr), _strong(b, values)
    if axis is None:
        if x.ndim != 1:
            x = b.reshape(x, (x.size,))
        v = b.reshape(v, (v.size,))
        axis = x.ndim - 1
    return concatenate(b, [x, v], axis=axis)


def _strong(b, v):
    """NumPy's array functions turn Python scalars into arrays: strong dtypes."""
    if isinstance(v, Value) or has_traced(v):
        return lift(b, v)
    return lift(b, np.asarray(v))


# --- joining and broadcasting ---------------------------------------------------------------

@_rule("numpy.block")
def block(b, arrays):
    depth, leaves = _block_depth(b, arrays, 0)
    ndim = max([depth] + [len(_leaf_shape(leaf)) for leaf in leaves])
    return _block(b, arrays, 0, depth, ndim)


def _leaf_shape(leaf):
    return leaf.shape if isinstance(leaf, Value) else np.shape(leaf)


def _block_depth(b, arrays, depth: int):
    """The nesting depth of ``arrays`` (every leaf at the same one) and its leaves."""
    if isinstance(arrays, tuple):
        raise b.error(PSCTypeError, "arrays is a tuple. Only lists can be used to arrange "
                      "blocks, and np.block does not allow implicit conversion from tuple "
                      "to ndarray.")
    if not isinstance(arrays, list):
        return depth, [arrays]
    if not arrays:
        raise b.error(PSCValueError, "List at arrays" + "[0]" * depth + " cannot be empty")
    found = [_block_depth(b, a, depth + 1) for a in arrays]
    if len({d for d, _ in found}) != 1:
        raise b.error(PSCValueError, "List depths are mismatched.")
    return found[0][0], [leaf for _, leaves in found for leaf in leaves]


def _block(b, arrays, depth: int, max_depth: int, ndim: int):
    if depth < max_depth:
        parts = [_block(b, a, depth + 1, max_depth, ndim) for a in arrays]
        return concatenate(b, parts, axis=-(max_depth - depth))
    x = _strong(b, arrays)
    return b.reshape(x, (1,) * (ndim - x.ndim) + x.shape)


@_rule("numpy.dstack")
def dstack(b, tup):
    if not isinstance(tup, (list, tuple)) or not tup:
        raise b.error(PSCValueError, "need at least one array to concatenate")
    values = [SHAPE_RULES["numpy.atleast_3d"](b, _strong(b, a)) for a in tup]
    return concatenate(b, values, axis=2)


@_rule("numpy.broadcast_arrays")
def broadcast_arrays(b, *args, subok=False):
    values = [_strong(b, a) for a in args]
    shape = broadcast_shapes(b, *(v.shape for v in values))
    return tuple(broadcast_to(b, v, shape) for v in values)


@_rule("numpy.meshgrid")
def meshgrid(b, *xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise b.error(PSCValueError, "Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    ones = (1,) * ndim
    out = []
    for i, x in enumerate(xi):
        v = _strong(b, x)
        out.append(b.reshape(v, ones[:i] + (v.size,) + ones[i + 1:]))
    if indexing == "xy" and ndim > 1:
        out[0] = b.reshape(out[0], (1, out[0].size) + ones[2:])
        out[1] = b.reshape(out[1], (out[1].size, 1) + ones[2:])
    if not sparse:
        out = list(broadcast_arrays(b, *out))
    return tuple(out)


@_rule("numpy.ix_")
def ix_(b, *args):
    out = []
    nd = len(args)
    for k, new in enumerate(args):
        if isinstance(new, Value) or has_traced(new):
            v = lift(b, new)
            if v.ndim != 1:
                raise b.error(PSCValueError, "Cross index must be 1 dimensional")
            if dtypes.is_bool(v.dtype):
                raise b.error(PSCValueError, "np.ix_ of a traced boolean mask gives indices "
                              "whose number depends on the data",
                              "pass a static mask, or use np.where")
        else:
            new = np.asarray(new)
            if new.ndim != 1:
                raise b.error(PSCValueError, "Cross index must be 1 dimensional")
            if new.size == 0:
                new = new.astype(np.intp)
            if new.dtype == np.bool_:
                (new,) = new.nonzero()
            v = lift(b, new)
        out.append(b.reshape(v, (1,) * k + (v.size,) + (1,) * (nd - k - 1)))
    return tuple(out)


# --- reshaping and reordering ---------------------------------------------------------------

@_rule("numpy.resize")
def resize(b, a, new_shape):
    x = lift(b, a)
    if isinstance(new_shape, (int, np.integer)):
        new_shape = (new_shape,)
    new_shape = static_shape(b, new_shape, "new_shape")
    if any(s < 0 for s in new_shape):
        raise b.error(PSCValueError, "all elements of `new_shape` must be non-negative")
    size = int(np.prod(new_shape))
    flat = b.reshape(x, (x.size,))
    if x.size == 0 or size == 0:
        return b.broadcast_in_dim(b.constant(np.zeros((), x.dtype)), new_shape, ())
    repeats = -(-size // x.size)
    tiled = b.concatenate([flat] * repeats, 0) if repeats > 1 else flat
    return b.reshape(b.slice(tiled, [0], [size]), new_shape)


@_rule("numpy.rollaxis")
def rollaxis(b, a, axis, start=0):
    x = lift(b, a)
    n = x.ndim
    axis = normalize_axis(b, axis, n)
    start = static_int(b, start, "start")
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise b.error(PSCValueError, f"'start' arg requires {-n} <= start < {n + 1}")
    if axis < start:
        start -= 1
    if axis == start:
        return x
    axes = list(range(n))
    axes.remove(axis)
    axes.insert(start, axis)
    return b.transpose(x, axes)


@_rule("numpy.permute_dims")
def permute_dims(b, a, axes=None):
    return transpose(b, a, axes)


@_rule("numpy.astype")
def astype(b, x, dtype, /, *, copy=True, device=None):
    return cast(b, lift(b, x), np.dtype(dtype))


# --- functions of static sizes only ---------------------------------------------------------

def _static_only(name: str):
    def rule(b, *args, **kwargs):
        raise b.error(PSCTracedValueError, f"the arguments of np.{name} (sizes, offsets) must "
                      "be known when the program is built, but one is a traced value",
                      "pass them as static arguments (static_argnames) or compute them "
                      "from shapes")
    return rule


for _name in ("tri", "tril_indices", "triu_indices", "diag_indices", "mask_indices",
              "indices", "broadcast_shapes"):
    RULES[f"numpy.{_name}"] = _static_only(_name)

COVERAGE_NOTES = {
    name: "partial: positions (sections, obj, offsets) must be static"
    for name in ("numpy.split", "numpy.array_split", "numpy.hsplit", "numpy.vsplit",
                 "numpy.dsplit", "numpy.insert", "numpy.delete")
}
COVERAGE_NOTES["numpy.ix_"] = "partial: a boolean mask must be static"

for _name, _rule_fn in RULES.items():
    register_translation_rule(_name, _rule_fn)
