"""Index functions on traced arrays: ``take``, ``take_along_axis``, ``unravel_index``,
``ravel_multi_index``, and the functional forms of NumPy's in-place ``put``,
``put_along_axis``, ``fill_diagonal``, ``place`` and ``copyto``.

``take`` and ``take_along_axis`` are indexing (`indexing.getitem`), and the in-place
functions are its assignment (`indexing.setitem`), so traced indices follow the project's
policy for ``x[i]`` (`runtime.numpy_rules.indexing`): a static index out of range is a
`PSCIndexError` where NumPy raises; a traced one cannot raise while the program runs, so
under ``mode='raise'`` reads clamp and writes are dropped, and the opt-in ``index``
run-time check (``jit_ps(..., checks=True)``) raises `PSCRuntimeIndexError` instead.
``mode='wrap'`` and ``'clip'`` are NumPy's (clip sends negative indices to 0).
``unravel_index`` / ``ravel_multi_index`` of traced indices out of range (NumPy's
ValueError) give unspecified numbers unless the ``index`` check is on, which raises.

The in-place functions mutate their first argument and return None.  A PSC function's
``np.put(a, ...)`` statement on a variable is rewritten by the front end into ``a =
psc.inplace_numpy("numpy.put", a, ...)`` (`runtime.inplace.inplace_numpy`), which applies
the functional form below (``a``'s dtype and shape kept, values cast as NumPy's assignment
casts); on a function argument the update reaches the caller as other argument updates do.
Any other use with a traced operand is refused: the rules registered for these names raise
a `PSCUnsupportedCallError` saying so.  With repeated indices, ``put`` writes one of the
values (XLA's scatter leaves the order unspecified; NumPy's last one wins).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..checks import guard, is_active
from ..errors import (PSCIndexError, PSCTypeError, PSCUnsupportedCallError, PSCValueError)
from ..ir import Value
from ..translation import has_traced, register_translation_rule, translate_numpy
from ._core import (broadcast_shapes, broadcast_to, lift, normalize_axis, raveled_if_0d,
                    static_shape)
from .elementwise import UFUNC_RULES
from .indexing import getitem, setitem

_MODES = ("raise", "wrap", "clip")


def _check_mode(b, mode) -> None:
    if mode not in _MODES:
        raise b.error(PSCValueError, f"clipmode must be one of 'clip', 'raise', or 'wrap' "
                      f"(got {mode!r})")


def _integer_indices(b, indices, what: str = "indices"):
    """Static indices as an int64 ndarray, traced ones as an integer Value (booleans are
    the integers 0 and 1 here, as NumPy's safe cast makes them)."""
    if isinstance(indices, Value) or has_traced(indices):
        v = lift(b, indices)
        if dtypes.is_bool(v.dtype):
            return b.convert(v, np.int64)
        if not dtypes.is_integer(v.dtype):
            raise b.error(PSCTypeError, f"Cannot cast array data from dtype('{v.dtype}') to "
                          "dtype('int64') according to the rule 'safe'")
        return v
    if not isinstance(indices, np.ndarray):   # NumPy converts a sequence straight to intp
        try:
            return np.asarray(indices, dtype=np.int64)
        except (TypeError, ValueError) as err:
            raise b.error(PSCTypeError, f"cannot use {indices!r} as indices: {err}") from None
    array = indices
    if array.dtype.kind not in "biu":
        raise b.error(PSCTypeError, f"Cannot cast array data from dtype('{array.dtype}') to "
                      "dtype('int64') according to the rule 'same_kind'")
    return array.astype(np.int64)


def _moded(b, indices, n: int, mode: str):
    """``indices`` for an axis of ``n`` under ``mode``: wrapped, clipped, or as given."""
    if mode == "raise":
        return indices
    if n == 0:
        if (indices.size if not isinstance(indices, Value) else indices.size):
            raise b.error(PSCIndexError, "cannot do a non-empty take from an empty axes.")
        return indices
    if isinstance(indices, np.ndarray):
        return np.mod(indices, n) if mode == "wrap" else np.clip(indices, 0, n - 1)
    if mode == "wrap":
        return UFUNC_RULES[np.remainder](b, indices, n)
    return UFUNC_RULES[np.minimum](b, UFUNC_RULES[np.maximum](b, indices, 0), n - 1)


def _index_entry(indices):
    return int(indices) if isinstance(indices, np.ndarray) and indices.ndim == 0 else indices


def take(b, a, indices, axis=None, out=None, mode="raise"):
    _check_mode(b, mode)
    x = lift(b, a)
    if axis is None:
        x, axis = b.reshape(x, (x.size,)), 0
    x = raveled_if_0d(b, x)
    axis = normalize_axis(b, axis, x.ndim)
    n = x.shape[axis]
    idx = _integer_indices(b, indices)
    if n == 0 and idx.size:
        raise b.error(PSCIndexError, "cannot do a non-empty take from an empty axes.")
    idx = _moded(b, idx, n, mode)
    return getitem(b, x, (slice(None),) * axis + (_index_entry(idx),))


def _along_axis_index(b, x: Value, indices, axis: int):
    """NumPy's ``_make_along_axis_idx``: ``indices`` on ``axis``, aranges elsewhere."""
    idx = _integer_indices(b, indices)
    if idx.ndim != x.ndim:
        raise b.error(PSCValueError, "`indices` and `arr` must have the same number of "
                      "dimensions")
    index = []
    for d, n in enumerate(x.shape):
        if d == axis:
            index.append(idx)
        else:
            shape = [1] * x.ndim
            shape[d] = n
            index.append(np.arange(n, dtype=np.int64).reshape(shape))
    broadcast_shapes(b, *(np.shape(i) if isinstance(i, np.ndarray) else i.shape
                          for i in index))
    return tuple(index)


def _along_axis_operand(b, arr, indices, axis):
    x = lift(b, arr)
    if axis is None:
        if np.ndim(indices) != 1 and not (isinstance(indices, Value) and indices.ndim == 1):
            raise b.error(PSCValueError, "when axis=None, `indices` must have a single "
                          "dimension.")
        return b.reshape(x, (x.size,)), 0
    return x, normalize_axis(b, axis, x.ndim)


def take_along_axis(b, arr, indices, axis=-1):
    x, axis = _along_axis_operand(b, arr, indices, axis)
    return getitem(b, x, _along_axis_index(b, x, indices, axis))


def unravel_index(b, indices, shape, order="C"):
    dims = static_shape(b, shape)
    idx = lift(b, indices)
    if not dtypes.is_integer(idx.dtype):
        raise b.error(PSCTypeError, "only int indices permitted")
    if order not in ("C", "F"):
        raise b.error(PSCValueError, "only 'C' or 'F' order is permitted")
    idx = b.convert(idx, np.int64)
    size = int(np.prod(dims))
    if is_active("index"):
        bad = b.or_(b.lt(idx, _full(b, 0, idx)), b.ge(idx, _full(b, size, idx)))
        guard(b, "index", bad, f"a traced index is out of bounds for array with size {size}")
    coords = []
    for n in (reversed(dims) if order == "C" else dims):
        n = max(n, 1)
        coords.append(b.rem(idx, _full(b, n, idx)))
        idx = b.div(idx, _full(b, n, idx))
    return tuple(reversed(coords)) if order == "C" else tuple(coords)


def _full(b, value, like: Value) -> Value:
    return b.broadcast_in_dim(b.constant(np.asarray(value, like.dtype)), like.shape, ())


def ravel_multi_index(b, multi_index, dims, mode="raise", order="C"):
    dims = static_shape(b, dims, "dims")
    if not isinstance(multi_index, (tuple, list)) or len(multi_index) != len(dims):
        raise b.error(PSCValueError, f"parameter multi_index must be a sequence of length "
                      f"{len(dims)}")
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    if len(modes) != len(dims):
        raise b.error(PSCValueError, "mode must be a string or a sequence of one per "
                      "dimension")
    if order not in ("C", "F"):
        raise b.error(PSCValueError, "only 'C' or 'F' order is permitted")
    parts = []
    for component, n, m in zip(multi_index, dims, modes):
        _check_mode(b, m)
        v = _integer_indices(b, component)
        v = lift(b, _moded(b, v, n, m), np.int64)
        if m == "raise" and is_active("index"):
            bad = b.or_(b.lt(v, _full(b, 0, v)), b.ge(v, _full(b, n, v)))
            guard(b, "index", bad, "a traced multi-index entry is out of bounds for an axis "
                  f"of size {n}")
        parts.append(v)
    shape = broadcast_shapes(b, *(p.shape for p in parts))
    parts = [broadcast_to(b, p, shape) for p in parts]
    strides = np.cumprod([1] + list(reversed(dims[1:]))).tolist()[::-1] if order == "C" \
        else np.cumprod([1] + list(dims[:-1])).tolist()
    total = None
    for p, stride in zip(parts, strides):
        term = b.mul(p, _full(b, stride, p))
        total = term if total is None else b.add(total, term)
    return total


# --- functional forms of the in-place functions ---------------------------------------------

def _cycled(b, values: Value, count: int) -> Value:
    """``values`` raveled and repeated to ``count`` elements (NumPy's put/place/flat)."""
    flat = b.reshape(values, (values.size,))
    repeats = -(-count // max(flat.size, 1))
    tiled = b.concatenate([flat] * repeats, 0) if repeats > 1 else flat
    return b.slice(tiled, [0], [count])


def put_values(b, a, ind, v, mode="raise"):
    _check_mode(b, mode)
    x = lift(b, a)
    flat = b.reshape(x, (x.size,))
    idx = _integer_indices(b, ind)
    idx = idx.reshape(-1) if isinstance(idx, np.ndarray) else b.reshape(idx, (idx.size,))
    values = lift(b, v, x.dtype)
    if idx.size == 0 or values.size == 0:
        return x
    if x.size == 0:
        raise b.error(PSCIndexError, "cannot replace elements of an empty array")
    idx = _moded(b, idx, x.size, mode)
    written = setitem(b, flat, idx, _cycled(b, values, idx.size))
    return b.reshape(written, x.shape)


def put_along_axis_values(b, arr, indices, values, axis):
    x, axis_ = _along_axis_operand(b, arr, indices, axis)
    written = setitem(b, x, _along_axis_index(b, x, indices, axis_), values)
    return b.reshape(written, lift(b, arr).shape)


def fill_diagonal_values(b, a, val, wrap=False):
    x = lift(b, a)
    if x.ndim < 2:
        raise b.error(PSCValueError, "array must be at least 2-d")
    end = None
    if x.ndim == 2:
        step = x.shape[1] + 1
        if not wrap:
            end = x.shape[1] * x.shape[1]
    else:
        if len(set(x.shape)) != 1:
            raise b.error(PSCValueError, "All dimensions of input must be of equal length")
        step = 1 + int(np.cumprod(x.shape[:-1]).sum())
    positions = np.arange(x.size, dtype=np.int64)[:end:step]
    return put_values(b, x, positions, val)


def place_values(b, arr, mask, vals):
    x = lift(b, arr)
    m = lift(b, mask)
    if m.size != x.size:
        raise b.error(PSCValueError, "place: mask and data must be the same size")
    m = b.reshape(m, (m.size,))
    if not dtypes.is_bool(m.dtype):
        m = b.ne(m, _full(b, 0, m))
    values = lift(b, vals, x.dtype)
    values = b.reshape(values, (values.size,))
    flat = b.reshape(x, (x.size,))
    if x.size == 0:
        return x
    if values.size == 0:
        if not isinstance(mask, Value) and not np.any(mask):
            return x
        raise b.error(PSCValueError, "Cannot insert from an empty array!")
    counts = translate_numpy(b, np.cumsum, b.convert(m, np.int64))
    rank = b.sub(counts, _full(b, 1, counts))   # the k-th selected element takes vals[k]
    rank = b.select(m, rank, _full(b, 0, rank))
    picked = getitem(b, values, UFUNC_RULES[np.remainder](b, rank, values.size))
    return b.reshape(b.select(m, picked, flat), x.shape)


def copyto_values(b, dst, src, casting="same_kind", where=True):
    x = lift(b, dst)
    source_dtype = src.dtype if isinstance(src, Value) else (
        lift(b, src).dtype if has_traced(src) else np.asarray(src).dtype)
    if not np.can_cast(source_dtype, x.dtype, casting):
        kind = "scalar" if np.ndim(src) == 0 and not isinstance(src, Value) else "array data"
        raise b.error(PSCTypeError, f"Cannot cast {kind} from dtype('{source_dtype}') to "
                      f"dtype('{x.dtype}') according to the rule '{casting}'")
    value = lift(b, src, x.dtype)
    if value.shape != x.shape:
        if broadcast_shapes(b, value.shape, x.shape) != x.shape:
            raise b.error(PSCValueError, f"could not broadcast input array from shape "
                          f"{value.shape} into shape {x.shape}")
        value = broadcast_to(b, value, x.shape)
    if where is True:
        return value
    mask = lift(b, where)
    if not dtypes.is_bool(mask.dtype):
        raise b.error(PSCTypeError, f"Cannot cast array data from dtype('{mask.dtype}') to "
                      "dtype('bool') according to the rule 'safe'")
    return b.select(broadcast_to(b, mask, x.shape), value, x)


FUNCTIONAL_FORMS = {
    "numpy.put": put_values, "numpy.put_along_axis": put_along_axis_values,
    "numpy.fill_diagonal": fill_diagonal_values, "numpy.place": place_values,
    "numpy.copyto": copyto_values,
}


def _in_place_only(name: str):
    def rule(b, *args, **kwargs):
        short = name.split(".", 1)[1]
        raise b.error(PSCUnsupportedCallError, f"np.{short} writes into its first argument "
                      "in place; with traced values a PSC function supports it only as a "
                      f"statement on a variable, `np.{short}(a, ...)` with `a` passed "
                      "positionally (the front end rebinds `a` to the updated array)",
                      f"call np.{short}(name, ...) on its own line, name being the array's "
                      "variable (copy a view first: `v = x[0].copy()`)")
    return rule


COVERAGE_NOTES = {
    "numpy.take": "partial: traced out-of-range indices under mode='raise' clamp (checks=True "
                  "raises), as x[i] does",
    "numpy.take_along_axis": "partial: traced out-of-range indices clamp (checks=True raises)",
    "numpy.unravel_index": "partial: traced out-of-range indices are unspecified unless "
                           "checks=True, which raises",
    "numpy.ravel_multi_index": "partial: under mode='raise', traced out-of-range entries are "
                               "unspecified unless checks=True, which raises",
    "numpy.put": "partial: only as a statement np.put(name, ...); repeated indices write one "
                 "of the values",
    "numpy.put_along_axis": "partial: only as a statement np.put_along_axis(name, ...)",
    "numpy.fill_diagonal": "partial: only as a statement np.fill_diagonal(name, ...)",
    "numpy.place": "partial: only as a statement np.place(name, ...)",
    "numpy.copyto": "partial: only as a statement np.copyto(name, ...)",
}

register_translation_rule("numpy.take", take)
register_translation_rule("numpy.ndarray.take", take)
register_translation_rule("numpy.take_along_axis", take_along_axis)
register_translation_rule("numpy.unravel_index", unravel_index)
register_translation_rule("numpy.ravel_multi_index", ravel_multi_index)
for _name in FUNCTIONAL_FORMS:
    register_translation_rule(_name, _in_place_only(_name))
