"""``scipy.linalg``: ``solve_triangular``, ``cho_factor``/``cho_solve``,
``lu_factor``/``lu_solve``, ``expm`` and ``eigh`` (delegated to the ``numpy.linalg.eigh``
rule), on the ``triangular_solve``, ``cholesky``, ``lu`` and ``solve`` primitives.

SciPy semantics kept (SciPy 1.17): the LAPACK dtype SciPy picks (``get_lapack_funcs`` of
the operands, asked of SciPy itself: ints and bools compute in float64 unless a float32
operand is there, float16 in float32); ``b`` is a vector (n,) when 1-d, else a stack of
(n, k) matrices, and batch dimensions broadcast (SciPy's ``_apply_over_batch``);
``trans`` 0/1/2 or 'N'/'T'/'C'; ``lu_factor``'s pivots are 0-based int32 row
interchanges, which ``lu_solve`` replays (a traced loop: the pivots are data); ``cho_factor``
leaves the other triangle of ``a`` in ``c`` as SciPy does.  ``expm``: Padé 13 with scaling
and squaring (Higham 2005, as SciPy and jax): the number of squarings
``max(0, ceil(log2(|A|₁ / θ₁₃)))`` depends on the data, so the squaring is a traced
``while`` loop (bounded by `MAX_SQUARINGS`, for reverse mode); SciPy's own choice of a
lower Padé order for small norms only changes rounding.

Deviations (documented in ``COVERAGE_NOTES``): where SciPy raises at run time
(``LinAlgError`` for a singular triangular matrix or one not positive definite,
``ValueError`` for non-finite input under ``check_finite=True``) the result is NaN
(non-finite inputs propagate); ``lu_factor`` of a singular matrix returns its factors
without SciPy's ``LinAlgWarning``; ``lu_factor`` takes square matrices only; ``expm`` of a
matrix with 1-norm above θ₁₃·2^64 gives NaN; an invalid ``trans`` is refused (SciPy
silently solves some other system).  ``overwrite_*`` are accepted and ignored (PSC values
are immutable).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from .. import dtypes
from ..builder import Builder
from ..errors import PSCShapeError, PSCTypeError, PSCUnsupportedCallError, PSCValueError
from ..ir import Value
from ..primitives.linalg import batched_matmul, matrix_transpose
from ..primitives.linalg import cholesky as _cholesky_op
from ..primitives.linalg import solve as _solve_op
from ..primitives.support import conj
from ..primitives.triangular import read_part, triangular_solve
from ..translation import lookup_rule, register_translation_rule
from ._core import broadcast_shapes, broadcast_to, lift
from .linalg import _static

MAX_SQUARINGS = 64
_THETA_13 = 5.371920351148152
_PADE_13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
            129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
            40840800., 960960., 16380., 182., 1.)

COVERAGE_NOTES = {
    "scipy.linalg.solve_triangular": "partial: a singular matrix gives NaN (SciPy raises); "
                                     "check_finite does not raise",
    "scipy.linalg.cho_factor": "partial: not positive definite gives NaN (SciPy raises)",
    "scipy.linalg.lu_factor": "partial: square matrices only; no LinAlgWarning when singular",
    "scipy.linalg.expm": "partial: NaN beyond 64 squarings (1-norm > 9.9e19)",
    "scipy.linalg.eigh": "partial: the standard problem only (b=None, no subsets, driver); "
                         "needs the numpy.linalg.eigh rule",
}


# --- shared helpers -----------------------------------------------------------------------


def _dtype_of(x) -> np.dtype:
    return x.dtype if isinstance(x, Value) else np.asarray(x).dtype


def lapack_dtype(b: Builder, routine: str, *args) -> np.dtype:
    """The dtype SciPy's ``get_lapack_funcs((routine,), args)`` computes ``args`` in."""
    empties = [np.empty(0, _dtype_of(a)) for a in args]
    try:
        return np.dtype(scipy.linalg.get_lapack_funcs((routine,), empties)[0].dtype)
    except (TypeError, ValueError) as err:
        raise b.error(PSCTypeError, f"scipy.linalg: unsupported dtype for LAPACK: {err}") \
            from None


def _flag(b: Builder, value, what: str):
    return _static(b, value, f"scipy.linalg {what}")


def _zeros(b: Builder, shape, dtype) -> Value:
    return b.broadcast_in_dim(b.constant(np.zeros((), dtype)), shape, ())


def _full(b: Builder, value, like: Value) -> Value:
    return b.broadcast_in_dim(b.constant(np.asarray(value, like.dtype)), like.shape, ())


def _square(b: Builder, a: Value, message: str) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise b.error(PSCShapeError, message)


def _as_matrices(b: Builder, a: Value, rhs: Value, message: str):
    """(a and rhs broadcast to one batch, rhs as (..., n, k), whether rhs was a vector)."""
    n = a.shape[-1]
    vector = rhs.ndim == 1
    if vector:
        rhs = b.reshape(rhs, (rhs.shape[0], 1))
    if rhs.ndim < 2 or rhs.shape[-2] != n:
        raise b.error(PSCShapeError, message)
    batch = broadcast_shapes(b, a.shape[:-2], rhs.shape[:-2])
    return (broadcast_to(b, a, batch + a.shape[-2:]),
            broadcast_to(b, rhs, batch + rhs.shape[-2:]), vector)


def _unvector(b: Builder, x: Value, vector: bool) -> Value:
    return b.reshape(x, x.shape[:-1]) if vector else x


_TRANS = {0: "N", 1: "T", 2: "C", "N": "N", "T": "T", "C": "C"}


def _trans(b: Builder, trans, allowed=_TRANS) -> str:
    _flag(b, trans, "trans")
    try:
        return allowed[trans]
    except (KeyError, TypeError):
        raise b.error(PSCValueError, f"scipy.linalg: trans must be one of "
                      f"{sorted(allowed, key=str)}, got {trans!r}") from None


def _real_trans(trans: str, dtype) -> str:
    return "T" if trans == "C" and not dtypes.is_complex(dtype) else trans


def _diagonal_has_zero(b: Builder, a: Value) -> Value:
    r = a.ndim
    on = b.eq(b.iota(a.shape, np.int32, r - 2), b.iota(a.shape, np.int32, r - 1))
    zero = b.and_(on, b.eq(a, _zeros(b, a.shape, a.dtype)))
    return b.reduce(zero, "or", (r - 2, r - 1))


def _nan_where(b: Builder, bad: Value, x: Value) -> Value:
    """``x`` with the matrices flagged in ``bad`` (its batch shape) replaced by NaN."""
    bad = b.broadcast_in_dim(bad, x.shape, range(bad.ndim))
    return b.select(bad, _full(b, np.nan, x), x)


# --- solve_triangular ---------------------------------------------------------------------


def solve_triangular(bld: Builder, a, b, trans=0, lower=False, unit_diagonal=False,
                     overwrite_b=False, check_finite=True) -> Value:
    """scipy.linalg.solve_triangular: ``x`` with ``op(T) x = b``, ``T`` a's triangle."""
    b, rhs = bld, b   # (SciPy's parameter is called b, like the builder elsewhere)
    trans, lower = _trans(b, trans), bool(_flag(b, lower, "lower"))
    unit = bool(_flag(b, unit_diagonal, "unit_diagonal"))
    dtype = lapack_dtype(b, "trtrs", a, rhs)
    a, rhs = lift(b, a, dtype), lift(b, rhs, dtype)
    _square(b, a, "expected square matrix")
    a, rhs, vector = _as_matrices(b, a, rhs, f"shapes of a {a.shape} and b {rhs.shape} are "
                                  "incompatible")
    if rhs.size == 0:
        return _unvector(b, _zeros(b, rhs.shape, dtype), vector)
    x = triangular_solve(b, a, rhs, lower=lower, trans=_real_trans(trans, dtype),
                         unit_diagonal=unit)
    if not unit:   # SciPy: LinAlgError "singular matrix"
        x = _nan_where(b, _diagonal_has_zero(b, a), x)
    return _unvector(b, x, vector)


# --- Cholesky -----------------------------------------------------------------------------


def _adjoint(b: Builder, x: Value) -> Value:
    x = matrix_transpose(b, x)
    return conj(b, x) if dtypes.is_complex(x.dtype) else x


def cho_factor(b: Builder, a, lower=False, overwrite_a=False, check_finite=True):
    """scipy.linalg.cho_factor: (c, lower); c's other triangle is a's, as in SciPy."""
    flag = _flag(b, lower, "lower")
    dtype = lapack_dtype(b, "potrf", a)
    a = lift(b, a, dtype)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        shape = a.shape if a.ndim >= 2 else (1,) * (2 - a.ndim) + a.shape
        raise b.error(PSCShapeError, "Input array is expected to be square but has the "
                      f"shape: {shape}.")
    if a.size == 0:
        return _zeros(b, a.shape, dtype), flag
    if flag:
        factor = _cholesky_op(b, a)
    else:   # the upper triangle of a is the lower one of aᴴ, whose factor is Uᴴ
        factor = _adjoint(b, _cholesky_op(b, _adjoint(b, a)))
    kept = read_part(b, a, not flag, True)   # the strict other triangle
    return b.add(factor, kept), flag


def cho_solve(bld: Builder, c_and_lower, b, overwrite_b=False, check_finite=True) -> Value:
    """scipy.linalg.cho_solve((c, lower), b): ``A x = b`` for ``A = L Lᴴ`` (or ``Uᴴ U``)."""
    b, rhs = bld, b
    c, lower = c_and_lower
    lower = bool(_flag(b, lower, "lower"))
    dtype = lapack_dtype(b, "potrs", c, rhs)
    c, rhs = lift(b, c, dtype), lift(b, rhs, dtype)
    _square(b, c, "The factored matrix c is not square.")
    c, rhs, vector = _as_matrices(b, c, rhs, f"incompatible dimensions ({c.shape} and "
                                  f"{rhs.shape})")
    if rhs.size == 0:
        return _unvector(b, _zeros(b, rhs.shape, dtype), vector)
    adjoint = _real_trans("C", dtype)
    first, second = ("N", adjoint) if lower else (adjoint, "N")
    y = triangular_solve(b, c, rhs, lower=lower, trans=first)
    return _unvector(b, triangular_solve(b, c, y, lower=lower, trans=second), vector)


# --- LU -----------------------------------------------------------------------------------


def lu_factor(b: Builder, a, overwrite_a=False, check_finite=True):
    """scipy.linalg.lu_factor: (lu, piv) with 0-based int32 pivots."""
    dtype = lapack_dtype(b, "getrf", a)
    a = lift(b, a, dtype)
    if a.ndim < 2:
        raise b.error(PSCShapeError, f"lu_factor: {a.ndim}-dimensional array given; a "
                      "matrix (or a stack of them) is needed")
    if a.shape[-1] != a.shape[-2]:
        raise b.error(PSCUnsupportedCallError, f"lu_factor of a non-square matrix "
                      f"{a.shape} is not supported", "use square matrices")
    pivots_shape = a.shape[:-1]
    if a.size == 0:
        return _zeros(b, a.shape, dtype), _zeros(b, pivots_shape, np.int32)
    factors, pivots, _ = b.emit("lu", [a])
    return factors, b.sub(pivots, _full(b, 1, pivots))


def _permutation(b: Builder, piv: Value) -> Value:
    """The row order LAPACK's interchanges give: swap ``perm[i]`` and ``perm[piv[i]]`` for
    i = 0..n-1, from ``perm = arange(n)`` (a loop: the pivots are data)."""
    n = piv.shape[-1]
    iota = b.iota(piv.shape, np.int32, piv.ndim - 1)
    last = piv.ndim - 1

    def pick(sub, values, where):
        return sub.reduce(sub.select(where, values, _zeros(sub, values.shape, np.int32)),
                          "sum", (last,))

    def body(sub, state):
        i, perm = state
        at_i = sub.eq(iota, sub.broadcast_in_dim(i, iota.shape, ()))
        j = pick(sub, piv, at_i)
        at_j = sub.eq(iota, sub.broadcast_in_dim(j, iota.shape, range(last)))
        value_i = sub.broadcast_in_dim(pick(sub, perm, at_i), perm.shape, range(last))
        value_j = sub.broadcast_in_dim(pick(sub, perm, at_j), perm.shape, range(last))
        perm = sub.select(at_i, value_j, sub.select(at_j, value_i, perm))
        return sub.add(i, sub.constant(np.int32(1))), perm

    def cond(sub, state):
        return sub.lt(state[0], sub.constant(np.int32(n)))
    _, perm = b.while_loop(cond, body, (b.constant(np.int32(0)), iota), trip_count=n)
    return perm


def _take_rows(b: Builder, x: Value, rows: Value) -> Value:
    """``x[..., rows[..., i], :]`` for (..., n, k) ``x`` and (..., n) ``rows``."""
    nb = x.ndim - 2
    batch = tuple(range(nb))
    return b.gather(x, b.reshape(rows, rows.shape + (1,)), offset_dims=(nb + 1,),
                    collapsed_slice_dims=(nb,), start_index_map=(nb,),
                    index_vector_dim=nb + 1, slice_sizes=(1,) * (nb + 1) + x.shape[-1:],
                    operand_batching_dims=batch, start_indices_batching_dims=batch)


def lu_solve(bld: Builder, lu_and_piv, b, trans=0, overwrite_b=False,
             check_finite=True) -> Value:
    """scipy.linalg.lu_solve((lu, piv), b, trans): ``A x = b`` (or ``Aᵀ``, ``Aᴴ``)."""
    b, rhs = bld, b
    lu, piv = lu_and_piv
    trans = _trans(b, trans, {0: "N", 1: "T", 2: "C"})
    dtype = lapack_dtype(b, "getrs", lu, rhs)
    lu, piv = lift(b, lu, dtype), lift(b, piv, np.int32)
    rhs = lift(b, rhs, dtype)
    _square(b, lu, f"lu_solve needs square factors, got shape {lu.shape}")
    if piv.shape[-1:] != lu.shape[-1:]:
        raise b.error(PSCShapeError, f"lu_solve: pivots of shape {piv.shape} do not match "
                      f"lu of shape {lu.shape}")
    lu, rhs, vector = _as_matrices(b, lu, rhs, f"Shapes of lu {lu.shape} and b "
                                   f"{rhs.shape} are incompatible")
    if rhs.size == 0:
        return _unvector(b, _zeros(b, rhs.shape, dtype), vector)
    piv = broadcast_to(b, piv, rhs.shape[:-1])
    perm = _permutation(b, piv)
    trans = _real_trans(trans, dtype)
    if trans == "N":
        y = triangular_solve(b, lu, _take_rows(b, rhs, perm), lower=True, unit_diagonal=True)
        x = triangular_solve(b, lu, y, lower=False)
    else:
        z = triangular_solve(b, lu, rhs, lower=False, trans=trans)
        w = triangular_solve(b, lu, z, lower=True, trans=trans, unit_diagonal=True)
        iota = b.iota(perm.shape, np.int32, perm.ndim - 1)
        inverse = b.sort([perm, iota], perm.ndim - 1)[1]
        x = _take_rows(b, w, inverse)
    return _unvector(b, x, vector)


# --- expm ---------------------------------------------------------------------------------


def _identity(b: Builder, like: Value) -> Value:
    eye = b.constant(np.eye(like.shape[-1], dtype=like.dtype))
    return b.broadcast_in_dim(eye, like.shape, (like.ndim - 2, like.ndim - 1))


def _combine(b: Builder, terms) -> Value:
    """sum of coefficient * matrix."""
    total = None
    for coefficient, matrix in terms:
        term = b.mul(_full(b, coefficient, matrix), matrix)
        total = term if total is None else b.add(total, term)
    return total


def _pade13(b: Builder, a: Value) -> Value:
    c = _PADE_13
    eye = _identity(b, a)
    a2 = batched_matmul(b, a, a)
    a4 = batched_matmul(b, a2, a2)
    a6 = batched_matmul(b, a4, a2)
    u_inner = batched_matmul(b, a6, _combine(b, [(c[13], a6), (c[11], a4), (c[9], a2)]))
    u = batched_matmul(b, a, b.add(u_inner, _combine(
        b, [(c[7], a6), (c[5], a4), (c[3], a2), (c[1], eye)])))
    v_inner = batched_matmul(b, a6, _combine(b, [(c[12], a6), (c[10], a4), (c[8], a2)]))
    v = b.add(v_inner, _combine(b, [(c[6], a6), (c[4], a4), (c[2], a2), (c[0], eye)]))
    return _solve_op(b, b.sub(v, u), b.add(v, u))


def _squarings(b: Builder, a: Value) -> Value:
    """Per matrix: ``max(0, ceil(log2(|a|₁ / θ₁₃)))`` as int32, capped at
    MAX_SQUARINGS + 1 (NaN norms count 0: their result is NaN anyway)."""
    r = a.ndim
    norm = b.reduce(b.reduce(b.abs(a), "sum", (r - 2,)), "max", (r - 2,))
    s = b.ceil(b.div(b.log(b.div(norm, _full(b, _THETA_13, norm))),
                     _full(b, np.log(2.0), norm)))
    s = b.max(s, _full(b, 0.0, s))
    s = b.min(s, _full(b, MAX_SQUARINGS + 1.0, s))
    s = b.select(b.ne(s, s), _full(b, 0.0, s), s)
    return b.convert(s, np.int32)


def _expm_matrices(b: Builder, a: Value) -> Value:
    s = _squarings(b, a)
    scale = b.pow(_full(b, 2.0, b.convert(s, dtypes.real_dtype(a.dtype))),
                  b.neg(b.convert(s, dtypes.real_dtype(a.dtype))))
    scale = b.broadcast_in_dim(b.convert(scale, a.dtype), a.shape, range(s.ndim))
    r = _pade13(b, b.mul(a, scale))
    most = b.reduce(s, "max", tuple(range(s.ndim)))
    lanes = b.broadcast_in_dim(s, r.shape, range(s.ndim))

    def cond(sub, state):
        return sub.lt(state[0], sub.min(most, sub.constant(np.int32(MAX_SQUARINGS))))

    def body(sub, state):
        i, x = state
        going = sub.lt(sub.broadcast_in_dim(i, x.shape, ()), lanes)
        return sub.add(i, sub.constant(np.int32(1))), sub.select(
            going, batched_matmul(sub, x, x), x)
    _, r = b.while_loop(cond, body, (b.constant(np.int32(0)), r),
                        max_trip_count=MAX_SQUARINGS)
    return _nan_where(b, b.gt(s, _full(b, MAX_SQUARINGS, s)), r)


def expm(b: Builder, a) -> Value:
    """scipy.linalg.expm(A): the matrix exponential of each matrix of the stack."""
    x = lift(b, a)
    if x.size == 1 and x.ndim < 2:   # SciPy: np.array([[np.exp(a.item())]])
        wide = np.complex128 if dtypes.is_complex(x.dtype) else np.float64
        return b.reshape(b.exp(b.convert(x, wide)), (1, 1))
    if x.ndim < 2:
        raise b.error(PSCShapeError, "The input array must be at least two-dimensional")
    if x.shape[-1] != x.shape[-2]:
        raise b.error(PSCShapeError, "Last 2 dimensions of the array must be square")
    dtype = x.dtype if dtypes.is_inexact(x.dtype) else np.dtype(np.float64)
    dtype = np.dtype(np.float32) if dtype == np.float16 else dtype
    if dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise b.error(PSCTypeError, f"scipy.linalg.expm: unsupported dtype {x.dtype}")
    if x.shape[-2:] == (1, 1) and x.size:   # SciPy: np.exp(a), in np.exp's dtype
        return lookup_rule("numpy.exp")(b, x)
    if x.size == 0:
        return _zeros(b, x.shape, dtype)
    return _expm_matrices(b, b.convert(x, dtype))


# --- eigh ---------------------------------------------------------------------------------


def eigh(bld: Builder, a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False,
         overwrite_b=False, type=1, check_finite=True, subset_by_index=None,
         subset_by_value=None, driver=None):
    """scipy.linalg.eigh of one Hermitian matrix (stack): the numpy.linalg.eigh rule,
    looked up when called (it lives in another module)."""
    b, b_matrix = bld, b
    if b_matrix is not None or type != 1 or subset_by_index is not None or \
            subset_by_value is not None or driver is not None:
        raise b.error(PSCUnsupportedCallError, "scipy.linalg.eigh: only the standard "
                      "problem is supported (no b, type, subset_by_* or driver)")
    rule = lookup_rule("numpy.linalg.eigh")
    if rule is None:
        raise b.error(PSCUnsupportedCallError, "scipy.linalg.eigh needs the "
                      "numpy.linalg.eigh rule, which this build does not have")
    w, v = rule(b, a, UPLO="L" if _flag(b, lower, "lower") else "U")
    return w if _flag(b, eigvals_only, "eigvals_only") else (w, v)


for _name, _rule in [("solve_triangular", solve_triangular), ("cho_factor", cho_factor),
                     ("cho_solve", cho_solve), ("lu_factor", lu_factor),
                     ("lu_solve", lu_solve), ("expm", expm), ("eigh", eigh)]:
    register_translation_rule(f"scipy.linalg.{_name}", _rule)
