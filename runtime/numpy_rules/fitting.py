"""``np.polyfit``, ``np.histogram2d`` and ``np.histogramdd`` on traced data.

polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False) runs NumPy 2's algorithm
(``numpy/lib/_polynomial_impl.py``) step by step on traced values: ``x + 0.0``,
``vander(x, deg + 1)``, rows scaled by ``w``, columns scaled to unit norm,
``np.linalg.lstsq`` (`runtime.numpy_rules.svd`), the coefficients divided back by the
scale; the in-place products keep ``lhs``'s and ``rhs``'s dtypes as NumPy's ``*=``.  ``deg``,
``full`` and ``cov`` are static; ``full=True`` gives (coef, residuals, rank,
singular_values, rcond), the residuals as the lstsq rule documents them (empty when
``len(x) <= deg + 1``; NaN, not empty, for a rank-deficient fit); ``cov=True`` scales
``inv(lhsᵀ lhs) / outer(scale, scale)`` by ``residuals / (len(x) - order)`` (ValueError
when ``len(x) <= order``, as NumPy), ``cov='unscaled'`` does not.  Not as NumPy: its
``RankWarning`` depends on the rank found at run time and is never issued.

histogramdd(sample, bins=10, range=None, density=None, weights=None) and
histogram2d(x, y, ...) (NumPy's wrapper around it) follow ``numpy/lib/_histograms_impl.py``:
``bins`` per dimension a static int or a 1-d array of edges (static, checked to increase;
or traced, not checked), ``range`` static (per dimension a pair or None).  Integer bins over a static range have NumPy's own
``linspace`` edges; without a range the edges come from the traced min and max as the
``np.histogram`` rule computes them (`runtime.numpy_rules.statistics._traced_edges`: the
same ``linspace`` arithmetic).  Each coordinate's bin is ``searchsorted(edges, x,
side='right')`` (a count of the edges ``<= x``, memory elements × edges), the last edge
moved into the last bin; outside the edges (and NaN) is dropped.  ``hist`` is float64
(counts, or the weights' sums accumulated in float64 by a scatter-add: float additions in
another order than ``np.bincount``'s); ``density`` divides by each dimension's widths and
the total.  Not as NumPy: traced data whose min or max is not finite gives NaN edges (NumPy:
ValueError); bool and complex samples are refused.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..errors import PSCTypeError, PSCUnsupportedCallError, PSCValueError
from ..ir import Value
from ..translation import has_traced, register_translation_rule, translate_numpy
from ._core import cast, full_like_value, lift
from .statistics import _bin_counts, _traced_edges

_range = range   # the builtin: histogramdd's ``range`` argument hides it

COVERAGE_NOTES = {
    "numpy.polyfit": "partial: RankWarning is never issued (the rank is only known at run "
                     "time); residuals of a rank-deficient fit are NaN, not empty (lstsq)",
    "numpy.histogramdd": "partial: bins and range static; bool/complex samples refused; "
                         "non-finite data without a range gives NaN edges (NumPy raises)",
    "numpy.histogram2d": "partial: as numpy.histogramdd",
}


def _np(b: Builder, fn, *args, **kwargs):
    return translate_numpy(b, fn, *args, **kwargs)


# --- polyfit ---------------------------------------------------------------------------------


def _inplace(b: Builder, ufunc, target: Value, other) -> Value:
    """``target <ufunc>= other``: NumPy's result cast back to target's dtype (same_kind)."""
    result = _np(b, ufunc, target, other)
    if result.dtype != target.dtype:
        if not np.can_cast(result.dtype, target.dtype, "same_kind"):
            raise b.error(PSCTypeError, f"Cannot cast ufunc '{ufunc.__name__}' output from "
                          f"dtype('{result.dtype}') to dtype('{target.dtype}') with casting "
                          "rule 'same_kind'")
        result = cast(b, result, target.dtype)
    return result


def _column(b: Builder, v: Value) -> Value:
    return b.reshape(v, v.shape + (1,))   # v[:, np.newaxis]


def _vander(b: Builder, x: Value, order: int) -> Value:
    """``np.vander(x, order)``: the powers by successive products, as NumPy's
    ``multiply.accumulate`` rounds them (and differentiable, which that scan is not), in
    NumPy's ``promote_types(x.dtype, int)`` (float64 for float32 ``x``)."""
    x = cast(b, x, np.promote_types(x.dtype, int))
    column = b.broadcast_in_dim(lift(b, 1, x.dtype), x.shape, ())
    columns = [column]
    for _ in _range(order - 1):
        column = b.mul(column, x)
        columns.append(column)
    return b.concatenate([_column(b, c) for c in reversed(columns)], 1)


def _static(b: Builder, value, what: str):
    if has_traced(value):
        raise b.error(PSCTypeError, f"np.polyfit: {what} must be known when the program is "
                      "built", "pass it as a static argument")
    return value


def _checked_inputs(b: Builder, x, y, deg):
    deg = _static(b, deg, "deg")
    order = int(deg) + 1
    x, y = _np(b, np.add, lift(b, x), 0.0), _np(b, np.add, lift(b, y), 0.0)
    if deg < 0:
        raise b.error(PSCValueError, "expected deg >= 0")
    if x.ndim != 1:
        raise b.error(PSCTypeError, "expected 1D vector for x")
    if x.size == 0:
        raise b.error(PSCTypeError, "expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise b.error(PSCTypeError, "expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise b.error(PSCTypeError, "expected x and y to have same length")
    return x, y, order


def _weighted(b: Builder, lhs: Value, rhs: Value, w) -> tuple[Value, Value]:
    w = _np(b, np.add, lift(b, w), 0.0)
    if w.ndim != 1:
        raise b.error(PSCTypeError, "expected a 1-d array for weights")
    if w.shape[0] != rhs.shape[0]:
        raise b.error(PSCTypeError, "expected w and y to have the same length")
    lhs = _inplace(b, np.multiply, lhs, _column(b, w))
    rhs = _inplace(b, np.multiply, rhs, _column(b, w) if rhs.ndim == 2 else w)
    return lhs, rhs


def polyfit(b: Builder, x, y, deg, rcond=None, full=False, w=None, cov=False):
    full, cov = _static(b, full, "full"), _static(b, cov, "cov")
    x, y, order = _checked_inputs(b, x, y, deg)
    if rcond is None:
        rcond = x.shape[0] * np.finfo(x.dtype).eps
    lhs, rhs = _vander(b, x, order), y
    if w is not None:
        lhs, rhs = _weighted(b, lhs, rhs, w)
    scale = _np(b, np.sqrt, _np(b, np.sum, _np(b, np.multiply, lhs, lhs), axis=0))
    lhs = _inplace(b, np.true_divide, lhs, scale)
    c, resids, rank, s = _np(b, np.linalg.lstsq, lhs, rhs, rcond)
    c = b.transpose(_np(b, np.true_divide, b.transpose(c, tuple(range(c.ndim))[::-1]),
                        scale), tuple(range(c.ndim))[::-1])
    if full:
        return c, resids, rank, s, rcond
    if not cov:
        return c
    base = _np(b, np.linalg.inv, _np(b, np.dot, b.transpose(lhs, (1, 0)), lhs))
    base = _inplace(b, np.true_divide, base, _np(b, np.outer, scale, scale))
    if isinstance(cov, str) and cov == "unscaled":
        fac = 1
    else:
        if x.shape[0] <= order:
            raise b.error(PSCValueError, "the number of data points must exceed order to "
                          "scale the covariance matrix")
        fac = _np(b, np.true_divide, resids, x.shape[0] - order)
    if y.ndim == 1:
        return c, _np(b, np.multiply, base, fac)
    return c, _np(b, np.multiply, b.reshape(base, base.shape + (1,)), fac)


# --- histogramdd, histogram2d ------------------------------------------------------------


def _sample(b: Builder, sample) -> Value:
    """NumPy's (N, D) sample: a 2-d array as it is, anything else ``atleast_2d(.).T``."""
    v = lift(b, sample)
    if v.ndim != 2 or not isinstance(sample, (Value, np.ndarray)):   # no .shape to unpack
        if v.ndim < 2:
            v = b.reshape(v, (1,) * (2 - v.ndim) + v.shape)
        v = b.transpose(v, tuple(range(v.ndim))[::-1])
        if v.ndim != 2:
            raise b.error(PSCValueError, f"histogramdd: a sample of shape {v.shape} is not "
                          "(N, D)", "give an (N, D) array or a sequence of D 1-d arrays")
    if dtypes.is_bool(v.dtype) or dtypes.is_complex(v.dtype):
        raise b.error(PSCTypeError, f"np.histogramdd of a {v.dtype} sample is not supported")
    return v


def _per_dimension(b: Builder, bins, range_, d: int):
    if isinstance(bins, Value) and bins.ndim == 0:
        raise b.error(PSCTypeError, "np.histogramdd: the number of bins must be known when "
                      "the program is built", "pass it as a static argument")
    try:
        m = bins.shape[0] if isinstance(bins, Value) else len(bins)
    except TypeError:
        bins = d * [bins]
    else:
        if m != d:
            raise b.error(PSCValueError, "The dimension of bins must be equal to the "
                          "dimension of the sample x.")
    if range_ is None:
        range_ = (None,) * d
    elif has_traced(range_):
        raise b.error(PSCUnsupportedCallError, "np.histogramdd(..., range=...) must be known "
                      "when the program is built", "pass it as a static argument")
    elif len(range_) != d:
        raise b.error(PSCValueError, "range argument must have one entry per dimension")
    return bins, range_


def _static_outer_edges(b: Builder, range_):
    try:
        first, last = range_
    except (TypeError, ValueError):
        raise b.error(PSCValueError, f"histogramdd range must be a pair (min, max), got "
                      f"{range_!r}") from None
    if first > last:
        raise b.error(PSCValueError, "max must be larger than min in range parameter.")
    if not (np.isfinite(first) and np.isfinite(last)):
        raise b.error(PSCValueError, f"supplied range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    return first, last


def _edges(b: Builder, column: Value, bins_i, range_i, i: int) -> Value:
    if isinstance(bins_i, Value) and bins_i.ndim == 0:
        raise b.error(PSCTypeError, f"np.histogramdd: bins[{i}] must be known when the "
                      "program is built")
    if np.ndim(bins_i) == 0 and not isinstance(bins_i, Value):
        if bins_i < 1:
            raise b.error(PSCValueError, f"`bins[{i}]` must be positive, when an integer")
        if range_i is None and column.shape[0] == 0:
            range_i = (0, 1)
        outer = None if range_i is None else _static_outer_edges(b, range_i)
        try:
            n = operator.index(bins_i)
        except TypeError:
            raise b.error(PSCTypeError, f"`bins[{i}]` must be an integer, when a "
                          "scalar") from None
        if outer is None:
            return _traced_edges(b, column, n)[3]
        return b.constant(np.linspace(outer[0], outer[1], n + 1))
    if (bins_i.ndim if isinstance(bins_i, Value) else np.ndim(bins_i)) != 1:
        raise b.error(PSCValueError, f"`bins[{i}]` must be a scalar or 1d array")
    if not has_traced(bins_i):
        edges = np.asarray(bins_i)
        if np.any(edges[:-1] > edges[1:]):
            raise b.error(PSCValueError, f"`bins[{i}]` must be monotonically increasing, "
                          "when an array")
    return lift(b, bins_i)


def _bin_of(b: Builder, column: Value, edges: Value) -> tuple[Value, Value]:
    """(``searchsorted(edges, column, 'right') - 1`` with the last edge in the last bin,
    whether the element is inside the edges)."""
    common = np.result_type(column.dtype, edges.dtype)
    xc, ec = b.convert(column, common), b.convert(edges, common)
    n = edges.shape[0]
    shape = (column.shape[0], n)
    at_or_above = b.ge(b.broadcast_in_dim(xc, shape, (0,)), b.broadcast_in_dim(ec, shape, (1,)))
    count = b.reduce(b.convert(at_or_above, np.int64), "sum", (1,))
    last = b.broadcast_in_dim(b.slice(ec, (n - 1,), (n,)), column.shape, (0,))
    count = b.select(b.eq(xc, last), b.sub(count, full_like_value(b, 1, count)), count)
    inside = b.and_(b.ge(count, full_like_value(b, 1, count)),
                    b.le(count, full_like_value(b, n - 1, count)))
    return b.sub(count, full_like_value(b, 1, count)), inside


def histogramdd(b: Builder, sample, bins=10, range=None, density=None,  # noqa: A002
                weights=None):
    """np.histogramdd: (hist, [edges per dimension])."""
    if has_traced(density):
        raise b.error(PSCTypeError, "np.histogramdd density must be a static bool")
    x = _sample(b, sample)
    n, d = x.shape
    bins, range_ = _per_dimension(b, bins, range, d)
    columns = [b.reshape(b.slice(x, (0, i), (n, i + 1)), (n,)) for i in _range(d)]
    edges = [_edges(b, columns[i], bins[i], range_[i], i) for i in _range(d)]
    sizes = [e.shape[0] - 1 for e in edges]
    flat, keep = full_like_value(b, 0, columns[0], np.int64) if n else None, None
    total = int(np.prod(sizes, dtype=np.int64))
    if n:
        for column, e, size in zip(columns, edges, sizes):
            index, inside = _bin_of(b, column, e)
            flat = b.add(b.mul(flat, full_like_value(b, size, flat)), index)
            keep = inside if keep is None else b.and_(keep, inside)
        flat = b.select(keep, flat, full_like_value(b, total, flat))
    w = None if weights is None else _weights(b, weights, n)
    if n:
        hist = _bin_counts(b, flat, w, total, np.dtype(np.float64))
    else:
        hist = b.constant(np.zeros(total))
    hist = b.reshape(hist, tuple(sizes))
    return (_density(b, hist, edges) if density else hist), edges


def _weights(b: Builder, weights, n: int) -> Value:
    w = lift(b, weights)
    if w.ndim != 1 or w.shape[0] != n:
        raise b.error(PSCValueError, "The weights and list don't have the same length.",
                      f"weights of shape {w.shape} for {n} points")
    if dtypes.is_complex(w.dtype):
        raise b.error(PSCTypeError, "Cannot cast array data from dtype('complex128') to "
                      "dtype('float64') according to the rule 'safe'")
    return w


def _density(b: Builder, hist: Value, edges) -> Value:
    total = b.reduce(hist, "sum", tuple(_range(hist.ndim)))
    for i, e in enumerate(edges):
        size = e.shape[0] - 1
        widths = _np(b, np.subtract, b.slice(e, (1,), (size + 1,)), b.slice(e, (0,), (size,)))
        shape = [1] * hist.ndim
        shape[i] = size
        hist = _np(b, np.true_divide, hist, b.reshape(widths, tuple(shape)))
    return b.div(hist, b.broadcast_in_dim(total, hist.shape, ()))


def histogram2d(b: Builder, x, y, bins=10, range=None, density=None,  # noqa: A002
                weights=None):
    """np.histogram2d: (hist, xedges, yedges), through histogramdd as NumPy."""
    xv, yv = lift(b, x), lift(b, y)
    if xv.ndim == 0 or yv.ndim == 0:
        raise b.error(PSCTypeError, "histogram2d: x and y must be sequences (len() of a 0-d "
                      "array)")
    if xv.shape[0] != yv.shape[0]:
        raise b.error(PSCValueError, "x and y must have the same length.")
    if xv.ndim != 1 or yv.ndim != 1:
        raise b.error(PSCValueError, "histogram2d: x and y must be 1-d",
                      f"x is {xv.shape}, y is {yv.shape}")
    if isinstance(bins, Value):
        count = bins.shape[0] if bins.ndim else 1
    else:
        try:
            count = len(bins)
        except TypeError:
            count = 1
    if count not in (1, 2):
        bins = [bins, bins]
    sample = b.transpose(_np(b, np.stack, [xv, yv]), (1, 0))   # atleast_2d([x, y]).T
    hist, edges = histogramdd(b, sample, bins, range, density, weights)
    return hist, edges[0], edges[1]


for _name, _rule in [("numpy.polyfit", polyfit), ("numpy.histogramdd", histogramdd),
                     ("numpy.histogram2d", histogram2d)]:
    register_translation_rule(_name, _rule)
