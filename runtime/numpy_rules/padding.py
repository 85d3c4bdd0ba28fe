"""``np.pad`` on a traced array, every mode, by NumPy's own algorithm.

NumPy builds the padded array and then fills the pad areas axis by axis, each fill reading
what the previous ones wrote (corners take the later axis' value; a reflection wider than
the array reflects the already-padded part again).  This rule follows the same steps with
functional reads and writes of static slices (`indexing.getitem` / `setitem`), so every
value, corner and dtype is NumPy's: ``constant`` (``constant_values``, cast as NumPy's
assignment casts), ``edge``, ``linear_ramp`` (``end_values``; computed as ``np.linspace``
computes it, in float64 for integer arrays, floored for integer results), ``maximum`` /
``minimum`` / ``mean`` / ``median`` (``stat_length``; integer results rounded half to
even), ``reflect`` / ``symmetric`` (``reflect_type`` ``'even'`` / ``'odd'``, NumPy's
repeated reflection for pads wider than the array), ``wrap``.

Documented deviations: ``mode='empty'`` leaves NumPy's pad area uninitialized; here it is
zeros.  A callable ``mode`` writes into each 1-d vector in place, which a traced array
cannot take: refused with a `PSCUnsupportedCallError` (a static array is padded by NumPy
itself).  Pad widths must be static.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import PSCTypeError, PSCUnsupportedCallError, PSCValueError
from ..ir import Value
from ..translation import has_traced, register_translation_rule, translate_numpy
from ._core import cast, lift
from .elementwise import UFUNC_RULES
from .indexing import getitem, setitem

_ALLOWED = {
    "empty": (), "edge": (), "wrap": (), "constant": ("constant_values",),
    "linear_ramp": ("end_values",), "maximum": ("stat_length",), "mean": ("stat_length",),
    "median": ("stat_length",), "minimum": ("stat_length",), "reflect": ("reflect_type",),
    "symmetric": ("reflect_type",),
}


class _Padded:
    """The padded array being filled: NumPy's ``padded`` and ``_view_roi``, functionally.
    ``area`` is the original array's slice on every axis; on axis ``axis``, NumPy works
    in the view whose later axes are restricted to it."""

    def __init__(self, b, x: Value, widths):
        self.b = b
        shape = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape, widths))
        self.value = b.broadcast_in_dim(b.constant(np.zeros((), x.dtype)), shape, ())
        self.area = tuple(slice(lo, lo + s) for s, (lo, _) in zip(x.shape, widths))
        if x.size:
            self.value = setitem(b, self.value, self.area, x)

    @property
    def shape(self):
        return self.value.shape

    def _index(self, axis: int, sl: slice):
        return (slice(None),) * axis + (sl,) + self.area[axis + 1:]

    def unrestricted(self) -> "_Padded":
        """The same array seen whole on every axis (NumPy's ``padded``, not a view)."""
        whole = object.__new__(_Padded)
        whole.b, whole.value = self.b, self.value
        whole.area = tuple(slice(None) for _ in self.area)
        return whole

    def get(self, axis: int, sl: slice) -> Value:
        return getitem(self.b, self.value, self._index(axis, sl))

    def set(self, axis: int, sl: slice, value) -> None:
        if self.value.dtype == np.bool_ and not has_traced(value):
            value = np.asarray(value) != 0   # NumPy's assignment: any nonzero is True
        index = self._index(axis, sl)
        if all(len(range(*s.indices(n))) for s, n in zip(index, self.shape)):
            self.value = setitem(self.b, self.value, index, value)

    def set_pad_area(self, axis: int, widths, values) -> None:
        self.set(axis, slice(None, widths[0]), values[0])
        self.set(axis, slice(self.shape[axis] - widths[1], None), values[1])

    def edges(self, axis: int, widths):
        left, right = widths[0], self.shape[axis] - widths[1]
        return self.get(axis, slice(left, left + 1)), self.get(axis, slice(right - 1, right))


def pad(b, array, pad_width, mode="constant", **kwargs):
    x = lift(b, array)
    widths = _pad_widths(b, pad_width, x.ndim)
    if callable(mode):
        raise b.error(PSCUnsupportedCallError, "np.pad with a callable mode writes into each "
                      "vector of the array in place, which a traced array cannot take",
                      "use one of NumPy's named modes, or pad with a named mode and "
                      "assign the pad areas with slices")
    if mode not in _ALLOWED:
        raise b.error(PSCValueError, f"mode '{mode}' is not supported")
    unsupported = set(kwargs) - set(_ALLOWED[mode])
    if unsupported:
        raise b.error(PSCValueError, f"unsupported keyword arguments for mode '{mode}': "
                      f"{unsupported}")
    padded = _Padded(b, x, widths)
    if mode == "constant":
        _constant(b, padded, widths, kwargs.get("constant_values", 0))
    elif mode == "empty":
        pass   # NumPy leaves the pad area uninitialized: zeros here
    elif x.size == 0:
        for axis, pair in enumerate(widths):
            if x.shape[axis] == 0 and any(pair):
                raise b.error(PSCValueError, f"can't extend empty axis {axis} using modes "
                              "other than 'constant' or 'empty'")
    elif mode == "edge":
        for axis, pair in enumerate(widths):
            padded.set_pad_area(axis, pair, padded.edges(axis, pair))
    elif mode == "linear_ramp":
        _linear_ramp(b, padded, widths, kwargs.get("end_values", 0))
    elif mode in ("maximum", "minimum", "mean", "median"):
        _statistic(b, padded, widths, mode, kwargs.get("stat_length"))
    elif mode in ("reflect", "symmetric"):
        _reflect(b, padded, x, widths, kwargs.get("reflect_type", "even"),
                 include_edge=mode == "symmetric")
    else:
        _wrap(padded, widths)
    return padded.value


def _pad_widths(b, pad_width, ndim: int):
    """NumPy's ``_as_pairs(pad_width, ndim, as_index=True)``, refusing what NumPy refuses."""
    if has_traced(pad_width):
        raise b.error(PSCValueError, "np.pad's pad_width must be known when the program is "
                      "built, but it is a traced value", "pass static pad widths")
    if isinstance(pad_width, dict):
        seq = [(0, 0)] * ndim
        for axis, width in pad_width.items():
            seq[axis] = (width, width) if isinstance(width, int) else tuple(width)
        pad_width = seq
    widths = np.asarray(pad_width)
    if widths.dtype.kind != "i":
        raise b.error(PSCTypeError, "`pad_width` must be of integral type.")
    return [tuple(int(w) for w in pair) for pair in _as_pairs(b, widths, ndim, True)]


def _as_pairs(b, x, ndim: int, as_index: bool = False):
    """NumPy's ``_as_pairs``: a scalar, a pair, or one pair per axis, as ``ndim`` pairs."""
    if x is None:
        return ((None, None),) * ndim
    x = np.array(x)
    if as_index:
        x = np.round(x).astype(np.intp, copy=False)
    if x.ndim < 3 and x.size == 1:
        x = x.ravel()
        pairs = ((x[0], x[0]),) * ndim
    elif x.ndim < 3 and x.size == 2 and x.shape != (2, 1):
        x = x.ravel()
        pairs = ((x[0], x[1]),) * ndim
    else:
        try:
            pairs = np.broadcast_to(x, (ndim, 2)).tolist()
        except ValueError as err:
            raise b.error(PSCValueError, str(err)) from None
    if as_index and x.size and x.min() < 0:
        raise b.error(PSCValueError, "index can't contain negative values")
    return pairs


def _value_pairs(b, values, ndim: int):
    """``constant_values`` / ``end_values`` as pairs: static ones by NumPy's rule; a traced
    value must be a scalar, used on both sides of every axis."""
    if isinstance(values, Value):
        if values.ndim:
            raise b.error(PSCValueError, "a traced constant_values/end_values must be a "
                          "scalar", "pass one traced scalar, or static values per axis")
        return ((values, values),) * ndim
    if has_traced(values):
        raise b.error(PSCValueError, "per-axis constant_values/end_values must be static",
                      "pass one traced scalar, or static values per axis")
    return _as_pairs(b, values, ndim)


def _constant(b, padded: _Padded, widths, values) -> None:
    for axis, (pair, value_pair) in enumerate(zip(widths, _value_pairs(b, values,
                                                                       len(widths)))):
        padded.set_pad_area(axis, pair, value_pair)


def _linear_ramp(b, padded: _Padded, widths, end_values) -> None:
    for axis, (pair, end_pair) in enumerate(zip(widths, _value_pairs(b, end_values,
                                                                     len(widths)))):
        edges = padded.edges(axis, pair)
        left = _ramp(b, end_pair[0], edges[0], pair[0], axis, padded.value.dtype)
        right = _ramp(b, end_pair[1], edges[1], pair[1], axis, padded.value.dtype)
        padded.set_pad_area(axis, pair, (left, b.reverse(right, [axis])))


def _ramp(b, start, edge: Value, num: int, axis: int, dtype) -> Value:
    """``np.linspace(start, edge.squeeze(axis), num, endpoint=False, dtype=dtype,
    axis=axis)``, with linspace's arithmetic: in the ends' (inexact) dtype, ``y * step``
    unless a step is zero (then ``y / num * delta``), floored for an integer ``dtype``."""
    # linspace's dtype: its operands' (a Python number weak), made inexact
    start_key = start.dtype if isinstance(start, Value) else (
        start if type(start) in (int, float, complex) else np.asarray(start).dtype)
    calc = np.result_type(edge.dtype, start_key)
    if not dtypes.is_inexact(calc):
        calc = np.dtype(np.float64)
    stop = cast(b, edge, calc)
    first = b.broadcast_in_dim(lift(b, start, calc), stop.shape, ())
    delta = b.sub(stop, first)
    shape = list(stop.shape)
    shape[axis] = num
    if not num:
        return b.broadcast_in_dim(b.constant(np.zeros((), dtype)), shape, ())
    wide = range(len(shape))   # the unit axis of the edge broadcasts along the ramp
    delta_b = b.broadcast_in_dim(delta, shape, wide)
    # NumPy's own fractions as constants: XLA would compute y / num as y * (1 / num)
    counts = np.arange(num, dtype=calc).reshape([-1 if d == axis else 1
                                                 for d in range(len(shape))])
    y = b.broadcast_in_dim(b.constant(counts), shape, wide)
    fractions = b.broadcast_in_dim(b.constant(counts / np.asarray(num, calc)), shape, wide)
    div = b.broadcast_in_dim(b.constant(np.asarray(num, calc)), delta.shape, ())
    small_step = b.div(delta, div)
    step = b.broadcast_in_dim(small_step, shape, wide)
    zero = b.broadcast_in_dim(b.constant(np.zeros((), calc)), delta.shape, ())
    any_zero = translate_numpy(b, np.any, b.eq(small_step, zero) if delta.size else
                               b.constant(False))
    y = b.select(b.broadcast_in_dim(any_zero, shape, ()), b.mul(fractions, delta_b),
                 b.mul(y, step))
    y = b.add(_rounded(b, y), b.broadcast_in_dim(first, shape, wide))
    if dtypes.is_integer(dtype):
        y = b.floor(y)
    return cast(b, y, dtype)


def _rounded(b, product: Value) -> Value:
    """``product`` itself, kept from fusing into the next addition: XLA's CPU backend
    contracts ``a * b + c`` into one fused multiply-add, which rounds once where NumPy
    rounds twice (and a floored integer ramp can then be one off).  The select keeps NaNs
    as they are, so it changes no value, but the product must be rounded to feed it."""
    nan = b.broadcast_in_dim(b.constant(np.asarray(np.nan, product.dtype)), product.shape, ())
    return b.select(b.ne(product, product), nan, product)


def _statistic(b, padded: _Padded, widths, mode: str, stat_length) -> None:
    lengths = _as_pairs(b, stat_length, len(widths), as_index=True)
    for axis, (pair, length_pair) in enumerate(zip(widths, lengths)):
        padded.set_pad_area(axis, pair, _stats(b, padded, axis, pair, length_pair, mode))


def _stats(b, padded: _Padded, axis: int, pair, length_pair, mode: str):
    """NumPy's ``_get_stats``: the statistic of the first / last ``stat_length`` values of
    the original area, rounded for an integer array."""
    left_index, right_index = pair[0], padded.shape[axis] - pair[1]
    max_length = right_index - left_index
    left_length, right_length = (max_length if n is None or max_length < n else int(n)
                                 for n in length_pair)
    if (left_length == 0 or right_length == 0) and mode in ("maximum", "minimum"):
        raise b.error(PSCValueError, "stat_length of 0 yields no value for padding")
    dtype = padded.value.dtype
    left = _stat(b, padded.get(axis, slice(left_index, left_index + left_length)), axis,
                 mode, dtype)
    if left_length == right_length == max_length:
        return left, left
    right = _stat(b, padded.get(axis, slice(right_index - right_length, right_index)), axis,
                  mode, dtype)
    return left, right


def _stat(b, chunk: Value, axis: int, mode: str, dtype) -> Value:
    if mode == "median":
        result = _median(b, chunk, axis)
    else:
        fn = {"maximum": np.max, "minimum": np.min, "mean": np.mean}[mode]
        result = translate_numpy(b, fn, chunk, axis=axis, keepdims=True)
    if dtypes.is_integer(dtype) and dtypes.is_inexact(result.dtype):
        result = translate_numpy(b, np.round, result)   # NumPy's _round_if_needed
    return result


def _median(b, chunk: Value, axis: int) -> Value:
    """``np.median(chunk, axis, keepdims=True)``: the middle of the sorted values (the mean
    of the two middle ones), NaN where a NaN is among them, NaN for no values."""
    n = chunk.shape[axis]
    calc = np.result_type(chunk.dtype, np.float16) if not dtypes.is_inexact(chunk.dtype) \
        else chunk.dtype
    calc = np.dtype(np.float64) if dtypes.is_integer(chunk.dtype) or \
        dtypes.is_bool(chunk.dtype) else calc
    shape = list(chunk.shape)
    shape[axis] = 1
    if n == 0:
        return b.broadcast_in_dim(b.constant(np.asarray(np.nan, calc)), shape, ())
    if dtypes.is_complex(chunk.dtype):   # NumPy orders complex values lexicographically
        real = dtypes.real_dtype(chunk.dtype)
        imag = UFUNC_RULES[np.multiply](b, chunk, -1j)   # real(-1j * z) is imag(z)
        keys = [b.convert(chunk, real), b.convert(imag, real)]
        *_, ordered = b.sort(keys + [chunk], axis, num_keys=2)
    else:
        (ordered,) = b.sort([chunk], axis)
    middle = [n // 2] if n % 2 else [n // 2 - 1, n // 2]
    parts = [getitem(b, ordered, (slice(None),) * axis + (slice(m, m + 1),)) for m in middle]
    if len(parts) == 1:
        result = cast(b, parts[0], calc)
    else:
        result = translate_numpy(b, np.mean, b.concatenate(parts, axis), axis=axis,
                                 keepdims=True)
        result = cast(b, result, calc)
    if dtypes.is_inexact(chunk.dtype):
        has_nan = translate_numpy(b, np.any, UFUNC_RULES[np.isnan](b, chunk), axis=axis,
                                  keepdims=True)
        nan = b.broadcast_in_dim(b.constant(np.asarray(np.nan, calc)), shape, ())
        result = b.select(has_nan, nan, result)
    return result


def _reflect(b, padded: _Padded, x: Value, widths, method: str, include_edge: bool) -> None:
    for axis, (left, right) in enumerate(widths):
        if x.shape[axis] == 1 and (left > 0 or right > 0):
            # NumPy's legacy behavior: a singleton axis is extended with its edge
            whole = padded.unrestricted()
            whole.set_pad_area(axis, (left, right), whole.edges(axis, (left, right)))
            padded.value = whole.value
            continue
        while left > 0 or right > 0:
            left, right = _reflect_both(b, padded, axis, (left, right), method,
                                        x.shape[axis], include_edge)


def _reflect_both(b, padded: _Padded, axis: int, pair, method: str, period: int,
                  include_edge: bool):
    """One step of NumPy's ``_set_reflect_both``: a chunk as long as the part already
    filled allows is reflected into each side; returns the widths left to fill."""
    left_pad, right_pad = pair
    old_length = padded.shape[axis] - right_pad - left_pad
    if include_edge:
        old_length = old_length // period * period
        edge_offset = 1
    else:
        old_length = (old_length - 1) // (period - 1) * (period - 1) + 1
        edge_offset = 0
        old_length -= 1
    if left_pad > 0:
        chunk_length = min(old_length, left_pad)
        stop = left_pad - edge_offset
        chunk = padded.get(axis, slice(stop + chunk_length, stop, -1))
        if method == "odd":
            chunk = _odd(b, padded.get(axis, slice(left_pad, left_pad + 1)), chunk)
        padded.set(axis, slice(left_pad - chunk_length, left_pad), chunk)
        left_pad -= chunk_length
    if right_pad > 0:
        chunk_length = min(old_length, right_pad)
        start = -right_pad + edge_offset - 2
        chunk = padded.get(axis, slice(start, start - chunk_length, -1))
        if method == "odd":
            chunk = _odd(b, padded.get(axis, slice(-right_pad - 1, -right_pad)), chunk)
        start = padded.shape[axis] - right_pad
        padded.set(axis, slice(start, start + chunk_length), chunk)
        right_pad -= chunk_length
    return left_pad, right_pad


def _odd(b, edge: Value, chunk: Value) -> Value:
    """``2 * edge - chunk``, as NumPy computes it (the Python 2 is weak)."""
    return UFUNC_RULES[np.subtract](b, UFUNC_RULES[np.multiply](b, 2, edge), chunk)


def _wrap(padded: _Padded, widths) -> None:
    for axis, (left, right) in enumerate(widths):
        period = padded.shape[axis] - right - left
        while left > 0 or right > 0:
            left, right = _wrap_both(padded, axis, (left, right), period)


def _wrap_both(padded: _Padded, axis: int, pair, original_period: int):
    """One step of NumPy's ``_set_wrap_both``."""
    left_pad, right_pad = pair
    period = padded.shape[axis] - right_pad - left_pad
    period = period // original_period * original_period
    new_left, new_right = 0, 0
    if left_pad > 0:
        end = left_pad + period
        chunk = padded.get(axis, slice(end - min(period, left_pad), end))
        if left_pad > period:
            area, new_left = slice(left_pad - period, left_pad), left_pad - period
        else:
            area = slice(None, left_pad)
        padded.set(axis, area, chunk)
    if right_pad > 0:
        start = -right_pad - period
        chunk = padded.get(axis, slice(start, start + min(period, right_pad)))
        if right_pad > period:
            area, new_right = slice(-right_pad, -right_pad + period), right_pad - period
        else:
            area = slice(-right_pad, None)
        padded.set(axis, area, chunk)
    return new_left, new_right


COVERAGE_NOTES = {"numpy.pad": "partial: mode='empty' pads with zeros (NumPy leaves them "
                               "uninitialized); a callable mode is refused; static pad widths"}

register_translation_rule("numpy.pad", pad)
