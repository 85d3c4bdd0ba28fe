"""Order statistics: ``median``, ``percentile``, ``quantile`` and their ``nan`` forms.

As NumPy 2 computes them (``numpy/lib/_function_base_impl.py``, ``_quantile``): the
reduced axes (``axis`` None, an int or a tuple, negative allowed) are sorted (NaNs last),
and each quantile ``q`` gives a *virtual index* by the ``method``'s formula (all thirteen
methods: the nine of Hyndman & Fan, 'lower', 'higher', 'midpoint', 'nearest').  The
discrete methods take the element at an integer index (result in the operand's dtype);
the others interpolate between the two neighbours with NumPy's ``_lerp``
(``a + (b−a)·t``, or ``b − (b−a)·(1−t)`` for ``t ≥ 0.5``), in the dtypes NumPy's own
arithmetic gives (the result dtype is asked of NumPy itself on a two-element array, so a
Python-float ``q`` keeps float32 data float32, an array ``q`` makes it float64).  The
result has ``q``'s shape in front of the kept axes; ``keepdims`` keeps the reduced ones as
1.  A slice holding a NaN gives NaN.  ``q`` may be static or traced, a scalar or an array
of any shape.

``median`` is NumPy's own: the mean of the middle one or two sorted elements (float64 for
integers), NaN for an empty slice (NumPy also warns "Mean of empty slice").

``nanmedian``/``nanquantile``/``nanpercentile`` sort NaNs last and use the number of
non-NaN elements of each slice (traced) as the sample size; an all-NaN or empty slice
gives NaN.  NumPy's RuntimeWarnings ("All-NaN slice encountered") cannot be raised from
a compiled program: the NaN is returned silently.

Not as NumPy: a *traced* ``q`` outside [0, 1] (NumPy: ValueError) is not checked (a static
one is); ``weights=`` is not supported (NumPy 2 allows it for 'inverted_cdf' only);
``out=``/``overwrite_input=`` are refused/ignored (``overwrite_input`` only permits NumPy to
reuse the input's memory).
"""
from __future__ import annotations

import functools

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..errors import PSCIndexError, PSCTypeError, PSCUnsupportedCallError, PSCValueError
from ..ir import Value
from ..translation import register_translation_rule, translate_numpy
from ._core import full_like_value, lift, normalize_axes

METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
           "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
           "normal_unbiased", "lower", "higher", "midpoint", "nearest")
_DISCRETE = ("inverted_cdf", "closest_observation", "lower", "higher", "nearest")
_ALPHA_BETA = {"interpolated_inverted_cdf": (0, 1), "hazen": (0.5, 0.5), "weibull": (0, 0),
               "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0)}

UNSUPPORTED = {}
COVERAGE_NOTES = {
    "numpy.quantile": "partial: weights= (inverted_cdf only in NumPy) is not supported; a "
                      "traced q is not range-checked",
    "numpy.percentile": "partial: weights= is not supported; a traced q is not range-checked",
    "numpy.nanquantile": "partial: weights= is not supported; all-NaN slices give NaN "
                         "without NumPy's RuntimeWarning",
    "numpy.nanpercentile": "partial: as numpy.nanquantile",
    "numpy.nanmedian": "all-NaN slices give NaN without NumPy's RuntimeWarning",
}


def _np(b: Builder, fn, *args, **kwargs):
    return translate_numpy(b, fn, *args, **kwargs)


def _weak(b: Builder, v: Value) -> Value:
    """A weak copy of ``v`` (a Python scalar's promotion)."""
    copy = b.broadcast_in_dim(v, v.shape, range(v.ndim))
    copy.weak = True
    return copy


@functools.lru_cache(maxsize=None)
def _numpy_quantile_dtype(dtype, q_key, method: str, nan: bool):
    """The dtype NumPy's (nan)quantile gives, or the message of the error it raises."""
    q = 0.5 if q_key == "weak" else np.full(q_key[0], 0.5, q_key[1])
    fn = np.nanquantile if nan else np.quantile
    try:
        return np.asarray(fn(np.ones((2,), dtype), q, method=method)).dtype
    except (TypeError, ValueError) as err:
        return str(err)


# --- the reduced axes as one leading axis ----------------------------------------------


def _gather_rows(b: Builder, table: Value, index: Value) -> Value:
    """``table[index[..., r], r]`` for ``table`` (N, R) and int64 ``index`` (..., R)."""
    n, r = table.shape
    flat = b.reshape(table, (n * r,))
    column = b.broadcast_in_dim(b.iota((r,), np.int64), index.shape, (index.ndim - 1,))
    linear = b.add(b.mul(index, full_like_value(b, r, index)), column)
    linear = b.reshape(linear, (int(np.prod(index.shape, dtype=np.int64)),))
    taken = b.gather(flat, b.reshape(linear, linear.shape + (1,)), offset_dims=(),
                     collapsed_slice_dims=(0,), start_index_map=(0,), index_vector_dim=1,
                     slice_sizes=(1,))
    return b.reshape(taken, index.shape)


class _Slices:
    """``x`` with its reduced axes sorted into one leading axis: ``sorted`` (N, R)."""

    def __init__(self, b: Builder, x: Value, axis, keepdims: bool):
        axes = normalize_axes(b, axis, x.ndim)
        kept = [d for d in range(x.ndim) if d not in axes]
        self.kept_shape = tuple(x.shape[d] for d in kept)
        self.out_shape = (tuple(1 if d in axes else s for d, s in enumerate(x.shape))
                          if keepdims else self.kept_shape)
        n = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
        r = int(np.prod(self.kept_shape, dtype=np.int64))
        moved = b.transpose(x, tuple(axes) + tuple(kept)) if x.ndim else x
        rows = b.reshape(moved, (n, r))
        self.n, self.r = n, r
        (self.sorted,) = b.sort([rows], 0) if n > 1 else (rows,)

    def finish(self, b: Builder, result: Value, q_shape) -> Value:
        return b.reshape(result, tuple(q_shape) + self.out_shape)

    def last_is_nan(self, b: Builder) -> Value:
        """(R,) bool: the slice holds a NaN (sorted last)."""
        last = b.reshape(b.slice(self.sorted, (self.n - 1, 0), (self.n, self.r)), (self.r,))
        return b.ne(last, last)

    def valid_count(self, b: Builder) -> Value:
        """(R,) int64: the number of non-NaN elements of each slice."""
        valid = b.convert(b.eq(self.sorted, self.sorted), np.int64)
        return b.reduce(valid, "sum", (0,))


# --- virtual indexes ---------------------------------------------------------------------


def _virtual_index(b: Builder, n, q: Value, method: str):
    """NumPy's ``get_virtual_index`` for ``method``: float (continuous) or int64."""
    def lin():
        return _np(b, np.multiply, _np(b, np.subtract, n, 1), q)
    if method == "linear":
        return lin()
    if method in _ALPHA_BETA:
        alpha, beta = _ALPHA_BETA[method]
        correction = _np(b, np.add, alpha, _np(b, np.multiply, q, 1 - alpha - beta))
        return _np(b, np.subtract, _np(b, np.add, _np(b, np.multiply, n, q), correction), 1)
    if method == "lower":
        return lift(b, _np(b, np.floor, lin()), np.int64)
    if method == "higher":
        return lift(b, _np(b, np.ceil, lin()), np.int64)
    if method == "nearest":
        return lift(b, _np(b, np.round, lin()), np.int64)
    if method == "midpoint":
        return _np(b, np.multiply, 0.5, _np(b, np.add, _np(b, np.floor, lin()),
                                            _np(b, np.ceil, lin())))
    if method == "averaged_inverted_cdf":
        return _np(b, np.subtract, _np(b, np.multiply, n, q), 1)
    # inverted_cdf / closest_observation: to the previous or next integer
    index = _np(b, np.subtract, _np(b, np.multiply, n, q), 1)
    if method == "closest_observation":
        index = _np(b, np.subtract, index, 0.5)
    previous = _np(b, np.floor, index)
    on_integer = _np(b, np.equal, _np(b, np.subtract, index, previous), 0)
    if method == "closest_observation":
        odd = _np(b, np.equal, _np(b, np.remainder, previous, 2), 1)
        on_integer = _np(b, np.logical_and, on_integer, odd)
    chosen = _np(b, np.where, on_integer, previous, _np(b, np.add, previous, 1))
    return _np(b, np.maximum, lift(b, chosen, np.int64), 0)


def _gamma(b: Builder, virtual: Value, previous: Value, method: str) -> Value:
    gamma = _np(b, np.subtract, virtual, previous)
    if method == "averaged_inverted_cdf":
        gamma = _np(b, np.where, _np(b, np.equal, gamma, 0), 0.5, 1.0)
    elif method == "midpoint":
        whole = _np(b, np.equal, _np(b, np.remainder, virtual, 1), 0)
        gamma = _np(b, np.where, whole, 0.0, 0.5)
    return lift(b, gamma, virtual.dtype)


def _clamp(b: Builder, index: Value, top: int) -> Value:
    """Indexes into the sorted axis kept in bounds (empty and all-NaN slices)."""
    return _np(b, np.clip, index, 0, max(top, 0))


def _lerp(b: Builder, a: Value, c: Value, t) -> Value:
    """NumPy's ``_lerp(a, b, t)``."""
    diff = _np(b, np.subtract, c, a)
    low = _np(b, np.add, a, _np(b, np.multiply, diff, t))
    high = _np(b, np.subtract, c, _np(b, np.multiply, diff, _np(b, np.subtract, 1, t)))
    return _np(b, np.where, _np(b, np.greater_equal, t, 0.5), high, low)


# --- quantile ----------------------------------------------------------------------------


def _check_q(b: Builder, q, scale: float, name: str) -> None:
    if isinstance(q, Value):
        return
    values = np.asarray(q)
    if values.ndim and values.dtype == object or not np.issubdtype(values.dtype, np.number):
        raise b.error(PSCTypeError, f"np.{name}: q must be numbers, got {q!r}")
    if np.any(values < 0) or np.any(values > scale):
        what = "Quantiles must be in the range [0, 1]" if scale == 1 else \
            "Percentiles must be in the range [0, 100]"
        raise b.error(PSCValueError, what)


def _quantile(b: Builder, name: str, a, q, axis, method: str, keepdims: bool, nan: bool,
              scale: float, kwargs):
    _reject(b, name, kwargs)
    if not isinstance(method, str) or method not in METHODS:
        raise b.error(PSCValueError, f"{method!r} is not a valid method. Use one of: "
                      f"{', '.join(METHODS)}")
    _check_q(b, q, scale, name)
    weak_q = q.weak if isinstance(q, Value) else type(q) in (int, float)
    qv = lift(b, q) if isinstance(q, Value) else lift(b, np.asarray(q))
    if qv.weak:
        qv = _np(b, np.positive, qv)   # NumPy works on asanyarray(q): strong
    if scale != 1:
        qv = _np(b, np.true_divide, qv, scale)
    x = lift(b, a)
    key = "weak" if weak_q else (qv.shape, qv.dtype)
    dtype = _numpy_quantile_dtype(x.dtype, key, method, nan)
    if isinstance(dtype, str):
        raise b.error(PSCTypeError, f"np.{name} of {x.dtype} data: {dtype}")
    slices = _Slices(b, x, axis, keepdims)
    if slices.n == 0 and not nan:
        raise b.error(PSCIndexError, "index -1 is out of bounds for axis 0 with size 0")
    if slices.r == 0 or slices.n == 0:
        return b.constant(np.full(qv.shape + slices.out_shape, np.nan if slices.r else 0,
                                  dtype))
    nan_data = nan and dtypes.is_inexact(x.dtype)
    result = _interpolate(b, slices, qv, method, dtype, weak_q, nan_data)
    if dtypes.is_inexact(x.dtype):
        bad = (b.eq(slices.valid_count(b), full_like_value(b, 0, slices.valid_count(b)))
               if nan_data else slices.last_is_nan(b))
        bad = b.broadcast_in_dim(bad, result.shape, (result.ndim - 1,))
        result = b.select(bad, full_like_value(b, np.nan, result), result)
    return slices.finish(b, result, qv.shape)


def _interpolate(b: Builder, slices: _Slices, qv: Value, method: str, dtype, weak_q: bool,
                 nan_data: bool) -> Value:
    """(q..., R) values of ``dtype``."""
    q = b.reshape(qv, qv.shape + (1,))
    if nan_data:
        n = _weak(b, slices.valid_count(b))
    else:
        n = slices.n
    if method == "linear" and dtypes.is_integer(qv.dtype):
        method = "lower"   # NumPy: an integer virtual index takes the element
    virtual = _virtual_index(b, n, q, method)
    top = slices.n - 1
    shape = tuple(qv.shape) + (slices.r,)
    if method in _DISCRETE:
        index = b.broadcast_in_dim(lift(b, virtual, np.int64), shape,
                                   range(len(shape) - virtual.ndim, len(shape)))
        index = _clamp(b, _np(b, np.minimum, index, _np(b, np.subtract, n, 1)), top)
        return lift(b, _gather_rows(b, slices.sorted, index), dtype)
    virtual = b.broadcast_in_dim(virtual, shape, range(len(shape) - virtual.ndim, len(shape)))
    last = _np(b, np.subtract, n, 1)
    previous = _np(b, np.floor, virtual)
    above = _np(b, np.logical_or, _np(b, np.greater_equal, virtual, last),
                _np(b, np.isnan, virtual))
    below = _np(b, np.less, virtual, 0)
    minus_one = full_like_value(b, -1.0, previous)
    previous_g = _np(b, np.where, above, minus_one, _np(b, np.where, below, 0.0, previous))
    gamma = _gamma(b, virtual, lift(b, previous_g, np.int64), method)
    lo = _np(b, np.where, above, last, _np(b, np.where, below, 0, previous))
    hi = _np(b, np.where, above, last, _np(b, np.where, below, 0,
                                           _np(b, np.add, previous, 1)))
    lo = _clamp(b, lift(b, lo, np.int64), top)
    hi = _clamp(b, lift(b, hi, np.int64), top)
    left = _gather_rows(b, slices.sorted, b.broadcast_in_dim(lo, shape, range(len(shape))))
    right = _gather_rows(b, slices.sorted, b.broadcast_in_dim(hi, shape, range(len(shape))))
    if weak_q:
        gamma = _weak(b, gamma)
    return lift(b, _lerp(b, left, right, gamma), dtype)


def _reject(b: Builder, name: str, kwargs) -> None:
    if kwargs.pop("out", None) is not None:
        raise b.error(PSCTypeError, f"np.{name}(..., out=...) writes into an array, which "
                      "PSC functions cannot do", "use the returned value")
    kwargs.pop("overwrite_input", None)
    if kwargs.pop("weights", None) is not None:
        raise b.error(PSCUnsupportedCallError, f"np.{name}(..., weights=...) is not "
                      "supported", "sort and accumulate the weights explicitly")
    if kwargs.pop("interpolation", None) is not None:
        raise b.error(PSCTypeError, f"np.{name}: 'interpolation' was removed in NumPy 2; "
                      "use method=")
    if kwargs:
        raise b.error(PSCTypeError, f"np.{name}: unsupported keyword arguments "
                      f"{sorted(kwargs)}")


def _quantile_rule(name: str, nan: bool, scale: float):
    def rule(b, a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, **kwargs):
        kwargs["out"] = out
        return _quantile(b, name, a, q, axis, method, keepdims, nan, scale, kwargs)
    return rule


# --- median ------------------------------------------------------------------------------


def median(b: Builder, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _reject(b, "median", {"out": out})
    x = lift(b, a)
    slices = _Slices(b, x, axis, keepdims)
    half = slices.n // 2
    start = half if slices.n % 2 else max(half - 1, 0)
    middle = b.slice(slices.sorted, (start, 0), (min(half + 1, slices.n), slices.r))
    result = _np(b, np.mean, middle, axis=0)
    if dtypes.is_inexact(x.dtype) and slices.n:
        result = b.select(slices.last_is_nan(b), full_like_value(b, np.nan, result), result)
    return slices.finish(b, result, ())


def nanmedian(b: Builder, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    x = lift(b, a)
    if not dtypes.is_inexact(x.dtype):
        return median(b, x, axis, out, overwrite_input, keepdims)
    _reject(b, "nanmedian", {"out": out})
    slices = _Slices(b, x, axis, keepdims)
    dtype = _np(b, np.mean, b.constant(np.zeros((1,), x.dtype))).dtype
    if slices.n == 0 or slices.r == 0:
        return b.constant(np.full(slices.out_shape, np.nan, dtype))
    count = slices.valid_count(b)
    one = full_like_value(b, 1, count)
    lo = _clamp(b, _np(b, np.floor_divide, b.sub(count, one), 2), slices.n - 1)
    hi = _clamp(b, _np(b, np.floor_divide, count, 2), slices.n - 1)
    low = _gather_rows(b, slices.sorted, b.reshape(lo, (1, slices.r)))
    high = _gather_rows(b, slices.sorted, b.reshape(hi, (1, slices.r)))
    pair = _np(b, np.mean, b.concatenate([low, high], 0), axis=0)
    single = lift(b, b.reshape(low, (slices.r,)), dtype)
    result = b.select(b.eq(lo, hi), single, pair)
    empty = b.eq(count, full_like_value(b, 0, count))
    result = b.select(empty, full_like_value(b, np.nan, result), result)
    return slices.finish(b, result, ())


for _name, _nan, _scale in (("quantile", False, 1), ("percentile", False, 100),
                            ("nanquantile", True, 1), ("nanpercentile", True, 100)):
    register_translation_rule(f"numpy.{_name}", _quantile_rule(_name, _nan, _scale))
register_translation_rule("numpy.median", median)
register_translation_rule("numpy.nanmedian", nanmedian)
