"""The SVD family of ``numpy.linalg``: ``svd``, ``svdvals``, ``matrix_rank``, ``pinv``,
``lstsq``, ``cond``, ``matrix_norm`` and ``vector_norm``, on the ``svd`` primitive
(jaxlib's LAPACK ``gesdd``: `runtime.primitives.svd`); ``norm``'s ord 2, -2 and 'nuc' live
in `runtime.numpy_rules.linalg`.

NumPy semantics kept: ``numpy.linalg``'s common type (integers and bool compute in
float64, float16 refused), stacks (..., m, n), tall, wide and empty matrices (NumPy's
empty decompositions: identity factors where full_matrices asks for square ones),
``SVDResult(U, S, Vh)``, the dtypes of every result, ``cond``'s NaN-to-inf rule for every
``p``, ``matrix_rank``'s and ``pinv``'s ``tol``/``rtol``/``rcond`` (static or traced,
broadcast over the stack), ``lstsq``'s rank (int32) and gelsd's cut-off ``s > rcond·s_max``.
``hermitian=True`` reads the lower triangle (the real part of its diagonal), as NumPy's
``eigh``, and decomposes that Hermitian matrix.

Documented deviations:

* Singular vectors are unique only up to sign (a phase for complex) per singular value;
  LAPACK's ``gesdd`` picks its own, which may differ from NumPy's (its LAPACK build,
  or ``eigh`` for ``hermitian=True``).  ``U diag(S) Vh`` and ``|U|`` agree.
* Where NumPy raises ``LinAlgError`` at run time (SVD did not converge: NaN or inf input)
  the results are NaN, as in jax; ``checks="nan"`` reports them.
* ``lstsq``'s residuals have a shape NumPy decides from the traced rank (empty when
  ``rank < n``).  For ``m <= n`` they are always empty here, as in NumPy; for ``m > n``
  they have NumPy's full-rank shape ``(k,)`` and are NaN for a rank-deficient ``a``
  (``checks="nan"`` reports it) instead of an empty array.
* ``matrix_rank`` of a 0-d or 1-d array gives an int64 array, not a Python int.
* Derivatives: through the SVD's (jax's rules; NaN at repeated singular values, as jax),
  except ``pinv`` and ``lstsq``'s ``x``, which take jax's pinv derivative (Golub and
  Pereyra, valid at any constant rank) by a stop-gradient construction: exact first
  derivatives, but higher derivatives miss the terms of the derivative of ``pinv`` itself.
  ``pinv`` computes a few more matrix products for it (the same values).
"""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..errors import PSCShapeError, PSCTypeError, PSCValueError
from ..ir import Value
from ..primitives.linalg import batched_matmul
from ..primitives.svd import adjoint
from ..primitives.svd import svd as _svd_op
from ..translation import register_translation_rule
from . import linalg as _linalg
from ._core import broadcast_shapes, broadcast_to, full_like_value, lift, normalize_axis
from .decompositions import _square_stack, common_type
from .decompositions import inv as _inv

_SVD_RESULT = getattr(getattr(np.linalg, "_linalg", None), "SVDResult", None) or (
    lambda *r: r)
_NO_VALUE = getattr(np, "_NoValue", object())

COVERAGE_NOTES = {
    "numpy.linalg.lstsq": "partial: residuals of a rank-deficient tall a are NaN, not "
                          "empty (their shape depends on the traced rank in NumPy)",
    "numpy.linalg.matrix_rank": "partial: a 0-d/1-d input gives an int64 array, not int",
    "numpy.linalg.pinv": "partial: second and higher derivatives are not exact",
    "numpy.linalg.cond": "partial: where NumPy raises LinAlgError at run time (the SVD of "
                         "a NaN input; p='nuc' of a singular matrix) the result is NaN/inf",
}

# --- shared helpers -------------------------------------------------------------------------


def _stack(b: Builder, name: str, a) -> Value:
    """``a`` in its LAPACK dtype, at least 2-d (NumPy's ``_assert_stacked_2d``)."""
    a = lift(b, a, common_type(b, name, (a,)))
    if a.ndim < 2:
        raise b.error(PSCShapeError, f"{name}: {a.ndim}-dimensional array given. Array "
                      "must be at least two-dimensional")
    return a


def _zeros(b: Builder, shape, dtype) -> Value:
    return b.broadcast_in_dim(b.constant(np.zeros((), dtype)), tuple(shape), ())


def _identities(b: Builder, batch, n: int, dtype) -> Value:
    eye = b.constant(np.eye(n, dtype=dtype))
    return b.broadcast_in_dim(eye, tuple(batch) + (n, n), (len(batch), len(batch) + 1))


def _lower_hermitian(b: Builder, a: Value) -> Value:
    """The Hermitian matrix NumPy's ``eigh`` sees: the strict lower triangle of ``a``, the
    real part of its diagonal, and the conjugate of that triangle above."""
    r = a.ndim
    rows, cols = (b.iota(a.shape, np.int32, d) for d in (r - 2, r - 1))
    strict = b.select(b.gt(rows, cols), a, full_like_value(b, 0, a))
    diagonal = b.select(b.eq(rows, cols), a, full_like_value(b, 0, a))
    if dtypes.is_complex(a.dtype):
        real = b.convert(diagonal, dtypes.real_dtype(a.dtype))
        diagonal = b.convert(real, a.dtype)
    return b.add(b.add(strict, diagonal), adjoint(b, strict))


def _decomposed(b: Builder, name: str, a, hermitian) -> Value:
    a = _stack(b, name, a)
    if _static(b, hermitian, f"{name} hermitian"):
        _square_stack(b, name, a)
        a = _lower_hermitian(b, a)
    return a


def _static(b: Builder, x, what: str):
    return _linalg._static(b, x, what)


def singular_values(b: Builder, a: Value) -> Value:
    """The singular values (..., k) of the LAPACK-typed stack ``a``, empty ones included."""
    k = min(a.shape[-2:])
    if 0 in a.shape:
        return _zeros(b, a.shape[:-2] + (k,), dtypes.real_dtype(a.dtype))
    return _svd_op(b, a, compute_uv=False)[0]


def _factors(b: Builder, a: Value, full: bool):
    """(u, s, vt) of ``a``; NumPy's empty factors when a dimension is 0."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    if 0 in a.shape:
        s = singular_values(b, a)
        if full:
            return _identities(b, batch, m, a.dtype), s, _identities(b, batch, n, a.dtype)
        k = min(m, n)
        return _zeros(b, batch + (m, k), a.dtype), s, _zeros(b, batch + (k, n), a.dtype)
    s, u, vt = _svd_op(b, a, full_matrices=full, compute_uv=True)
    return u, s, vt


def _last_axis_max(b: Builder, s: Value, keepdims: bool = True) -> Value:
    """max over the last axis with NumPy's ``initial=0`` (singular values are ≥ 0)."""
    result = _linalg._max(b, s, (s.ndim - 1,))
    return b.reshape(result, result.shape + (1,)) if keepdims else result


def _strong_dtype(x) -> np.dtype:
    return x.dtype if isinstance(x, Value) else np.asarray(x).dtype


def _threshold(b: Builder, s: Value, factor, scale: Value):
    """(s, factor[..., None] * scale) in their common dtype, ``factor`` taken as NumPy's
    ``asarray`` takes it (a Python float is a strong float64)."""
    dtype = np.result_type(s.dtype, _strong_dtype(factor))
    factor = lift(b, factor, dtype)
    factor = b.reshape(factor, factor.shape + (1,))
    scale = b.convert(scale, dtype)
    shape = broadcast_shapes(b, factor.shape, scale.shape)
    cutoff = b.mul(broadcast_to(b, factor, shape), broadcast_to(b, scale, shape))
    return b.convert(s, dtype), cutoff


def _compare_broadcast(b: Builder, x: Value, y: Value) -> Value:
    shape = broadcast_shapes(b, x.shape, y.shape)
    return b.gt(broadcast_to(b, x, shape), broadcast_to(b, y, shape))


# --- svd, svdvals ----------------------------------------------------------------------------


def svd(b: Builder, a, full_matrices=True, compute_uv=True, hermitian=False):
    """np.linalg.svd: ``SVDResult(U, S, Vh)``, or ``S`` alone without ``compute_uv``."""
    a = _decomposed(b, "svd", a, hermitian)
    full = bool(_static(b, full_matrices, "svd full_matrices"))
    if not _static(b, compute_uv, "svd compute_uv"):
        return singular_values(b, a)
    u, s, vt = _factors(b, a, full or bool(hermitian))
    return _SVD_RESULT(u, s, vt)


def svdvals(b: Builder, x) -> Value:
    """np.linalg.svdvals: the singular values, descending."""
    return singular_values(b, _stack(b, "svdvals", x))


# --- matrix_rank -----------------------------------------------------------------------------


def matrix_rank(b: Builder, A, tol=None, hermitian=False, *, rtol=None) -> Value:
    """np.linalg.matrix_rank: the number of singular values above ``tol`` (default
    ``rtol · max(S)``, ``rtol`` default ``max(m, n) · eps``)."""
    if rtol is not None and tol is not None:
        raise b.error(PSCValueError, "`tol` and `rtol` can't be both set.")
    x = lift(b, A)
    if x.ndim < 2:   # NumPy: int(not all(A == 0))
        nonzero = b.ne(x, full_like_value(b, 0, x))
        return b.convert(b.reduce(nonzero, "or", tuple(range(x.ndim))), dtypes.int64)
    s = singular_values(b, _decomposed(b, "matrix_rank", x, hermitian))
    if tol is None:
        if rtol is None:
            rtol = max(x.shape[-2:]) * np.finfo(s.dtype).eps   # a strong float scalar
        s, tol = _threshold(b, s, rtol, _last_axis_max(b, s))
    else:
        dtype = np.result_type(s.dtype, _strong_dtype(tol))
        tol = lift(b, tol, dtype)
        s, tol = b.convert(s, dtype), b.reshape(tol, tol.shape + (1,))
    above = _compare_broadcast(b, s, tol)
    return b.reduce(b.convert(above, dtypes.int64), "sum", (above.ndim - 1,))


# --- pinv ------------------------------------------------------------------------------------


def _stop(b: Builder, x: Value) -> Value:
    return b.emit("stop_gradient", [x])[0]


def _mm(b: Builder, *xs) -> Value:
    out = xs[0]
    for x in xs[1:]:
        out = batched_matmul(b, out, x)
    return out


def _with_pinv_derivative(b: Builder, a: Value, p: Value) -> Value:
    """``p`` (the pseudo-inverse of ``a``) with jax's pinv derivative (Golub and Pereyra):
    ``p`` is taken without derivative and ``L(a − a)``, L the derivative's linear map at
    ``a``, is added: exactly zero, it carries ``dp = L(da)``."""
    a0, p0 = _stop(b, a), _stop(b, p)
    da = b.sub(a, a0)
    ph, dah = adjoint(b, p0), adjoint(b, da)
    m, n = a.shape[-2:]
    if m >= n:
        s = _mm(b, p0, ph, dah)
        t = _mm(b, dah, ph, p0)
        dp = b.add(b.neg(_mm(b, p0, da, p0)), s)
        dp = b.sub(b.add(b.sub(dp, _mm(b, s, a0, p0)), t), _mm(b, p0, a0, t))
    else:
        s = _mm(b, p0, _mm(b, ph, dah))
        t = _mm(b, dah, _mm(b, ph, p0))
        dp = b.add(b.neg(_mm(b, p0, _mm(b, da, p0))), s)
        dp = b.sub(b.add(b.sub(dp, _mm(b, s, _mm(b, a0, p0))), t),
                   _mm(b, p0, _mm(b, a0, t)))
    return b.add(p0, dp)


def _pinv_of(b: Builder, a: Value, rcond) -> tuple[Value, Value]:
    """(pinv(a) with its derivative, the kept-singular-value mask) of a non-empty
    LAPACK-typed stack: ``V diag(1/s) Uᴴ`` over the s above ``rcond · max(s)``."""
    u, s, vt = _factors(b, a, False)
    compared, cutoff = _threshold(b, s, rcond, _last_axis_max(b, s))
    large = _compare_broadcast(b, compared, cutoff)
    s = broadcast_to(b, s, large.shape)
    safe = b.select(large, s, full_like_value(b, 1, s))
    inverse = b.select(large, b.div(full_like_value(b, 1, s), safe), full_like_value(b, 0, s))
    vh = adjoint(b, vt)
    vh = broadcast_to(b, vh, large.shape[:-1] + vh.shape[-2:])
    uh = broadcast_to(b, adjoint(b, u), large.shape[:-1] + (u.shape[-1], u.shape[-2]))
    scaled = b.mul(uh, b.broadcast_in_dim(b.convert(inverse, a.dtype), uh.shape,
                                          tuple(range(uh.ndim - 1))))
    p = batched_matmul(b, vh, scaled)
    a = broadcast_to(b, a, p.shape[:-2] + a.shape[-2:])
    return _with_pinv_derivative(b, a, p), large


def pinv(b: Builder, a, rcond=None, hermitian=False, *, rtol=_NO_VALUE) -> Value:
    """np.linalg.pinv: the Moore-Penrose pseudo-inverse (singular values at or below
    ``rcond · max(s)`` dropped; ``rcond`` default 1e-15, or ``rtol``)."""
    x = lift(b, a)
    if rcond is None:
        if rtol is _NO_VALUE:
            rcond = 1e-15
        elif rtol is None:
            if not dtypes.is_inexact(x.dtype):
                raise b.error(PSCValueError, f"data type {x.dtype.type} not inexact")
            rcond = max(x.shape[-2:]) * np.finfo(x.dtype).eps
        else:
            rcond = rtol
    elif rtol is not _NO_VALUE:
        raise b.error(PSCValueError, "`rtol` and `rcond` can't be both set.")
    if x.ndim >= 2 and 0 in x.shape[-2:]:   # NumPy's empty result keeps the input dtype
        m, n = x.shape[-2:]
        return _zeros(b, x.shape[:-2] + (n, m), x.dtype)
    a = _decomposed(b, "pinv", x, hermitian)
    if 0 in a.shape:
        m, n = a.shape[-2:]
        return _zeros(b, a.shape[:-2] + (n, m), a.dtype)
    return _pinv_of(b, a, rcond)[0]


# --- lstsq -----------------------------------------------------------------------------------


def lstsq(b: Builder, a, rhs, rcond=None):
    """np.linalg.lstsq: (x, residuals, rank, s); see the module docstring for residuals."""
    dtype = common_type(b, "lstsq", (a, rhs))
    a, rhs = lift(b, a, dtype), lift(b, rhs, dtype)
    vector = rhs.ndim == 1
    if vector:
        rhs = b.reshape(rhs, rhs.shape + (1,))
    for name, v in (("a", a), ("b", rhs)):
        if v.ndim != 2:
            raise b.error(PSCShapeError, f"lstsq: {v.ndim}-dimensional array given. Array "
                          "must be two-dimensional", f"{name} must be a matrix")
    (m, n), k = a.shape, rhs.shape[1]
    if rhs.shape[0] != m:
        raise b.error(PSCShapeError, "lstsq: Incompatible dimensions",
                      f"a is {a.shape}, b has {rhs.shape[0]} rows")
    real = dtypes.real_dtype(dtype)
    if rcond is None:
        rcond = np.finfo(dtype).eps * max(n, m)
    if 0 in a.shape:
        x, rank = _zeros(b, (n, k), dtype), b.constant(np.int32(0))
        s = _zeros(b, (0,), real)
    else:
        x, rank, s = _least_squares(b, a, rhs, rcond)
    residuals = _residuals(b, a, rhs, x, rank) if m > n else _zeros(b, (0,), real)
    if vector:
        x = b.reshape(x, (n,))
    return x, residuals, rank, s


def _least_squares(b: Builder, a: Value, rhs: Value, rcond):
    """(x, rank, s) as LAPACK's gelsd: singular values ≤ rcond · s_max (rcond < 0: eps)
    are zero."""
    s = singular_values(b, a)
    if isinstance(rcond, Value):
        if not dtypes.is_inexact(rcond.dtype):
            rcond = b.convert(rcond, dtypes.float64)
        eps = full_like_value(b, np.finfo(s.dtype).eps, rcond)
        rcond = b.select(b.lt(rcond, full_like_value(b, 0, rcond)), eps, rcond)
    elif np.asarray(rcond) < 0:
        rcond = np.finfo(s.dtype).eps
    p, large = _pinv_of(b, a, rcond)
    rank = b.reduce(b.convert(large, np.int32), "sum", (large.ndim - 1,))
    return batched_matmul(b, p, rhs) if p.ndim > 2 else b.dot_general(p, rhs, ((1,), (0,))), \
        rank, s


def _residuals(b: Builder, a: Value, rhs: Value, x: Value, rank: Value) -> Value:
    """Σ|b − a x|² per column; NaN where ``rank < n`` (NumPy gives an empty array)."""
    fitted = b.dot_general(a, x, ((1,), (0,)))
    error = b.sub(rhs, fitted)
    if dtypes.is_complex(error.dtype):
        error = b.abs(error)
    total = b.reduce(b.mul(error, error), "sum", (0,))
    deficient = b.lt(rank, b.constant(np.int32(a.shape[1])))
    return b.select(b.broadcast_in_dim(deficient, total.shape, ()),
                    full_like_value(b, np.nan, total), total)


# --- cond ------------------------------------------------------------------------------------


def cond(b: Builder, x, p=None) -> Value:
    """np.linalg.cond: ``s_max/s_min`` (p None, 2; -2: the inverse), else
    ``norm(x, p) · norm(inv(x), p)``; a NaN from input without NaN becomes inf."""
    _static(b, p, "np.linalg.cond p")
    x = lift(b, x)
    if 0 in x.shape[-2:]:   # NumPy's _is_empty_2d
        raise b.error(PSCValueError, "cond is not defined on empty arrays")
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        s = singular_values(b, _stack(b, "cond", x))
        k = s.shape[-1]
        first = b.slice(s, [0] * s.ndim, s.shape[:-1] + (1,))
        last = b.slice(s, [0] * (s.ndim - 1) + [k - 1], s.shape)
        ratio = b.div(last, first) if (not isinstance(p, str) and p == -2) else \
            b.div(first, last)
        r = b.reshape(ratio, s.shape[:-1])
        source = x
    else:
        dtype = common_type(b, "cond", (x,))
        x = lift(b, x, dtype)
        _square_stack(b, "cond", x)
        if 0 in x.shape:
            raise b.error(PSCValueError, "cond is not defined on empty arrays")
        axes = (-2, -1)
        r = b.mul(_linalg.norm(b, x, p, axes), _linalg.norm(b, _inv(b, x), p, axes))
        r = b.convert(r, dtypes.real_dtype(dtype))
        source = x
    return _nan_to_inf(b, r, source)


def _nan_to_inf(b: Builder, r: Value, x: Value) -> Value:
    """NumPy's rule: a NaN result is inf unless that matrix of ``x`` held a NaN."""
    x = lift(b, x)
    if not dtypes.is_inexact(x.dtype):
        source_nan = _zeros(b, r.shape, np.bool_)
    else:
        source_nan = b.reduce(b.ne(x, x), "or", (x.ndim - 2, x.ndim - 1))
    bad = b.and_(b.ne(r, r), b.not_(source_nan))
    return b.select(bad, full_like_value(b, np.inf, r), r)


# --- matrix_norm, vector_norm ----------------------------------------------------------------


def matrix_norm(b: Builder, x, *, keepdims=False, ord="fro") -> Value:
    """np.linalg.matrix_norm: ``norm`` over the last two axes."""
    return _linalg.norm(b, x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def vector_norm(b: Builder, x, *, axis=None, keepdims=False, ord=2) -> Value:
    """np.linalg.vector_norm: a vector norm over ``axis`` (None: all, a tuple: those axes
    flattened into one)."""
    _static(b, axis, "np.linalg.vector_norm axis")
    v = lift(b, x)
    shape = v.shape
    if axis is None:
        axes = tuple(range(v.ndim))
    elif isinstance(axis, tuple):
        axes = tuple(normalize_axis(b, a, v.ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise b.error(PSCValueError, "repeated axis")
    else:
        try:
            axes = (normalize_axis(b, operator.index(axis), v.ndim),)
        except TypeError:
            raise b.error(PSCTypeError, "'axis' must be None, an integer or a tuple of "
                          "integers") from None
    rest = tuple(d for d in range(v.ndim) if d not in axes)
    if axis is None or isinstance(axis, tuple):
        v = b.transpose(v, axes + rest)
        v = b.reshape(v, (int(np.prod([shape[d] for d in axes], dtype=int)),) +
                      tuple(shape[d] for d in rest))
        result = _linalg.norm(b, v, ord=ord, axis=0)
    else:
        result = _linalg.norm(b, v, ord=ord, axis=axes[0])
    if keepdims:
        result = b.reshape(result, tuple(1 if d in axes else s for d, s in enumerate(shape)))
    return result


for _name, _rule in [("numpy.linalg.svd", svd), ("numpy.linalg.svdvals", svdvals),
                     ("numpy.linalg.matrix_rank", matrix_rank), ("numpy.linalg.pinv", pinv),
                     ("numpy.linalg.lstsq", lstsq), ("numpy.linalg.cond", cond),
                     ("numpy.linalg.matrix_norm", matrix_norm),
                     ("numpy.linalg.vector_norm", vector_norm)]:
    register_translation_rule(_name, _rule)
