"""``np.linalg.qr``, ``eigh``, ``eigvalsh``, ``eig``, ``eigvals`` and ``np.roots``, on the
LAPACK primitives of `runtime.primitives.decompositions` (jaxlib's kernels, CPU).

NumPy semantics kept: the common type of ``numpy.linalg._commonType`` (integers and bool
compute in float64, float16 refused); stacks of matrices (..., m, n); empty matrices (no
LAPACK call: the results NumPy gives); NumPy's named tuples (``QRResult``,
``EighResult``, ``EigResult``: ``q, r = np.linalg.qr(a)`` and ``.Q``/``.eigenvalues``...).

* ``qr(a, mode)``: every mode ('reduced', 'complete', 'r', 'raw'; the deprecated 'full'/'f'
  is 'reduced' with NumPy's DeprecationWarning; 'economic' is refused).  LAPACK's
  Householder QR, the kernel NumPy calls: the same signs.  Differentiable except
  ``mode='raw'``.
* ``eigh``/``eigvalsh(a, UPLO)``: only the UPLO triangle is read (and the diagonal's real
  part); eigenvalues ascending, real dtype.  Eigenvectors come from ``?syevd``/``?heevd``
  (NumPy's kernel): a column may differ from NumPy's by a sign (a phase for complex).
* ``eig``/``eigvals``: DOCUMENTED DEVIATION: the eigenvalues (and eigenvectors) are always
  complex.  NumPy returns a real dtype for a real matrix whose eigenvalues all happen to
  be real, a type that depends on the data and cannot be compiled; the values are the
  same (imaginary parts 0).  A build-time `PSCDtypeDeviationWarning` says so for real
  inputs.  Eigenvectors: unit 2-norm, as NumPy (a column may differ by a phase).
  Derivatives: of the eigenvalues only; those of the eigenvectors are refused.
* ``roots(p)``: the eigenvalues of the companion matrix, as NumPy.  NumPy strips leading
  zeros (fewer roots: a data-dependent shape) and appends trailing zeros' roots last.
  Here ``p[0]`` must be nonzero: when it is 0 at run time every root is NaN (under
  ``checks="nan"``: an error); trailing zeros give their roots (0) among the others, in
  LAPACK's order.  Complex, as ``eigvals`` (same warning).

Where NumPy raises ``LinAlgError`` at run time (no convergence), the matrix's results are
NaN, as jax.
"""
from __future__ import annotations

import collections
import warnings

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..errors import PSCShapeError, PSCTypeError, PSCUnsupportedCallError, PSCValueError
from ..ir import Value
from ..primitives.linalg import matrix_transpose
from ..translation import register_translation_rule
from ._core import lift
from .decompositions import common_type

_LINALG = getattr(np.linalg, "_linalg", np.linalg)


def _result_type(name: str, fields):
    found = getattr(_LINALG, name, None)
    return found if found is not None else collections.namedtuple(name, fields)


QRResult = _result_type("QRResult", "Q R")
EighResult = _result_type("EighResult", "eigenvalues eigenvectors")
EigResult = _result_type("EigResult", "eigenvalues eigenvectors")

COVERAGE_NOTES = {
    "numpy.linalg.eig": "partial: always complex results (NumPy: real when every eigenvalue "
                        "is real, a data-dependent dtype); eigenvector derivatives refused; CPU only",
    "numpy.linalg.eigvals": "partial: always complex (NumPy: real when every eigenvalue is "
                            "real, a data-dependent dtype); CPU only",
    "numpy.roots": "partial: always complex; p[0] must be nonzero (NaN otherwise, where NumPy "
                   "strips leading zeros); trailing zeros' roots are not moved last; CPU only",
    "numpy.linalg.qr": "partial: mode='economic' (deprecated) refused; mode='raw' has no "
                       "derivative",
}


class PSCDtypeDeviationWarning(UserWarning):
    """A result dtype that differs from NumPy's by a documented rule (eig's complex)."""


def _warn_complex(name: str, dtype) -> None:
    if not dtypes.is_complex(dtype):
        warnings.warn(f"{name} of a real matrix returns complex values here; NumPy returns "
                      "a real dtype when every eigenvalue is real (a data-dependent type "
                      "a compiled program cannot have)", PSCDtypeDeviationWarning,
                      stacklevel=4)


def _matrices(b: Builder, name: str, a, square: bool) -> Value:
    dtype = common_type(b, name, (a,))
    a = lift(b, a, dtype)
    if a.ndim < 2:
        raise b.error(PSCShapeError, f"{name}: {a.ndim}-dimensional array given. Array "
                      "must be at least two-dimensional")
    if square and a.shape[-1] != a.shape[-2]:
        raise b.error(PSCShapeError, f"{name}: Last 2 dimensions of the array must be "
                      f"square, got shape {a.shape}")
    return a


def _full(b: Builder, value, shape, dtype) -> Value:
    return b.broadcast_in_dim(b.constant(np.asarray(value, dtype)), tuple(shape), ())


def _eye(b: Builder, batch, m, k, dtype) -> Value:
    eye = b.constant(np.eye(m, k, dtype=dtype))
    return b.broadcast_in_dim(eye, tuple(batch) + (m, k), (len(batch), len(batch) + 1))


def _static_string(b: Builder, x, name: str, what: str) -> str:
    if not isinstance(x, str):
        raise b.error(PSCTypeError, f"{name}: {what} must be a string, got "
                      f"{type(x).__name__}")
    return x


# --- qr -------------------------------------------------------------------------------------


def _qr_mode(b: Builder, mode) -> str:
    mode = _static_string(b, mode, "np.linalg.qr", "mode")
    if mode in ("f", "full"):
        warnings.warn("The 'full' option is deprecated in favor of 'reduced'.\n"
                      "For backward compatibility let mode default.", DeprecationWarning,
                      stacklevel=4)
        return "reduced"
    if mode in ("e", "economic"):
        raise b.error(PSCUnsupportedCallError, "np.linalg.qr(..., mode='economic') (deprecated "
                      "in NumPy) is not supported", "use mode='raw' or 'reduced'")
    if mode not in ("reduced", "complete", "r", "raw"):
        raise b.error(PSCValueError, f"Unrecognized mode '{mode}'",
                      "mode is 'reduced', 'complete', 'r' or 'raw'")
    return mode


def _qr_empty(b: Builder, a: Value, mode: str):
    *batch, m, n = a.shape
    k = min(m, n)
    if mode == "raw":
        return (_full(b, 0, tuple(batch) + (n, m), a.dtype),
                _full(b, 0, tuple(batch) + (k,), a.dtype))
    kq = m if mode == "complete" else k
    r = _full(b, 0, tuple(batch) + (kq, n), a.dtype)
    return r if mode == "r" else QRResult(_eye(b, batch, m, kq, a.dtype), r)


def qr(b: Builder, a, mode="reduced"):
    """np.linalg.qr(a, mode): ``QRResult(Q, R)``, ``R`` alone ('r'), or LAPACK's ``(h,
    tau)`` ('raw': ``h`` the transpose of the packed factorization, as NumPy)."""
    mode = _qr_mode(b, mode)
    a = _matrices(b, "qr", a, square=False)
    if 0 in a.shape:
        return _qr_empty(b, a, mode)
    if mode == "raw":
        packed, taus = b.emit("geqrf", [a])
        return matrix_transpose(b, packed), taus
    q, r = b.emit("qr", [a], full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


# --- eigh and eigvalsh ------------------------------------------------------------------


def _uplo(b: Builder, name: str, uplo) -> bool:
    """Whether the lower triangle is read."""
    uplo = _static_string(b, uplo, name, "UPLO").upper()
    if uplo not in ("L", "U"):
        raise b.error(PSCValueError, "UPLO argument must be 'L' or 'U'")
    return uplo == "L"


def _eigh(b: Builder, name: str, a, uplo):
    lower = _uplo(b, name, uplo)
    a = _matrices(b, name, a, square=True)
    real = dtypes.real_dtype(a.dtype) if dtypes.is_complex(a.dtype) else a.dtype
    if 0 in a.shape:
        return _full(b, 0, a.shape[:-1], real), _full(b, 0, a.shape, a.dtype)
    v, w = b.emit("eigh", [a], lower=lower)
    return w, v


def eigh(b: Builder, a, UPLO="L"):
    """np.linalg.eigh(a, UPLO): ``EighResult(eigenvalues, eigenvectors)``."""
    return EighResult(*_eigh(b, "eigh", a, UPLO))


def eigvalsh(b: Builder, a, UPLO="L"):
    """np.linalg.eigvalsh(a, UPLO): the ascending eigenvalues."""
    return _eigh(b, "eigvalsh", a, UPLO)[0]


# --- eig and eigvals ----------------------------------------------------------------------


def _complex_of(dtype) -> np.dtype:
    return np.dtype(np.complex64 if dtype in (np.float32, np.complex64) else np.complex128)


def _eig(b: Builder, name: str, a, vectors: bool):
    a = _matrices(b, name, a, square=True)
    if 0 in a.shape:   # no eigenvalue: NumPy keeps the (real or complex) input type
        w = _full(b, 0, a.shape[:-1], a.dtype)
        return (w, _full(b, 0, a.shape, a.dtype)) if vectors else (w,)
    _warn_complex(f"np.linalg.{name}", a.dtype)
    return tuple(b.emit("eig", [a], vectors=vectors))


def eig(b: Builder, a):
    """np.linalg.eig(a): ``EigResult(eigenvalues, eigenvectors)``, complex."""
    return EigResult(*_eig(b, "eig", a, vectors=True))


def eigvals(b: Builder, a):
    """np.linalg.eigvals(a): the eigenvalues, complex, in LAPACK's order."""
    return _eig(b, "eigvals", a, vectors=False)[0]


# --- roots ----------------------------------------------------------------------------------


def roots(b: Builder, p):
    """np.roots(p): the eigenvalues of the companion matrix of ``p`` (``p[0]`` ≠ 0)."""
    dtype = common_type(b, "roots", (p,))
    p = lift(b, p, dtype)
    if p.ndim != 1:
        raise b.error(PSCValueError, "Input must be a rank-1 array.")
    n = p.shape[0] - 1
    if n < 1:
        return b.constant(np.zeros(0))
    lead = b.slice(p, (0,), (1,))
    first_row = b.neg(b.div(b.slice(p, (1,), (n + 1,)), b.broadcast_in_dim(lead, (n,), (0,))))
    below = b.constant(np.eye(n, k=-1, dtype=dtype)[1:])
    companion = b.concatenate([b.reshape(first_row, (1, n)), below], 0)
    _warn_complex("np.roots", dtype)
    (w,) = b.emit("eig", [companion], vectors=False)
    # a zero leading coefficient: NumPy strips it (fewer roots); NaN says it was there
    zero = b.eq(b.broadcast_in_dim(b.reshape(lead, ()), (n,), ()), _full(b, 0, (n,), dtype))
    return b.select(zero, _full(b, np.nan, (n,), w.dtype), w)


for _name, _rule in [("numpy.linalg.qr", qr), ("numpy.linalg.eigh", eigh),
                     ("numpy.linalg.eigvalsh", eigvalsh), ("numpy.linalg.eig", eig),
                     ("numpy.linalg.eigvals", eigvals), ("numpy.roots", roots)]:
    register_translation_rule(_name, _rule)
