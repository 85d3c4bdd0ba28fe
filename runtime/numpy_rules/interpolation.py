"""``np.interp`` and ``np.unwrap``, as NumPy computes them.

``interp``: float64 results (complex128 for complex ``fp``, each part interpolated); ``x``
below ``xp[0]`` gives ``left`` (default ``fp[0]``), above ``xp[-1]`` ``right`` (default
``fp[-1]``), an exact hit ``xp[j] == x`` gives ``fp[j]``, and NaN from an infinite slope is
retried from the right end as NumPy's C loop does.  ``xp`` must be increasing (NumPy does
not check either).  The interval of each ``x`` is found by counting the ``xp <= x``, which
costs ``len(x) * len(xp)`` comparisons (fine for the sample tables NumPy code passes).
With ``period``, ``x`` and ``xp`` are reduced modulo it and ``xp`` is sorted (traced or not).
``unwrap`` is NumPy's Python code on the builder: differences, ``mod`` into
``[-period/2, period/2)`` with NumPy's boundary rule, and a cumulative sum of corrections.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..errors import PSCTypeError, PSCValueError
from ..translation import register_translation_rule, translate_numpy
from ._core import broadcast_to, full_like_value, lift, normalize_axis
from .elementwise import UFUNC_RULES

_U = UFUNC_RULES


def _item(b, v, index):
    return translate_numpy(b, operator.getitem, v, index)


def interp(b: Builder, x, xp, fp, left=None, right=None, period=None):
    x = lift(b, x)
    if dtypes.is_complex(x.dtype):
        raise b.error(PSCTypeError, "Cannot cast array data from dtype('complex128') to "
                      "dtype('float64') according to the rule 'safe'")
    x, xp = b.convert(x, dtypes.float64), b.convert(lift(b, xp), dtypes.float64)
    fp = lift(b, fp)
    fp = b.convert(fp, np.complex128 if dtypes.is_complex(fp.dtype) else dtypes.float64)
    if xp.ndim != 1 or fp.ndim != 1:
        raise b.error(PSCValueError, "object too deep for desired array")
    if xp.shape[0] != fp.shape[0]:
        raise b.error(PSCValueError, "fp and xp are not of the same length.")
    if xp.shape[0] == 0:
        raise b.error(PSCValueError, "array of sample points is empty")
    if period is not None:
        if not hasattr(period, "dtype") and period == 0:
            raise b.error(PSCValueError, "period must be a non-zero value")
        x, xp, fp = _periodic(b, x, xp, fp, period)
        left = right = None
    if dtypes.is_complex(fp.dtype):
        parts = [_interp_real(b, x, xp, part(fp), _part(b, part, left), _part(b, part, right))
                 for part in (b.real, b.imag)]
        return b.complex(*parts)
    return _interp_real(b, x, xp, fp, left, right)


def _part(b, part, value):
    if value is None:
        return None
    value = b.convert(lift(b, value), np.complex128)
    return part(value)


def _periodic(b, x, xp, fp, period):
    period = _U[np.absolute](b, lift(b, period, dtypes.float64))
    x, xp = _U[np.remainder](b, x, period), _U[np.remainder](b, xp, period)
    order = translate_numpy(b, np.argsort, xp)
    xp, fp = _item(b, xp, order), _item(b, fp, order)
    xp = translate_numpy(b, np.concatenate, (_U[np.subtract](b, _item(b, xp, slice(-1, None)),
                                                             period), xp,
                                             _U[np.add](b, _item(b, xp, slice(0, 1)), period)))
    fp = translate_numpy(b, np.concatenate, (_item(b, fp, slice(-1, None)), fp,
                                             _item(b, fp, slice(0, 1))))
    return x, xp, fp


def _interp_real(b, x, xp, fp, left, right):
    n = xp.shape[0]
    first, last = _item(b, fp, 0), _item(b, fp, n - 1)
    left = first if left is None else b.convert(lift(b, left), fp.dtype)
    right = last if right is None else b.convert(lift(b, right), fp.dtype)
    if n == 1:
        result = broadcast_to(b, first, x.shape)
    else:
        below = b.le(b.broadcast_in_dim(xp, x.shape + (n,), (x.ndim,)),
                     b.broadcast_in_dim(x, x.shape + (n,), range(x.ndim)))
        count = b.reduce(b.convert(below, dtypes.int64), "sum", (x.ndim,))
        j = b.min(b.max(b.sub(count, full_like_value(b, 1, count)),
                        full_like_value(b, 0, count)), full_like_value(b, n - 2, count))
        j1 = b.add(j, full_like_value(b, 1, j))
        x0, x1, f0, f1 = (_item(b, v, k) for v, k in ((xp, j), (xp, j1), (fp, j), (fp, j1)))
        slope = b.div(b.sub(f1, f0), b.sub(x1, x0))
        result = b.add(b.mul(slope, b.sub(x, x0)), f0)
        retry = b.add(b.mul(slope, b.sub(x, x1)), f1)
        result = b.select(b.ne(result, result), retry, result)
        result = b.select(b.and_(b.ne(result, result), b.eq(f0, f1)), f0, result)
        result = b.select(b.eq(x, x0), f0, result)
    x_last, x_first = _item(b, xp, n - 1), _item(b, xp, 0)
    result = b.select(b.eq(x, broadcast_to(b, x_last, x.shape)),
                      broadcast_to(b, last, x.shape), result)
    result = b.select(b.gt(x, broadcast_to(b, x_last, x.shape)),
                      broadcast_to(b, right, x.shape), result)
    return b.select(b.lt(x, broadcast_to(b, x_first, x.shape)),
                    broadcast_to(b, left, x.shape), result)


def unwrap(b: Builder, p, discont=None, axis=-1, *, period=2 * np.pi):
    p = lift(b, p)
    if p.ndim == 0:
        raise b.error(PSCValueError, "diff requires input that is at least one dimensional")
    axis = normalize_axis(b, axis, p.ndim)

    def along(s):
        index = [slice(None)] * p.ndim
        index[axis] = s
        return tuple(index)
    dd = _U[np.subtract](b, _item(b, p, along(slice(1, None))), _item(b, p, along(slice(None, -1))))
    if discont is None:
        discont = period / 2
    dtype = np.result_type(dd.dtype, period)
    if np.issubdtype(dtype, np.integer):
        interval_high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        interval_high, boundary_ambiguous = period / 2, True
    interval_low = -interval_high
    ddmod = _U[np.add](b, _U[np.remainder](b, _U[np.subtract](b, dd, interval_low), period),
                       interval_low)
    if boundary_ambiguous:
        fix = b.and_(_U[np.equal](b, ddmod, interval_low), _U[np.greater](b, dd, 0))
        ddmod = b.select(fix, full_like_value(b, interval_high, ddmod), ddmod)
    correction = _U[np.subtract](b, ddmod, dd)
    small = _U[np.less](b, _U[np.absolute](b, dd), discont)
    correction = b.select(small, full_like_value(b, 0, correction), correction)
    rest = _U[np.add](b, _item(b, p, along(slice(1, None))),
                      translate_numpy(b, np.cumsum, correction, axis=axis))
    return translate_numpy(b, np.concatenate, (b.convert(_item(b, p, along(slice(0, 1))), dtype),
                                               b.convert(rest, dtype)), axis=axis)


register_translation_rule("numpy.interp", interp)
register_translation_rule("numpy.unwrap", unwrap)
COVERAGE_NOTES = {"numpy.interp": "partial: len(x) * len(xp) comparisons to find intervals",
                  "numpy.unwrap": "partial: period and discont must be static numbers"}
