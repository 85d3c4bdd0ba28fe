"""average, ptp, count_nonzero, diff, ediff1d, trapezoid, corrcoef, histogram_bin_edges,
and ``np.maximum.accumulate``/``np.minimum.accumulate``.

Each is NumPy 2's definition composed from the other rules, so dtypes and edge cases are
theirs:

* ``average(a, axis, weights, returned, keepdims)``: without weights ``mean`` (and the
  count, in the mean's dtype); with weights (``a``'s shape, or 1-d along an int ``axis``)
  ``sum(a·w)/sum(w)`` in ``result_type(a, w)`` (float64 at least for integer data).
  NumPy raises ZeroDivisionError when the weights sum to zero; that is data-dependent, so
  here the quotient is inf/NaN.
* ``ptp``: ``max − min`` (integers wrap as in NumPy); ``count_nonzero``: an int64 count
  (``axis=None`` gives a 0-d int64 array where NumPy gives a Python int).
* ``diff(a, n, axis, prepend, append)``: ``n`` static; bool data differences with
  ``!=``.  ``ediff1d(ary, to_end, to_begin)``: the raveled differences, the additions cast
  to ``ary``'s dtype (same-kind casting, as NumPy checks).
* ``trapezoid(y, x, dx, axis)``: ``sum(d·(y[1:] + y[:-1]) / 2)``, ``d`` from ``x`` (1-d or
  ``y``'s shape) or the scalar ``dx``.
* ``corrcoef(x, y, rowvar, dtype)``: ``cov`` divided by the outer product of the standard
  deviations, clipped to [-1, 1] (real data only, as ``cov``).
* ``histogram_bin_edges(a, bins, range, weights)``: the edges ``histogram`` makes (static
  integer bins or static/traced edges; string estimators refused as in ``histogram``).
* ``np.maximum.accumulate``/``np.minimum.accumulate(a, axis=0, dtype=None)``: the
  ``cumulative`` primitive (O(n) work).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..errors import PSCShapeError, PSCTypeError, PSCUnsupportedCallError, PSCValueError
from ..ir import Value
from ..translation import has_traced, register_translation_rule, translate_numpy
from ._core import (broadcast_to, full_like_value, lift, normalize_axis, raveled_if_0d,
                    result_dtype, static_int)
from .statistics import histogram

COVERAGE_NOTES = {
    "numpy.average": "weights summing to zero give inf/NaN (NumPy: ZeroDivisionError)",
    "numpy.count_nonzero": "axis=None gives a 0-d int64 array (NumPy: a Python int)",
    "numpy.corrcoef": "partial: complex data is not supported (as numpy.cov)",
    "numpy.histogram_bin_edges": "partial: string bins ('auto', ...) are not supported",
}


def _np(b: Builder, fn, *args, **kwargs):
    return translate_numpy(b, fn, *args, **kwargs)


def _axis_slice(b: Builder, x: Value, axis: int, start: int, stop: int) -> Value:
    lo, hi = [0] * x.ndim, list(x.shape)
    lo[axis], hi[axis] = start, stop
    return b.slice(x, lo, hi)


# --- average, ptp, count_nonzero ---------------------------------------------------------


def average(b, a, axis=None, weights=None, returned=False, *, keepdims=False):
    if has_traced((returned, keepdims)):
        raise b.error(PSCTypeError, "np.average: returned and keepdims must be static")
    x = lift(b, a)
    if weights is None:
        avg = _np(b, np.mean, x, axis=axis, keepdims=keepdims)
        n = x.size if avg.size == 0 else x.size // max(avg.size, 1)
        scale = full_like_value(b, n, avg)
    else:
        w = lift(b, weights)
        dtype = (result_dtype(b, [x, w, np.float64(0)]) if dtypes.is_integer(x.dtype)
                 or dtypes.is_bool(x.dtype) else result_dtype(b, [x, w]))
        if w.shape != x.shape:
            w = _weights_along_axis(b, x, w, axis)
        scale = _np(b, np.sum, w, axis=axis, dtype=dtype, keepdims=keepdims)
        product = _np(b, np.multiply, x, w, dtype=dtype)
        avg = _np(b, np.true_divide, _np(b, np.sum, product, axis=axis, keepdims=keepdims),
                  scale)
    if returned:
        if scale.shape != avg.shape:
            scale = broadcast_to(b, lift(b, scale, avg.dtype), avg.shape)
        return avg, scale
    return avg


def _weights_along_axis(b: Builder, x: Value, w: Value, axis) -> Value:
    if axis is None:
        raise b.error(PSCTypeError, "Axis must be specified when shapes of a and weights "
                      "differ.")
    if w.ndim != 1:
        raise b.error(PSCTypeError, "1D weights expected when shapes of a and weights differ.")
    axis = normalize_axis(b, axis, x.ndim)
    if w.shape[0] != x.shape[axis]:
        raise b.error(PSCValueError, "Length of weights not compatible with specified axis.")
    return b.broadcast_in_dim(w, x.shape, (axis,))


def ptp(b, a, axis=None, out=None, keepdims=False):
    high = _np(b, np.max, a, axis=axis, out=out, keepdims=keepdims)
    low = _np(b, np.min, a, axis=axis, keepdims=keepdims)
    return _np(b, np.subtract, high, low)


def count_nonzero(b, a, axis=None, *, keepdims=False):
    x = lift(b, a)
    truth = x if dtypes.is_bool(x.dtype) else _np(b, np.not_equal, x, 0)
    return lift(b, _np(b, np.sum, truth, axis=axis, keepdims=keepdims), np.int64)


# --- differences and integrals -----------------------------------------------------------

_NO_VALUE = object()


def _difference(b: Builder, x: Value, axis: int) -> Value:
    n = x.shape[axis]
    later, earlier = _axis_slice(b, x, axis, 1, n), _axis_slice(b, x, axis, 0, max(n - 1, 0))
    if dtypes.is_bool(x.dtype):
        return b.ne(later, earlier)
    return _np(b, np.subtract, later, earlier)


def diff(b, a, n=1, axis=-1, prepend=_NO_VALUE, append=_NO_VALUE):
    n = static_int(b, n, "np.diff's n")
    if n < 0:
        raise b.error(PSCValueError, f"order must be non-negative but got {n}")
    x = lift(b, a)
    if x.ndim == 0:
        raise b.error(PSCValueError, "diff requires input that is at least one dimensional")
    axis = normalize_axis(b, axis, x.ndim)
    if n == 0:
        return x
    parts = []
    for extra in (prepend, append):
        if extra is _NO_VALUE:
            parts.append(None)
            continue
        e = lift(b, extra)
        if e.ndim == 0:
            shape = list(x.shape)
            shape[axis] = 1
            e = b.broadcast_in_dim(e, tuple(shape), ())
        parts.append(e)
    if parts[0] is not None or parts[1] is not None:
        pieces = [p for p in (parts[0], x, parts[1]) if p is not None]
        x = _np(b, np.concatenate, pieces, axis=axis)
    for _ in range(n):
        x = _difference(b, x, axis)
    return x


def ediff1d(b, ary, to_end=None, to_begin=None):
    x = lift(b, ary)
    flat = b.reshape(x, (x.size,))
    pieces = []
    for extra, what in ((to_begin, "to_begin"), (to_end, "to_end")):
        if extra is None:
            pieces.append(None)
            continue
        e = lift(b, extra)
        if not np.can_cast(e.dtype, x.dtype, casting="same_kind"):
            raise b.error(PSCTypeError, f"dtype of `{what}` must be compatible with input "
                          "`ary` under the `same_kind` rule.")
        pieces.append(b.reshape(lift(b, e, x.dtype), (e.size,)))
    d = (_np(b, np.subtract, _axis_slice(b, flat, 0, 1, x.size),   # bool: TypeError
                _axis_slice(b, flat, 0, 0, x.size - 1)) if x.size else flat)
    parts = [p for p in (pieces[0], d, pieces[1]) if p is not None]
    return b.concatenate(parts, 0) if len(parts) > 1 else d


def trapezoid(b, y, x=None, dx=1.0, axis=-1):
    yv = raveled_if_0d(b, lift(b, y))
    axis = normalize_axis(b, axis, yv.ndim)
    if x is None:
        d = dx
    else:
        xv = lift(b, x)
        if xv.ndim == 1:
            d = _difference(b, xv, 0)
            shape = [1] * yv.ndim
            shape[axis] = d.shape[0]
            d = b.reshape(d, tuple(shape))
        else:
            d = _np(b, np.diff, xv, axis=axis)
    n = yv.shape[axis]
    pair_sum = _np(b, np.add, _axis_slice(b, yv, axis, 1, n),
                   _axis_slice(b, yv, axis, 0, max(n - 1, 0)))
    terms = _np(b, np.true_divide, _np(b, np.multiply, d, pair_sum), 2.0)
    return _np(b, np.sum, terms, axis=axis)   # np.add.reduce


# --- corrcoef, histogram_bin_edges ------------------------------------------------------


def corrcoef(b, x, y=None, rowvar=True, bias=_NO_VALUE, ddof=_NO_VALUE, *, dtype=None):
    c = _np(b, np.cov, x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return _np(b, np.true_divide, c, c)
    n = c.shape[0]
    eye = b.eq(b.iota((n, n), np.int32, 0), b.iota((n, n), np.int32, 1))
    diagonal = b.reduce(b.select(eye, c, full_like_value(b, 0, c)), "sum", (1,))
    stddev = _np(b, np.sqrt, diagonal)
    c = _np(b, np.true_divide, c, b.broadcast_in_dim(stddev, (n, n), (0,)))
    c = _np(b, np.true_divide, c, b.broadcast_in_dim(stddev, (n, n), (1,)))
    return _np(b, np.clip, c, -1, 1)


def histogram_bin_edges(b, a, bins=10, range=None, weights=None):  # noqa: A002
    if isinstance(bins, str):
        raise b.error(PSCUnsupportedCallError, f"np.histogram_bin_edges(bins={bins!r}): "
                      "automatic bin estimators are not supported", "give the number of "
                      "bins or the edges")
    if weights is not None and lift(b, weights).shape != lift(b, a).shape:
        raise b.error(PSCShapeError, "weights should have the same shape as a.")
    x = lift(b, a)
    if dtypes.is_bool(x.dtype):   # the same edges as for 0/1 integers
        x = b.convert(x, np.int8)
    _, edges = histogram(b, x, bins, range)
    return edges


# --- ufunc accumulations ------------------------------------------------------------------


def _accumulate(ufunc_name: str, kind: str):
    def rule(b, a, axis=0, dtype=None, out=None):
        if out is not None:
            raise b.error(PSCTypeError, f"np.{ufunc_name}.accumulate(..., out=...) is not "
                          "supported", "use the returned value")
        x = lift(b, a)
        if x.ndim == 0:
            raise b.error(PSCValueError, "cannot accumulate on a scalar")
        axis = normalize_axis(b, axis, x.ndim)
        if dtype is not None:
            x = lift(b, x, dtype)
        if dtypes.is_bool(x.dtype):
            widened = b.convert(x, np.int8)
            return b.ne(b.cumulative(widened, kind, axis), full_like_value(b, 0, widened))
        if dtypes.is_complex(x.dtype):
            raise b.error(PSCTypeError, f"np.{ufunc_name}.accumulate of complex data is not "
                          "supported")
        return b.cumulative(x, kind, axis)
    return rule


RULES = {
    "numpy.average": average, "numpy.ptp": ptp, "numpy.count_nonzero": count_nonzero,
    "numpy.diff": diff, "numpy.ediff1d": ediff1d, "numpy.trapezoid": trapezoid,
    "numpy.corrcoef": corrcoef, "numpy.histogram_bin_edges": histogram_bin_edges,
    "numpy.maximum.accumulate": _accumulate("maximum", "max"),
    "numpy.minimum.accumulate": _accumulate("minimum", "min"),
}
for _name, _rule in RULES.items():
    register_translation_rule(_name, _rule)
