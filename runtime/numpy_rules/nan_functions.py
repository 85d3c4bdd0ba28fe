"""The NaN-ignoring reductions and scans: nansum, nanprod, nanmean, nanvar, nanstd, nanmin,
nanmax, nanargmin, nanargmax, nancumsum, nancumprod (nanmedian and the nan quantiles are
in `quantiles`).

As NumPy 2's ``numpy/lib/_nanfunctions_impl.py``: NaNs (``np.isnan``; for complex, either
part) are replaced by the operation's identity (0 for sums, 1 for products, ±inf for
min/max) and the plain rule runs, so dtypes, ``axis`` (None/int/tuple/negative),
``keepdims`` and ``dtype`` are the plain function's; integer and bool operands have no NaN
and go straight to it.  ``nanmean`` divides by the count of non-NaN elements,
``nanvar``/``nanstd`` take ``ddof`` (or NumPy 2's ``correction``) from that count.

Data-dependent cases NumPy reports at run time, which a compiled program cannot:

* an all-NaN slice: ``nanmean``/``nanvar``/``nanstd``/``nanmin``/``nanmax`` give NaN as
  NumPy does, without its RuntimeWarning ("Mean of empty slice", "All-NaN slice
  encountered", "Degrees of freedom <= 0").
* ``nanargmin``/``nanargmax`` of an all-NaN slice: NumPy raises ValueError; here the
  result is -1 for that slice (jax.numpy's choice), never a valid-looking index.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..errors import PSCTypeError
from ..ir import Value
from ..translation import register_translation_rule, translate_numpy
from ._core import full_like_value, lift

COVERAGE_NOTES = {
    "numpy.nanargmin": "an all-NaN slice gives -1 (NumPy raises ValueError at run time)",
    "numpy.nanargmax": "an all-NaN slice gives -1 (NumPy raises ValueError at run time)",
    "numpy.nanmin": "partial: complex data is refused",
    "numpy.nanmax": "partial: complex data is refused",
    "numpy.nanvar": "partial: mean= and complex data are not supported; no RuntimeWarning for dof <= 0",
    "numpy.nanstd": "partial: mean= and complex data are not supported; no RuntimeWarning for dof <= 0",
}


def _np(b: Builder, fn, *args, **kwargs):
    return translate_numpy(b, fn, *args, **kwargs)


def _has_nan(x: Value) -> bool:
    return dtypes.is_inexact(x.dtype)


def _nan_mask(b: Builder, x: Value) -> Value:
    return _np(b, np.isnan, x)


def _replaced(b: Builder, x: Value, value) -> Value:
    return b.select(_nan_mask(b, x), full_like_value(b, value, x), x)


def _replacing(fn, value):
    def rule(b, a, *args, **kwargs):
        x = lift(b, a)
        return _np(b, fn, _replaced(b, x, value) if _has_nan(x) else x, *args, **kwargs)
    return rule


def _count(b: Builder, x: Value, axis, keepdims: bool) -> Value:
    valid = b.not_(_nan_mask(b, x))
    return _np(b, np.sum, valid, axis=axis, keepdims=keepdims)   # int64 (intp)


def nanmean(b, a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    x = lift(b, a)
    if not _has_nan(x):
        return _np(b, np.mean, x, axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                   **kwargs)
    total = _np(b, np.sum, _replaced(b, x, 0), axis=axis, dtype=dtype, out=out,
                keepdims=keepdims, **kwargs)
    count = _count(b, x, axis, keepdims)
    # NumPy: np.true_divide(total, count, out=total, casting='unsafe')
    return lift(b, _np(b, np.true_divide, total, count), total.dtype)


def _nanvar(b, name, a, axis, dtype, out, ddof, keepdims, kwargs):
    if kwargs.pop("mean", None) is not None:
        raise b.error(PSCTypeError, f"np.{name}(..., mean=...) is not supported")
    correction = kwargs.pop("correction", None)
    if correction is not None:
        ddof = correction
    x = lift(b, a)
    if dtypes.is_complex(x.dtype):
        raise b.error(PSCTypeError, f"np.{name} of complex data is not supported (the "
                      "builder has no conj)")
    if not _has_nan(x):
        return _np(b, np.var, x, axis=axis, dtype=dtype, out=out, ddof=ddof,
                   keepdims=keepdims, **kwargs)
    mask = _nan_mask(b, x)
    filled = _replaced(b, x, 0)
    count = _count(b, x, axis, True)
    total = _np(b, np.sum, filled, axis=axis, dtype=dtype, out=out, keepdims=True, **kwargs)
    mean = lift(b, _np(b, np.true_divide, total, count), total.dtype)
    centred = _np(b, np.subtract, filled, mean)
    centred = b.select(mask, full_like_value(b, 0, centred), centred)
    squares = _np(b, np.multiply, centred, centred)
    var = _np(b, np.sum, squares, axis=axis, dtype=dtype, keepdims=keepdims)
    if not keepdims:
        count = b.reshape(count, var.shape)
    dof = _np(b, np.subtract, count, ddof)
    var = lift(b, _np(b, np.true_divide, var, dof), var.dtype)
    bad = _np(b, np.less_equal, dof, 0)
    return b.select(bad, full_like_value(b, np.nan, var), var)


def nanvar(b, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    return _nanvar(b, "nanvar", a, axis, dtype, out, ddof, keepdims, kwargs)


def nanstd(b, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    return _np(b, np.sqrt, _nanvar(b, "nanstd", a, axis, dtype, out, ddof, keepdims, kwargs))


def _refuse_complex(b: Builder, fn, x: Value) -> None:
    if dtypes.is_complex(x.dtype):
        raise b.error(PSCTypeError, f"np.nan{fn.__name__} of complex data is not supported "
                      "(NumPy orders complex numbers lexicographically)")


def _nan_extremum(fn, fill):
    def rule(b, a, axis=None, out=None, keepdims=False, **kwargs):
        x = lift(b, a)
        _refuse_complex(b, fn, x)
        if not _has_nan(x):
            return _np(b, fn, x, axis=axis, out=out, keepdims=keepdims, **kwargs)
        result = _np(b, fn, _replaced(b, x, fill), axis=axis, out=out, keepdims=keepdims,
                     **kwargs)
        everything_nan = _np(b, np.all, _nan_mask(b, x), axis=axis, keepdims=keepdims)
        return b.select(everything_nan, full_like_value(b, np.nan, result), result)
    return rule


def _nan_argextremum(fn, fill):
    def rule(b, a, axis=None, out=None, *, keepdims=False):
        x = lift(b, a)
        _refuse_complex(b, fn, x)
        if not _has_nan(x):
            return _np(b, fn, x, axis=axis, out=out, keepdims=keepdims)
        result = _np(b, fn, _replaced(b, x, fill), axis=axis, out=out, keepdims=keepdims)
        mask = _nan_mask(b, x)
        if axis is None:
            mask = b.reshape(mask, (x.size,))
            everything_nan = _np(b, np.all, mask, keepdims=keepdims)
            if keepdims:
                everything_nan = b.reshape(everything_nan, result.shape)
        else:
            everything_nan = _np(b, np.all, mask if x.ndim else b.reshape(mask, (1,)),
                                 axis=axis, keepdims=keepdims)
            everything_nan = b.reshape(everything_nan, result.shape)
        return b.select(everything_nan, full_like_value(b, -1, result), result)
    return rule


RULES = {
    "nansum": _replacing(np.sum, 0), "nanprod": _replacing(np.prod, 1),
    "nancumsum": _replacing(np.cumsum, 0), "nancumprod": _replacing(np.cumprod, 1),
    "nanmean": nanmean, "nanvar": nanvar, "nanstd": nanstd,
    "nanmin": _nan_extremum(np.min, np.inf), "nanmax": _nan_extremum(np.max, -np.inf),
    "nanargmin": _nan_argextremum(np.argmin, np.inf),
    "nanargmax": _nan_argextremum(np.argmax, -np.inf),
}
for _name, _rule in RULES.items():
    register_translation_rule(f"numpy.{_name}", _rule)
