"""``np.linalg.solve``, ``inv``, ``cholesky``, ``det`` and ``slogdet``, on the ``solve``,
``cholesky`` and ``lu`` primitives (jaxlib's LAPACK kernels: `runtime.primitives.linalg`).

NumPy semantics kept: the common type (``numpy.linalg._commonType``): integer and bool
arrays compute in float64, float32/complex64 stay single precision unless another operand
is double, float16 and longdouble are refused (TypeError, as NumPy); stacks of matrices
(..., n, n) broadcast against ``b``'s leading dimensions; NumPy 2's rule for ``b``: a
vector (n,) only when it is exactly 1-d, otherwise a stack of (n, k) matrices.  ``cholesky``
reads only the lower triangle (``upper=True`` gives the conjugate transpose).

Where NumPy raises ``LinAlgError`` at run time (a singular matrix for solve/inv, one not
positive definite for cholesky), the compiled program gives NaN for that matrix's whole
result, as jax does; under ``checks="nan"`` that NaN (from finite inputs) raises
`PSCFloatingPointError` at the call.  ``det``/``slogdet`` are differentiable through the
``lu`` primitive's JVP (`runtime.primitives.decompositions`); at an exactly singular
matrix their derivative is NaN (jax's det uses cofactors there).  Shape errors NumPy reports as ``LinAlgError`` (a
``ValueError``) are `PSCShapeError` here.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..errors import PSCShapeError, PSCTypeError, PSCUnsupportedCallError
from ..ir import Value
from ..primitives.linalg import cholesky as _cholesky_op
from ..primitives.linalg import matrix_transpose
from ..primitives.linalg import solve as _solve_op
from ..translation import register_translation_rule
from ._core import broadcast_shapes, broadcast_to, is_traced_sequence, lift, sequence_dtype

# NumPy's result type (a named tuple: ``.sign``, ``.logabsdet``), where it can be found
_SLOGDET_RESULT = getattr(getattr(np.linalg, "_linalg", None), "SlogdetResult", tuple)
_SLOGDET_RESULT = _SLOGDET_RESULT if _SLOGDET_RESULT is not tuple else (lambda *r: r)


def _dtype_of(x) -> np.dtype:
    if is_traced_sequence(x):
        return sequence_dtype(x)
    return x.dtype if isinstance(x, Value) else np.asarray(x).dtype


def common_type(b: Builder, name: str, args) -> np.dtype:
    """``numpy.linalg._commonType``: the LAPACK dtype the operands compute in."""
    double, complex_ = False, False
    for arg in args:
        dtype = _dtype_of(arg)
        if dtypes.is_inexact(dtype):
            complex_ |= dtypes.is_complex(dtype)
            real = dtypes.real_dtype(dtype) if dtypes.is_complex(dtype) else dtype
            if real not in (np.dtype(np.float32), np.dtype(np.float64)):
                raise b.error(PSCTypeError, f"{name}: array type {dtype} is unsupported "
                              "in linalg", "convert to float32 or float64 first")
            double |= real == np.float64
        else:
            double = True
    if complex_:
        return np.dtype(np.complex128 if double else np.complex64)
    return np.dtype(np.float64 if double else np.float32)


def _square_stack(b: Builder, name: str, a: Value) -> None:
    if a.ndim < 2:
        raise b.error(PSCShapeError, f"{name}: {a.ndim}-dimensional array given. Array "
                      "must be at least two-dimensional")
    if a.shape[-1] != a.shape[-2]:
        raise b.error(PSCShapeError, f"{name}: Last 2 dimensions of the array must be "
                      f"square, got shape {a.shape}")


def _zeros(b: Builder, shape, dtype) -> Value:
    return b.broadcast_in_dim(b.constant(np.zeros((), dtype)), shape, ())


def _solve_matrices(b: Builder, a: Value, rhs: Value) -> Value:
    """``solve`` of a (..., n, n) and rhs (..., n, k) after broadcasting the stacks."""
    batch = broadcast_shapes(b, a.shape[:-2], rhs.shape[:-2])
    a = broadcast_to(b, a, batch + a.shape[-2:])
    rhs = broadcast_to(b, rhs, batch + rhs.shape[-2:])
    if 0 in rhs.shape:   # nothing to factor (LAPACK is not called on empty arrays)
        return _zeros(b, rhs.shape, rhs.dtype)
    return _solve_op(b, a, rhs)


def solve(b: Builder, a, rhs) -> Value:
    """np.linalg.solve(a, b): ``x`` with ``a @ x == b``."""
    dtype = common_type(b, "solve", (a, rhs))
    a, rhs = lift(b, a, dtype), lift(b, rhs, dtype)
    _square_stack(b, "solve", a)
    n = a.shape[-1]
    vector = rhs.ndim == 1
    if vector:
        rhs = b.reshape(rhs, (rhs.shape[0], 1))
    if rhs.ndim < 2 or rhs.shape[-2] != n:
        raise b.error(PSCShapeError, f"solve: b of shape {rhs.shape} does not match a of "
                      f"shape {a.shape}", "b must be (n,) or (..., n, k) for a (..., n, n) "
                      "(NumPy 2 treats any b of 2 or more dimensions as a stack of matrices)")
    x = _solve_matrices(b, a, rhs)
    return b.reshape(x, x.shape[:-1]) if vector else x


def _identity_like(b: Builder, a: Value) -> Value:
    n = a.shape[-1]
    eye = b.constant(np.eye(n, dtype=a.dtype))
    return b.broadcast_in_dim(eye, a.shape, (a.ndim - 2, a.ndim - 1))


def inv(b: Builder, a) -> Value:
    """np.linalg.inv(a): ``solve(a, I)`` for each matrix of the stack."""
    dtype = common_type(b, "inv", (a,))
    a = lift(b, a, dtype)
    _square_stack(b, "inv", a)
    return _solve_matrices(b, a, _identity_like(b, a))


def cholesky(b: Builder, a, *, upper=False) -> Value:
    """np.linalg.cholesky(a, upper=False): the lower factor (the lower triangle of ``a`` is
    read); ``upper=True``: its conjugate transpose."""
    dtype = common_type(b, "cholesky", (a,))
    a = lift(b, a, dtype)
    _square_stack(b, "cholesky", a)
    if 0 in a.shape:
        return _zeros(b, a.shape, a.dtype)
    if not upper:
        return _cholesky_op(b, a)
    if dtypes.is_complex(a.dtype):   # (the builder has no conj)
        raise b.error(PSCUnsupportedCallError, "np.linalg.cholesky(..., upper=True) of a "
                      "complex matrix is not supported", "use the lower factor")
    # NumPy reads the upper triangle: the lower one of aᵀ, whose factor is Uᵀ
    return matrix_transpose(b, _cholesky_op(b, matrix_transpose(b, a)))


# --- det and slogdet: one LU factorization ---------------------------------------------------


def _lu_diagonal_and_parity(b: Builder, name: str, a):
    """(U's diagonal (..., n), the permutation's sign ±1 in a's dtype) of ``a``'s LU."""
    dtype = common_type(b, name, (a,))
    a = lift(b, a, dtype)
    _square_stack(b, name, a)
    r = a.ndim
    if 0 in a.shape:   # det of a 0x0 matrix is 1 (an empty product)
        diag = _zeros(b, a.shape[:-1], a.dtype)
        return diag, b.broadcast_in_dim(b.constant(np.ones((), a.dtype)), a.shape[:-2], ())
    factors, pivots, _ = b.emit("lu", [a])
    on_diagonal = b.eq(b.iota(a.shape, np.int32, r - 2), b.iota(a.shape, np.int32, r - 1))
    diag = b.reduce(b.select(on_diagonal, factors, _zeros(b, a.shape, a.dtype)), "sum",
                    (r - 1,))
    position = b.add(b.iota(pivots.shape, np.int32, r - 2),
                     b.broadcast_in_dim(b.constant(np.int32(1)), pivots.shape, ()))
    swaps = b.reduce(b.convert(b.ne(pivots, position), np.int32), "sum", (r - 2,))
    odd = b.eq(b.rem(swaps, b.broadcast_in_dim(b.constant(np.int32(2)), swaps.shape, ())),
               b.broadcast_in_dim(b.constant(np.int32(1)), swaps.shape, ()))
    one = b.broadcast_in_dim(b.constant(np.ones((), a.dtype)), swaps.shape, ())
    return diag, b.select(odd, b.neg(one), one)


def det(b: Builder, a) -> Value:
    """np.linalg.det: the product of U's diagonal times the sign of the row permutation
    (a singular matrix gives 0, as in NumPy)."""
    diag, sign = _lu_diagonal_and_parity(b, "det", a)
    return b.mul(sign, b.reduce(diag, "prod", (diag.ndim - 1,)))


def slogdet(b: Builder, a):
    """np.linalg.slogdet: (sign, log|det|) from the same factorization; a singular matrix
    gives (0, -inf), as NumPy."""
    diag, sign = _lu_diagonal_and_parity(b, "slogdet", a)
    last = diag.ndim - 1
    size = b.abs(diag)
    logabsdet = b.reduce(b.log(size), "sum", (last,))
    if dtypes.is_complex(diag.dtype):
        unit = b.div(diag, b.convert(size, diag.dtype))
    else:
        unit = b.sign(diag)
    sign = b.mul(sign, b.reduce(unit, "prod", (last,)))
    zero = b.eq(size, _zeros(b, size.shape, size.dtype))
    singular = b.reduce(zero, "or", (last,))
    sign = b.select(singular, _zeros(b, sign.shape, sign.dtype), sign)
    return _SLOGDET_RESULT(sign, logabsdet)


for _name, _rule in [("numpy.linalg.solve", solve), ("numpy.linalg.inv", inv),
                     ("numpy.linalg.cholesky", cholesky),
                     ("numpy.linalg.det", det), ("numpy.linalg.slogdet", slogdet)]:
    register_translation_rule(_name, _rule)
