"""Reductions and scans: sum, mean, prod, max, min, argmax, argmin, all, any, std, var,
cumsum, cumprod — with NumPy's ``axis``, ``keepdims`` and ``dtype`` semantics.

The result dtype is NumPy's own answer for the operand dtype: `_numpy_result_dtype` runs
the NumPy function on a one-element array of that dtype at build time (small integers
accumulate in int64, ``mean`` of integers is float64, ...), so the rules cannot drift from
NumPy's table.

Sums and products of float16 (and bfloat16) accumulate in float32 and round once, as NumPy
sums a contiguous float16 axis (pairwise, in float32); scans round each prefix.  NumPy
itself rounds after every addition over a non-innermost float16 axis, for every bfloat16
sum, and in float16 ``cumsum``: there our (more accurate) results can differ.
"""
from __future__ import annotations

import functools

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..errors import PSCTypeError, PSCValueError
from ..ir import Value
from ..translation import register_translation_rule
from ._core import (cast, full_like_value, lift, normalize_axes, normalize_axis,
                    raveled_if_0d, reduction_axes, static_int)
from .elementwise import UFUNC_RULES


@functools.lru_cache(maxsize=None)
def _numpy_result_dtype(fn_name: str, dtype: np.dtype, requested) -> np.dtype:
    kwargs = {"dtype": requested} if requested is not None else {}
    fn = getattr(np, fn_name)
    return np.asarray(fn(np.ones((1,), dtype), **kwargs)).dtype


def _reject_out(b: Builder, name: str, kwargs) -> None:
    if kwargs.pop("out", None) is not None:
        raise b.error(PSCTypeError, f"np.{name}(..., out=...) writes into an array, which "
                      "PSC functions cannot do", "use the returned value")
    if kwargs.pop("where", True) is not True:
        raise b.error(PSCTypeError, f"np.{name}(..., where=...) is not supported",
                      "mask the operand with np.where first")
    if kwargs:
        raise b.error(PSCTypeError, f"np.{name}: unsupported keyword arguments "
                      f"{sorted(kwargs)}")


def _keep_dims(b: Builder, result: Value, shape, axes) -> Value:
    kept = tuple(1 if d in axes else s for d, s in enumerate(shape))
    return b.reshape(result, kept)


def _reduce(b: Builder, x: Value, kind: str, axes, keepdims: bool) -> Value:
    if kind in ("sum", "prod") and _is_16_bit_float(x.dtype):
        # NumPy adds float16 in float32 (pairwise) and rounds once; XLA would accumulate
        # in float16 (sum(arange(100)) gave 4948, NumPy 4952).
        wide = b.reduce(b.convert(x, dtypes.float32), kind, axes)
        result = b.convert(wide, x.dtype)
    else:
        result = b.reduce(x, kind, axes)
    return _keep_dims(b, result, x.shape, axes) if keepdims else result


def _is_16_bit_float(dtype) -> bool:
    return dtypes.is_floating(dtype) and np.dtype(dtype).itemsize == 2


def _check_nonempty(b: Builder, name: str, x: Value, axes) -> None:
    if any(x.shape[a] == 0 for a in axes) or (x.size == 0 and not axes):
        raise b.error(PSCValueError, f"zero-size array to reduction operation {name} which "
                      "has no identity")


def _sum_like(name: str, kind: str):
    def rule(b, a, axis=None, dtype=None, keepdims=False, initial=None, **kwargs):
        _reject_out(b, name, kwargs)
        x = lift(b, a)
        out_dtype = _numpy_result_dtype(name, x.dtype, None if dtype is None
                                        else np.dtype(dtype))
        axes = reduction_axes(b, axis, x.ndim)
        x = cast(b, x, out_dtype)
        if out_dtype == dtypes.bool_:   # np.sum(bool, dtype=bool) is a logical or
            kind_ = "or" if kind == "sum" else "and"
        else:
            kind_ = kind
        result = _reduce(b, x, kind_, axes, keepdims)
        if initial is not None:
            ufunc = np.add if kind == "sum" else np.multiply
            result = b.convert(UFUNC_RULES[ufunc](b, result, initial), out_dtype)
        return result
    return rule


def _extremum(name: str, kind: str):
    """max/min: empty reductions need ``initial``.  NaN propagates as in NumPy: XLA's
    max/min propagate it themselves (no separate NaN test, which would be one more
    kernel in every loop that takes a max)."""
    def rule(b, a, axis=None, keepdims=False, initial=None, **kwargs):
        _reject_out(b, name, kwargs)
        x = lift(b, a)
        axes = reduction_axes(b, axis, x.ndim)
        if initial is None:
            _check_nonempty(b, name, x, axes)
        result = _reduce(b, x, kind, axes, keepdims)
        if initial is not None:
            ufunc = np.maximum if kind == "max" else np.minimum
            result = b.convert(UFUNC_RULES[ufunc](b, result, initial), x.dtype)
        return result
    return rule


def _boolean(name: str, kind: str):
    def rule(b, a, axis=None, keepdims=False, **kwargs):
        _reject_out(b, name, kwargs)
        x = lift(b, a)
        truth = x if x.dtype == dtypes.bool_ else b.ne(x, full_like_value(b, 0, x))
        return _reduce(b, truth, kind, reduction_axes(b, axis, x.ndim), keepdims)
    return rule


def _count(b: Builder, x: Value, axes, dtype) -> Value:
    n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    return b.constant(np.asarray(n, dtype))


def mean(b, a, axis=None, dtype=None, keepdims=False, **kwargs):
    _reject_out(b, "mean", kwargs)
    x = lift(b, a)
    out_dtype = _numpy_result_dtype("mean", x.dtype, None if dtype is None
                                    else np.dtype(dtype))
    # float16 accumulates in float32, as NumPy does, to keep the sum accurate.
    acc_dtype = np.dtype(np.float32) if out_dtype == np.float16 else out_dtype
    axes = normalize_axes(b, axis, x.ndim)
    total = _reduce(b, b.convert(x, acc_dtype), "sum", axes, keepdims)
    count = b.broadcast_in_dim(_count(b, x, axes, acc_dtype), total.shape, ())
    return b.convert(b.div(total, count), out_dtype)


def _divide_by_count(b: Builder, total: Value, count: int) -> Value:
    """``total / count`` rounded once, as NumPy divides by its integer count: a float16
    divides in float32, where the count is exact (2099 is not a float16)."""
    dtype = total.dtype
    if _is_16_bit_float(dtype):
        total = b.convert(total, dtypes.float32)
    divisor = b.broadcast_in_dim(b.constant(np.asarray(count, total.dtype)), total.shape, ())
    return b.convert(b.div(total, divisor), dtype)


def _moment(name: str, root: bool):
    def rule(b, a, axis=None, dtype=None, ddof=0, keepdims=False, **kwargs):
        _reject_out(b, name, kwargs)
        x = lift(b, a)
        if dtype is not None and not dtypes.is_inexact(dtype):
            raise b.error(PSCTypeError, f"np.{name} with an integer dtype: NumPy cannot "
                          f"cast the result to {np.dtype(dtype)}", "use a float dtype")
        out_dtype = _numpy_result_dtype(name, x.dtype, None if dtype is None
                                        else np.dtype(dtype))
        # As NumPy's _var: every step in the result dtype (float16 included: its sums
        # accumulate in float32 but are rounded, so float16 squares can overflow to inf
        # as in NumPy), the mean as the rounded sum divided by the count.
        axes = normalize_axes(b, axis, x.ndim)
        xc = cast(b, x, out_dtype)
        n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
        ddof = static_int(b, ddof, "ddof")
        centre = _divide_by_count(b, _reduce(b, xc, "sum", axes, keepdims=True), n)
        centred = b.sub(xc, b.broadcast_in_dim(centre, x.shape, range(x.ndim)))
        squares = b.mul(centred, centred)
        result = _divide_by_count(b, _reduce(b, squares, "sum", axes, keepdims),
                                  max(n - ddof, 0))
        return b.sqrt(result) if root else result
    return rule


def _argextremum(name: str):
    def rule(b, a, axis=None, keepdims=False, **kwargs):
        _reject_out(b, name, kwargs)
        x = lift(b, a)
        if axis is None:
            if x.size == 0:
                raise b.error(PSCValueError, f"attempt to get {name} of an empty sequence")
            flat = b.reshape(x, (x.size,))
            result = getattr(b, name)(flat, 0, np.int64)
            return b.reshape(result, (1,) * x.ndim) if keepdims else result
        shape = x.shape
        x = raveled_if_0d(b, x)   # NumPy: axis 0 or -1 of a 0-d operand is its only element
        axis = normalize_axis(b, axis, x.ndim)
        if x.shape[axis] == 0:
            raise b.error(PSCValueError, f"attempt to get {name} of an empty sequence")
        result = getattr(b, name)(x, axis, np.int64)
        return _keep_dims(b, result, shape, (axis,)) if keepdims and shape else result
    return rule


def _scan(name: str, kind: str):
    def rule(b, a, axis=None, dtype=None, **kwargs):
        _reject_out(b, name, kwargs)
        x = lift(b, a)
        out_dtype = _numpy_result_dtype(name, x.dtype, None if dtype is None
                                        else np.dtype(dtype))
        if axis is None:
            x, axis = b.reshape(x, (x.size,)), 0
        x = raveled_if_0d(b, x)   # NumPy: a 0-d operand scans as 1-d (axis 0 or -1)
        axis = normalize_axis(b, axis, x.ndim)
        x = cast(b, x, out_dtype)
        if out_dtype == dtypes.bool_:
            x, kind_ = b.convert(x, np.int64), kind
            return b.ne(b.cumulative(x, kind_, axis), full_like_value(b, 0, x))
        if _is_16_bit_float(x.dtype):   # accumulated in float32, each prefix rounded
            return b.convert(b.cumulative(b.convert(x, dtypes.float32), kind, axis),
                             x.dtype)
        return b.cumulative(x, kind, axis)
    return rule


RULES = {
    "sum": _sum_like("sum", "sum"),
    "prod": _sum_like("prod", "prod"),
    "max": _extremum("max", "max"),
    "min": _extremum("min", "min"),
    "all": _boolean("all", "and"),
    "any": _boolean("any", "or"),
    "mean": mean,
    "var": _moment("var", root=False),
    "std": _moment("std", root=True),
    "argmax": _argextremum("argmax"),
    "argmin": _argextremum("argmin"),
    "cumsum": _scan("cumsum", "sum"),
    "cumprod": _scan("cumprod", "prod"),
}
_ALIASES = {"amax": "max", "amin": "min", "cumulative_sum": "cumsum",
            "cumulative_prod": "cumprod"}

for _name, _rule in RULES.items():
    register_translation_rule(f"numpy.{_name}", _rule)
    register_translation_rule(f"numpy.ndarray.{_name}", _rule)
for _alias, _name in _ALIASES.items():
    if hasattr(np, _alias):
        register_translation_rule(f"numpy.{_alias}", RULES[_name])


def _ufunc_method(rule, accumulate: bool):
    """``np.add.reduce`` & co.: the reduction rule with the ufunc method's default axis 0."""
    def method(b, a, axis=0, *args, **kwargs):
        if accumulate and lift(b, a).ndim == 0:
            raise b.error(PSCValueError, "cannot accumulate on a scalar")
        return rule(b, a, axis, *args, **kwargs)
    return method


_UFUNC_METHODS = {"add.reduce": "sum", "multiply.reduce": "prod", "maximum.reduce": "max",
                  "minimum.reduce": "min", "logical_and.reduce": "all",
                  "logical_or.reduce": "any", "add.accumulate": "cumsum",
                  "multiply.accumulate": "cumprod"}
for _method, _name in _UFUNC_METHODS.items():
    register_translation_rule(f"numpy.{_method}",
                              _ufunc_method(RULES[_name], _method.endswith(".accumulate")))
