"""``np.histogram`` and ``np.cov``.

histogram(a, bins=10, range=None, density=None, weights=None) -> (hist, bin_edges), as
NumPy 2 computes them:

* ``bins`` an int (static): equal bins over ``range``, or over (a.min(), a.max()) computed
  in the program when ``range`` is None (a range of width 0 widened by 0.5 on each side).
  The edges are ``np.linspace``'s (start + i·step in the edges' dtype, the last edge
  exactly the stop; computed by NumPy itself when the range is static).  Each element's bin
  is NumPy's fast path: ``int((x − first) / (last − first) · bins)``, the last edge put in
  the last bin, then corrected by one against the edges (so ``x`` on an edge goes right,
  and the last bin is closed on the right); elements outside the range are dropped.
  Dtypes as NumPy: edges float (the data's float dtype, float64 for integers), the
  arithmetic in the dtypes NumPy's scalars give it.
* ``bins`` a 1-d sequence of edges (static or traced): bin ``i`` holds
  ``edges[i] <= x < edges[i+1]`` (the last ``<=``); this compares each element with each
  edge (memory: elements × edges).
* ``hist``: int64 counts without weights; with weights their sums, accumulated in float64
  (complex128) as ``np.bincount`` does and cast to the weights' dtype; ``density=True``
  divides by the bin widths and the total (float64).  The sums are a scatter-add: the
  order of float additions differs from NumPy's (last-bit differences).

Not as NumPy: string ``bins`` ('auto', ...) are refused; a traced array whose min or max
is not finite (NumPy: ValueError "autodetected range ... is not finite") gives bins of NaN
edges and an unspecified histogram; traced edges are not checked to increase.

cov(m, y=None, rowvar=True, bias=False, ddof=None, dtype=None): float64 by default (NumPy's
``result_type(m, float64)``), rows are variables unless ``rowvar=False``, normalized by
``N − ddof`` (``ddof`` defaults to 1, or 0 with ``bias``); 0 or fewer degrees of freedom
divide by 0 (inf/NaN, NumPy warns).  The result is squeezed (one variable: 0-d).  Not
supported: ``fweights``/``aweights``, complex input (the builder has no conj).
"""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..errors import PSCShapeError, PSCTypeError, PSCUnsupportedCallError, PSCValueError
from ..ir import Value
from ..translation import has_traced, register_translation_rule
from ._core import cast, full_like_value, lift

# --- histogram ------------------------------------------------------------------------------


def _scalar(b: Builder, value, dtype) -> Value:
    return b.constant(np.asarray(value, dtype))


def _splat(b: Builder, s: Value, like: Value) -> Value:
    """The 0-d ``s`` broadcast to ``like``'s shape (its own dtype)."""
    return b.broadcast_in_dim(s, like.shape, ())


def _take(b: Builder, table: Value, indices: Value) -> Value:
    """``table[indices]`` for a 1-d table and 1-d indices (clamped)."""
    return b.gather(table, b.reshape(indices, indices.shape + (1,)), offset_dims=(),
                    collapsed_slice_dims=(0,), start_index_map=(0,), index_vector_dim=1,
                    slice_sizes=(1,))


def _bin_counts(b: Builder, index: Value, weights: Value | None, nbins: int,
                ntype: np.dtype) -> Value:
    """``np.bincount(index, weights, minlength=nbins).astype(ntype)``; an index of
    ``nbins`` (a dropped element) is out of bounds, so scatter skips it."""
    if weights is None:
        acc = np.dtype(np.int64)
        updates = full_like_value(b, 1, index, acc)
    else:
        acc = np.dtype(np.complex128 if dtypes.is_complex(weights.dtype) else np.float64)
        updates = lift(b, weights, acc)
    zeros = b.broadcast_in_dim(_scalar(b, 0, acc), (nbins,), ())
    counts = b.scatter(zeros, b.reshape(index, index.shape + (1,)), updates,
                       update_window_dims=(), inserted_window_dims=(0,),
                       scatter_dims_to_operand_dims=(0,), index_vector_dim=1, mode="add")
    return cast(b, counts, ntype)


def _static_edges(b: Builder, a_dtype, nbins: int, range_):
    """NumPy's outer edges, edges, and arithmetic dtype for a static ``range``."""
    try:
        first, last = range_
    except (TypeError, ValueError):
        raise b.error(PSCValueError, f"histogram range must be a pair (min, max), got "
                      f"{range_!r}") from None
    if first > last:
        raise b.error(PSCValueError, "max must be larger than min in range parameter.")
    if not (np.isfinite(first) and np.isfinite(last)):
        raise b.error(PSCValueError, f"supplied range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    like = np.zeros(1, a_dtype)
    bin_type = np.result_type(first, last, like)
    if np.issubdtype(bin_type, np.integer):
        bin_type = np.result_type(bin_type, float)
    edges = np.linspace(first, last, nbins + 1, endpoint=True, dtype=bin_type)
    if np.any(edges[:-1] >= edges[1:]):
        raise b.error(PSCValueError, f"Too many bins for data range. Cannot create {nbins} "
                      "finite-sized bins.")
    # the dtypes NumPy's fast path computes in, from the same scalars
    denom = np.subtract(last, first, dtype=np.result_type(last, first))
    arith = (((like.astype(bin_type) - first) / denom) * nbins).dtype
    compare = np.result_type(like, first)
    return (_scalar(b, first, arith), _scalar(b, last, arith), _scalar(b, denom, arith),
            b.constant(edges), np.dtype(bin_type), np.dtype(arith), np.dtype(compare),
            (_scalar(b, first, compare), _scalar(b, last, compare)))


def _traced_edges(b: Builder, x: Value, nbins: int):
    """Edges from the traced min and max of ``x``, computed as ``np.linspace`` does."""
    bin_type = x.dtype if dtypes.is_inexact(x.dtype) else np.dtype(np.float64)
    first = b.convert(b.reduce(x, "min", (0,)), bin_type)
    last = b.convert(b.reduce(x, "max", (0,)), bin_type)
    same = b.eq(first, last)
    half = _scalar(b, 0.5, bin_type)
    first = b.select(same, b.sub(first, half), first)
    last = b.select(same, b.add(last, half), last)
    denom = b.sub(last, first)
    # XLA turns a division by a constant into a product with its reciprocal (not
    # NumPy's rounding): divide by max(nbins, first·0) (nbins at run time) instead
    divisor = b.max(_scalar(b, nbins, bin_type), b.mul(first, _scalar(b, 0, bin_type)))
    step = b.div(denom, divisor)
    count = b.convert(b.iota((nbins + 1,), np.int32), bin_type)
    is_last = b.eq(b.iota((nbins + 1,), np.int32), _splat(b, _scalar(b, nbins, np.int32),
                                                            count))
    # NumPy rounds the product, then adds.  XLA:CPU may fuse a multiply and an add into a
    # fused multiply-add (one rounding: a value on an edge would change bins); a sort is
    # never fused, so sorting the (already increasing) products makes XLA round them.
    (products,) = b.sort([b.mul(count, _splat(b, step, count))], 0)
    edges = b.add(products, _splat(b, first, count))
    edges = b.select(is_last, _splat(b, last, edges), edges)
    return first, last, denom, edges, bin_type, bin_type, bin_type, (first, last)


def _uniform_index(b: Builder, x: Value, nbins: int, range_) -> tuple[Value, Value]:
    """(each element's bin, ``nbins`` where dropped; the edges)."""
    if range_ is None:
        first, last, denom, edges, bin_type, arith, compare, bounds = \
            _traced_edges(b, x, nbins)
    else:
        first, last, denom, edges, bin_type, arith, compare, bounds = \
            _static_edges(b, x.dtype, nbins, range_)
    xc = b.convert(x, compare)
    keep = b.and_(b.ge(xc, _splat(b, bounds[0], xc)), b.le(xc, _splat(b, bounds[1], xc)))
    xb = b.convert(x, bin_type)
    xa = b.convert(xb, arith)
    scaled = b.mul(b.div(b.sub(xa, _splat(b, first, xa)), _splat(b, denom, xa)),
                   full_like_value(b, nbins, xa))
    # dropped elements may be anything (NaN, huge): give them bin 0 before the cast
    scaled = b.select(keep, scaled, full_like_value(b, 0, scaled))
    index = cast(b, scaled, np.int64)
    top = full_like_value(b, nbins, index)
    one = full_like_value(b, 1, index)
    index = b.select(b.eq(index, top), b.sub(index, one), index)
    index = b.select(b.lt(xb, _take(b, edges, index)), b.sub(index, one), index)
    above = b.and_(b.ge(xb, _take(b, edges, b.add(index, one))),
                   b.ne(index, b.sub(top, one)))
    index = b.select(above, b.add(index, one), index)
    return b.select(keep, index, top), edges


def _sequence_index(b: Builder, x: Value, bins) -> tuple[Value, Value, int]:
    if not has_traced(bins):
        edges_np = np.asarray(bins)
        if edges_np.ndim != 1:
            raise b.error(PSCValueError, "`bins` must be 1d, when an array")
        if np.any(edges_np[:-1] > edges_np[1:]):
            raise b.error(PSCValueError, "`bins` must increase monotonically, when an array")
    edges = lift(b, bins)
    if edges.ndim != 1:
        raise b.error(PSCValueError, "`bins` must be 1d, when an array")
    nbins = edges.shape[0] - 1
    if nbins < 1:
        raise b.error(PSCValueError, "histogram needs at least two bin edges")
    common = np.result_type(x.dtype, edges.dtype)
    xc, ec = b.convert(x, common), b.convert(edges, common)
    shape = (x.shape[0], nbins)
    xs = b.broadcast_in_dim(xc, shape, (0,))
    lower = b.broadcast_in_dim(b.slice(ec, (0,), (nbins,)), shape, (1,))
    at_or_above = b.convert(b.ge(xs, lower), np.int64)
    index = b.sub(b.reduce(at_or_above, "sum", (1,)), full_like_value(b, 1, x, np.int64))
    first = b.broadcast_in_dim(b.slice(ec, (0,), (1,)), x.shape, (0,))
    last = b.broadcast_in_dim(b.slice(ec, (nbins,), (nbins + 1,)), x.shape, (0,))
    keep = b.and_(b.ge(xc, first), b.le(xc, last))
    return b.select(keep, index, full_like_value(b, nbins, index)), edges, nbins


def histogram(b: Builder, a, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """np.histogram: (hist, bin_edges)."""
    if has_traced(range):
        raise b.error(PSCUnsupportedCallError, "np.histogram(..., range=...) must be known "
                      "when the program is built", "pass it as a static argument, or leave "
                      "it out to use the data's min and max")
    if has_traced(density):
        raise b.error(PSCTypeError, "np.histogram density must be a static bool")
    if isinstance(bins, str):
        raise b.error(PSCUnsupportedCallError, f"np.histogram(bins={bins!r}): automatic bin "
                      "estimators are not supported", "give the number of bins or the edges")
    x = lift(b, a)
    if dtypes.is_bool(x.dtype) or dtypes.is_complex(x.dtype):
        raise b.error(PSCTypeError, f"np.histogram of a {x.dtype} array is not supported")
    x = b.reshape(x, (int(np.prod(x.shape, dtype=np.int64)),))
    w = None
    if weights is not None:
        w = lift(b, weights)
        if w.shape != lift(b, a).shape:
            raise b.error(PSCValueError, "weights should have the same shape as a.")
        w = b.reshape(w, x.shape)
    ntype = np.dtype(np.int64) if w is None else w.dtype
    if isinstance(bins, Value) and bins.ndim == 0:
        raise b.error(PSCTypeError, "np.histogram: the number of bins must be known when the "
                      "program is built", "pass it as a static argument")
    if np.ndim(bins) == 0 and not isinstance(bins, Value):
        try:
            nbins = operator.index(bins)
        except TypeError:
            raise b.error(PSCTypeError, "`bins` must be an integer, a string, or an "
                          "array") from None
        if nbins < 1:
            raise b.error(PSCValueError, "`bins` must be positive, when an integer")
        if x.shape[0] == 0 and range is None:
            range = (0, 1)   # noqa: A001  (NumPy's range for an empty array)
        index, edges = _uniform_index(b, x, nbins, range)
    else:
        index, edges, nbins = _sequence_index(b, x, bins)
    hist = _bin_counts(b, index, w, nbins, ntype)
    if density:
        width = b.convert(b.sub(b.slice(edges, (1,), (nbins + 1,)),
                                b.slice(edges, (0,), (nbins,))), np.float64)
        total = b.reduce(hist, "sum", (0,))
        per_width = b.div(b.convert(hist, np.float64), width)
        hist = b.div(per_width, _splat(b, b.convert(total, np.float64), per_width))
    return hist, edges


# --- cov ------------------------------------------------------------------------------------


def _as_rows(b: Builder, v: Value, rowvar: bool, dtype) -> Value:
    """``np.array(v, ndmin=2, dtype=dtype)``, transposed when ``rowvar`` is false (NumPy
    transposes a 2-d ``m``; a 1-d one is one variable either way)."""
    if v.ndim > 2:
        raise b.error(PSCValueError, "m has more than 2 dimensions")
    x = cast(b, v, dtype)
    if x.ndim < 2:
        x = b.reshape(x, (1,) * (2 - x.ndim) + x.shape)
        return x
    return x if rowvar else b.transpose(x, (1, 0))


def cov(b: Builder, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
        aweights=None, *, dtype=None):
    """np.cov without weights."""
    if fweights is not None or aweights is not None:
        raise b.error(PSCUnsupportedCallError, "np.cov(..., fweights=/aweights=) is not "
                      "supported")
    if has_traced((rowvar, bias, ddof, dtype)):
        raise b.error(PSCTypeError, "np.cov's rowvar, bias, ddof and dtype must be known "
                      "when the program is built")
    mv = lift(b, m)
    yv = None if y is None else lift(b, y)
    if dtype is None:
        dtype = np.result_type(mv.dtype, *(() if yv is None else (yv.dtype,)), np.float64)
    dtype = np.dtype(dtype)
    if dtypes.is_complex(dtype):
        raise b.error(PSCUnsupportedCallError, "np.cov of complex data is not supported "
                      "(it conjugates, and the builder has no conj)")
    x = _as_rows(b, mv, rowvar, dtype)
    if yv is not None:
        rows = _as_rows(b, yv, rowvar, dtype)
        if rows.shape[1] != x.shape[1]:
            raise b.error(PSCShapeError, "np.cov: m and y must have the same number of "
                          f"observations, got {x.shape[1]} and {rows.shape[1]}")
        x = b.concatenate([x, rows], 0)
    if x.shape[0] == 0:
        return b.constant(np.zeros((0, 0)))
    if ddof is None:
        ddof = 0 if bias else 1
    ddof = operator.index(ddof)
    count = x.shape[1]
    fact = count - ddof
    if fact <= 0:
        fact = 0.0
    total = b.reduce(x, "sum", (1,))
    mean = b.div(total, full_like_value(b, count, total))
    centred = b.sub(x, b.broadcast_in_dim(mean, x.shape, (0,)))
    c = b.dot_general(centred, centred, ((1,), (1,)))
    # c *= np.true_divide(1, fact): a float64 scalar, the product cast back (in place)
    with np.errstate(divide="ignore"):
        scale = np.true_divide(1, fact)
    product_dtype = np.result_type(c.dtype, scale)
    scaled = b.mul(b.convert(c, product_dtype), full_like_value(b, scale, c, product_dtype))
    c = cast(b, scaled, c.dtype)
    squeezed = tuple(s for s in c.shape if s != 1)
    return b.reshape(c, squeezed) if squeezed != c.shape else c


register_translation_rule("numpy.histogram", histogram)
register_translation_rule("numpy.cov", cov)
