"""The singular value decomposition on CPU through jaxlib's LAPACK kernel: ``svd``.

``svd(a)``, ``a`` (..., m, n) float32/64 or complex64/128, neither m nor n zero (the NumPy
rules build empty decompositions themselves), k = min(m, n).  Attributes ``compute_uv``
and ``full_matrices``.  Results: ``s`` (..., k), real, descending; with ``compute_uv``
also ``u`` (..., m, m or k) and ``vt`` (..., n or k, n) with ``a == u diag(s) vt``
(``full_matrices`` picks the square factors).

Lowering: the FFI custom call jax itself uses on CPU, ``lapack_?gesdd_ffi`` (divide and
conquer), its ``mode`` attribute LAPACK's ``jobz`` ('A' full, 'S' reduced, 'N' values
only; with 'N' the kernel still takes reduced-size u and vt buffers, which are dropped).
Operands and matrix results are column-major, the leading dimensions are a batch
(``num_batch_dims``), as for `runtime.primitives.linalg`.  Where LAPACK reports failure
(``info`` ≠ 0, no convergence) that matrix's results are NaN, as in jax.

Derivatives (jax's ``svd_jvp_rule``, for the reduced factors; A = U S Vᴴ, F_ij =
1/(s_j² − s_i²) off the diagonal, 0 on it):

* JVP: ``dS = Uᴴ dA V``, ``ds = Re diag(dS)``; ``dU = U (F∘(dS S + S dSᴴ) + D)`` with D the
  diagonal ``i Im(dS_ii)/s_i`` (complex only), ``dV = V (F∘(S dS + dSᴴ S))``, plus
  ``(I − UUᴴ) dA V S⁻¹`` in dU when m > n and ``(I − VVᴴ) dAᴴ U S⁻¹`` in dV when n > m.
* VJP: its transpose under jax's convention for complex values (the pairing
  ``Re Σ x·y``, so the cotangent of ``a`` is the conjugate of the gradient
  ``G = U Γ Vᴴ + …``): with Gᵤ = conj(ū), Gᵥ = v̄tᵀ, J = UᴴGᵤ, K = VᴴGᵥ,
  ``Γ = diag(s̄) + (F∘(J − Jᴴ)) S + S (F∘(K − Kᴴ)) + ½ diag(J − Jᴴ) S⁻¹``, plus
  ``(I − UUᴴ) Gᵤ S⁻¹ Vᴴ`` when m > n and ``U S⁻¹ Gᵥᴴ (I − VVᴴ)`` when n > m.

Repeated singular values make F infinite (NaN derivatives), as in jax.  ``full_matrices``
with m ≠ n: the extra columns of U (or rows of Vt) are any basis of a complement, with no
derivative; forward mode is refused (as jax) and reverse mode is accepted only when those
factors get no cotangent (``s`` alone, the usual ``np.linalg.svd(a)[1]``).  ``compute_uv``
False: the derivative computes the vectors.  Batching moves the batch dimension first.
On GPU (CUDA/ROCm) `runtime.primitives.linalg_gpu` lowers it as jax does there: cuSOLVER's
Jacobi ``gesvdj`` up to 1024 × 1024, ``gesvd`` above (verified against jax's lowering
text, not run).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import PSCShapeError, PSCTypeError, PSCUnsupportedCallError
from ..lowering import dense_literal, i64_array, tensor_type, value_type
from ..primitive import batching_rule, checks, jvp_rule, lowers, vjp_rule
from .linalg import (LAPACK_DTYPES, column_major, row_major, LapackText, batched_matmul,
                     matrix_transpose, register_lapack_targets)
from .support import conj, const, fmt, require, to_front


def svd(b, a, *, full_matrices: bool = False, compute_uv: bool = True) -> list:
    """``[s, u, vt]`` (or ``[s]`` without ``compute_uv``) of the stack ``a``."""
    return b.emit("svd", [a], full_matrices=bool(full_matrices),
                  compute_uv=bool(compute_uv))


@checks("svd")
def _check_svd(operands, attrs):
    (a,) = operands
    require(a.dtype in LAPACK_DTYPES, PSCTypeError,
            f"svd needs a float32, float64, complex64 or complex128 operand, got {fmt(a)}")
    require(a.ndim >= 2 and 0 not in a.shape, PSCShapeError,
            f"svd needs a non-empty stack of matrices (..., m, n), got {fmt(a)}",
            "the NumPy rules build empty decompositions without LAPACK")
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    values = (batch + (k,), dtypes.real_dtype(a.dtype))
    if not attrs["compute_uv"]:
        return [values]
    full = attrs["full_matrices"]
    return [values, (batch + (m, m if full else k), a.dtype),
            (batch + (n if full else k, n), a.dtype)]


# --- lowering -----------------------------------------------------------------------------


def _nan_where_failed(t: LapackText, ok: str, batch, x: str, shape, dtype) -> str:
    """``x`` where ``ok`` (bool over the batch) holds, NaN elsewhere."""
    pred_t, x_t = tensor_type(shape, np.bool_), tensor_type(shape, dtype)
    spread = t.line("stablehlo.broadcast_in_dim", [ok], [tensor_type(batch, np.bool_)],
                    [pred_t], f"broadcast_dimensions = {i64_array(range(len(batch)))}")
    nan = t.line("stablehlo.constant", [], [], [x_t],
                 f"value = {dense_literal(np.full((), np.nan, dtype))} : {x_t}")
    return t.line("stablehlo.select", [spread, x, nan], [pred_t, x_t, x_t], [x_t])


@lowers("svd")
def _lower_svd(p, op):
    register_lapack_targets()
    (a,) = op.operands
    full, with_uv = op.attrs["full_matrices"], op.attrs["compute_uv"]
    r, batch, (m, n) = a.ndim, a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    mode = ("A" if full else "S") if with_uv else "N"
    wide = full and with_uv
    real = dtypes.real_dtype(a.dtype)
    shapes = [a.shape, batch + (k,), batch + (m, m if wide else k),
              batch + (n if wide else k, n), batch]
    types = [value_type(a), tensor_type(shapes[1], real), tensor_type(shapes[2], a.dtype),
             tensor_type(shapes[3], a.dtype), tensor_type(batch, np.int32)]
    layouts = [column_major(r), row_major(r - 1), column_major(r), column_major(r),
               row_major(r - 2)]
    t = LapackText(p, op)
    call = t.custom_call(
        f"lapack_{LAPACK_DTYPES[a.dtype]}gesdd_ffi", [p.name(a)], [value_type(a)], [r],
        list(zip(types, layouts)), f"mode = {ord(mode)} : ui8",
        aliases="#stablehlo.output_operand_alias<output_tuple_indices = [0], "
                "operand_index = 0, operand_tuple_indices = []>")
    info_t = tensor_type(batch, np.int32)
    zero = t.line("stablehlo.constant", [], [], [info_t],
                  f"value = {dense_literal(np.zeros(batch, np.int32))} : {info_t}")
    ok = t.line("stablehlo.compare", [f"{call}#4", zero], [info_t, info_t],
                [tensor_type(batch, np.bool_)],
                "comparison_direction = #stablehlo<comparison_direction EQ>, "
                "compare_type = #stablehlo<comparison_type SIGNED>")
    dtypes_ = [None, real, a.dtype, a.dtype]
    for result, i in zip(op.results, (1, 2, 3)):
        p.names[result] = _nan_where_failed(t, ok, batch, f"{call}#{i}", shapes[i],
                                            dtypes_[i])


# --- derivatives --------------------------------------------------------------------------


def adjoint(b, x):
    """The conjugate transpose of the last two dimensions."""
    swapped = matrix_transpose(b, x)
    return conj(b, swapped) if dtypes.is_complex(x.dtype) else swapped


def _along(b, v, like, dim: int):
    """The vector stack ``v`` (..., k) spread over ``like`` (..., i, j) along ``dim``
    (-1: ``v_j`` in every row, -2: ``v_i`` in every column), in ``like``'s dtype."""
    r = like.ndim
    v = b.convert(v, like.dtype)
    return b.broadcast_in_dim(v, like.shape, tuple(range(r - 2)) + (r + dim,))


def _diagonal_mask(b, like):
    r = like.ndim
    return b.eq(b.iota(like.shape, np.int32, r - 2), b.iota(like.shape, np.int32, r - 1))


def _diagonal_part(b, x):
    """``x`` with everything off the diagonal of its last two dimensions zeroed."""
    return b.select(_diagonal_mask(b, x), x, const(b, 0, x))


def _diagonal(b, x):
    """The diagonal (..., k) of the square stack ``x``."""
    return b.reduce(_diagonal_part(b, x), "sum", (x.ndim - 1,))


def _real(b, x):
    return b.convert(x, dtypes.real_dtype(x.dtype)) if dtypes.is_complex(x.dtype) else x


def _f_matrix(b, s, like):
    """F_ij = 1/((s_j + s_i)(s_j − s_i)) off the diagonal, 0 on it, in ``like``'s dtype."""
    square = b.broadcast_in_dim(s, s.shape + s.shape[-1:], tuple(range(s.ndim)))
    sj, si = _along(b, s, square, -1), _along(b, s, square, -2)
    f = b.div(const(b, 1, sj), b.mul(b.add(sj, si), b.sub(sj, si)))
    f = b.select(_diagonal_mask(b, f), const(b, 0, f), f)
    return b.convert(f, like.dtype)


def _inverse_or_zero(b, s):
    """1/s where s ≠ 0, 0 where s = 0 (jax's guard for the diagonal term)."""
    zero = b.eq(s, const(b, 0, s))
    return b.select(zero, const(b, 0, s), b.div(const(b, 1, s), b.select(zero, const(b, 1, s), s)))


def _refuse_full(a, what: str) -> None:
    m, n = a.shape[-2:]
    raise PSCUnsupportedCallError(
        f"the {what} of an SVD with full_matrices=True of a non-square matrix ({fmt(a)}) "
        "is not supported: the extra singular vectors are any basis of a complement",
        hint="use np.linalg.svd(..., full_matrices=False), or differentiate only S")


def _reduced(b, a):
    s, u, vt = svd(b, a, full_matrices=False, compute_uv=True)
    return s, u, vt


@jvp_rule("svd")
def _svd_jvp(b, op, primals, tangents):
    (a,), (da,) = primals, tangents
    full, with_uv = op.attrs["full_matrices"], op.attrs["compute_uv"]
    m, n = a.shape[-2:]
    if da is not None and with_uv and full and m != n:
        _refuse_full(a, "forward-mode derivative")
    if da is None:
        results = svd(b, a, full_matrices=full, compute_uv=with_uv)
        return results, [None] * len(results)
    s, u, vt = _reduced(b, a)
    v = adjoint(b, vt)
    ds_matrix = batched_matmul(b, batched_matmul(b, adjoint(b, u), da), v)
    ds = _real(b, _diagonal(b, ds_matrix))
    if not with_uv:
        return [s], [ds]
    f = _f_matrix(b, s, ds_matrix)
    dss = b.mul(ds_matrix, _along(b, s, ds_matrix, -1))    # dS S
    sds = b.mul(ds_matrix, _along(b, s, ds_matrix, -2))    # S dS
    inner_u = b.mul(f, b.add(dss, adjoint(b, dss)))
    if dtypes.is_complex(a.dtype):
        skew = _diagonal_part(b, b.sub(ds_matrix, adjoint(b, ds_matrix)))
        half_inv = b.mul(_inverse_or_zero(b, s), const(b, 0.5, s))
        inner_u = b.add(inner_u, b.mul(skew, _along(b, half_inv, skew, -2)))
    du = batched_matmul(b, u, inner_u)
    dv = batched_matmul(b, v, b.mul(f, b.add(sds, adjoint(b, sds))))
    if m > n:
        dav = batched_matmul(b, da, v)
        rest = b.sub(dav, batched_matmul(b, u, batched_matmul(b, adjoint(b, u), dav)))
        du = b.add(du, b.div(rest, _along(b, s, rest, -1)))
    if n > m:
        dahu = batched_matmul(b, adjoint(b, da), u)
        rest = b.sub(dahu, batched_matmul(b, v, batched_matmul(b, vt, dahu)))
        dv = b.add(dv, b.div(rest, _along(b, s, rest, -1)))
    return [s, u, vt], [ds, du, adjoint(b, dv)]


def _first_columns(b, x, k: int):
    return b.slice(x, [0] * x.ndim, x.shape[:-1] + (k,))


def _first_rows(b, x, k: int):
    return b.slice(x, [0] * x.ndim, x.shape[:-2] + (k, x.shape[-1]))


def _vjp_factors(b, op, a, results, cts):
    """(s, u, vt) reduced, and the cotangents (s̄, ū, v̄t) of those (None: zero)."""
    full, with_uv = op.attrs["full_matrices"], op.attrs["compute_uv"]
    m, n = a.shape[-2:]
    k = min(m, n)
    if not with_uv:
        return _reduced(b, a), (cts[0], None, None)
    ct_s, ct_u, ct_vt = cts
    s, u, vt = results
    if full and m != n:
        if ct_u is not None or ct_vt is not None:
            _refuse_full(a, "derivative of U or Vh")
        u, vt = _first_columns(b, u, k), _first_rows(b, vt, k)
    return (s, u, vt), (ct_s, ct_u, ct_vt)


@vjp_rule("svd")
def _svd_vjp(b, op, primals, results, cts):
    (a,) = primals
    (s, u, vt), (ct_s, ct_u, ct_vt) = _vjp_factors(b, op, a, results, cts)
    m, n = a.shape[-2:]
    k = min(m, n)
    square_shape = a.shape[:-2] + (k, k)
    zero = b.broadcast_in_dim(b.constant(np.zeros((), a.dtype)), square_shape, ())
    gamma = zero if ct_s is None else _diagonal_part(b, _along(b, ct_s, zero, -1))
    g_u = None if ct_u is None else (conj(b, ct_u) if dtypes.is_complex(a.dtype) else ct_u)
    g_v = None if ct_vt is None else matrix_transpose(b, ct_vt)
    if g_u is not None or g_v is not None:
        f = _f_matrix(b, s, zero)
    if g_u is not None:
        j = batched_matmul(b, adjoint(b, u), g_u)
        skew = b.sub(j, adjoint(b, j))
        gamma = b.add(gamma, b.mul(b.mul(f, skew), _along(b, s, skew, -1)))
        if dtypes.is_complex(a.dtype):
            half_inv = b.mul(_inverse_or_zero(b, s), const(b, 0.5, s))
            gamma = b.add(gamma, b.mul(_diagonal_part(b, skew), _along(b, half_inv, skew, -2)))
    if g_v is not None:
        kk = batched_matmul(b, vt, g_v)
        skew = b.sub(kk, adjoint(b, kk))
        gamma = b.add(gamma, b.mul(b.mul(f, skew), _along(b, s, skew, -2)))
    left = batched_matmul(b, u, gamma)                       # U Γ, then (…) Vᴴ below
    if g_u is not None and m > n:
        rest = b.sub(g_u, batched_matmul(b, u, batched_matmul(b, adjoint(b, u), g_u)))
        left = b.add(left, b.div(rest, _along(b, s, rest, -1)))
    grad = batched_matmul(b, left, vt)
    if g_v is not None and n > m:
        x = b.div(adjoint(b, g_v), _along(b, s, adjoint(b, g_v), -2))    # S⁻¹ Gᵥᴴ
        x = b.sub(x, batched_matmul(b, batched_matmul(b, x, adjoint(b, vt)), vt))
        grad = b.add(grad, batched_matmul(b, u, x))
    return [conj(b, grad) if dtypes.is_complex(a.dtype) else grad]


# --- batching -----------------------------------------------------------------------------


@batching_rule("svd")
def _batch_svd(b, op, operands, dims):
    results = b.emit("svd", [to_front(b, operands[0], dims[0])], **op.attrs)
    return results, [0] * len(results)
