"""Matrix factorizations on CPU through jaxlib's LAPACK kernels: ``qr``, ``geqrf``,
``eigh`` and ``eig``, and the derivative rules of ``lu`` (`runtime.primitives.linalg`).

They lower to the XLA FFI custom calls jax uses on CPU, with the conventions of
`runtime.primitives.linalg` (column-major matrices, leading dimensions a LAPACK batch,
``info`` ≠ 0 turning that matrix's results into NaN):

* ``qr(a, full_matrices)``: ``a`` (..., m, n) -> ``q`` (..., m, k), ``r`` (..., k, n) with
  k = m when ``full_matrices`` else min(m, n): ``lapack_?geqrf_ffi`` (Householder
  reflectors below R), then ``lapack_?orgqr_ffi``/``?ungqr`` forms Q from them (from the
  reflectors padded with zero columns to (m, m) for the complete Q of a tall matrix).
* ``geqrf(a)``: LAPACK's packed factorization and the reflectors' scalars ``tau``
  (NumPy's ``mode='raw'``); no derivative (refused, never zero).
* ``eigh(a, lower)``: ``lapack_?syevd_ffi``/``?heevd``: eigenvectors ``v`` (..., n, n) and
  ascending real eigenvalues ``w`` (..., n), reading only the lower (or upper) triangle
  (and the real part of the diagonal), as NumPy.
* ``eig(a, vectors)``: ``lapack_?geev_ffi``: complex eigenvalues (..., n), and with
  ``vectors`` the right eigenvectors (unit 2-norm, largest component real: LAPACK's).

Derivatives (the formulas of jax's ``jax/_src/lax/linalg.py``):

* qr: with ``C = Qᴴ dA R⁻¹`` and ``Ω`` its strict lower part minus that part's adjoint
  (plus the imaginary part of C's diagonal), ``dQ = Q (Ω − C) + dA R⁻¹``,
  ``dR = (C − Ω) R`` for m ≥ n; wide matrices differentiate their square left block and
  ``R₂ = Qᴴ A₂``; the complete Q of a tall matrix follows arXiv:2409.13374 (it needs
  ``Q₁₁ − I`` invertible, as jax's).
* eigh: ``dA`` symmetrized the way LAPACK reads ``a``; ``dw = Re diag(Vᴴ dA V)``,
  ``dV = V (F ∘ Vᴴ dA V)`` with ``F_ij = 1/(w_j − w_i)`` off the diagonal: distinct
  eigenvalues only (degenerate ones give inf/NaN in ``dV``, as jax; ``dw`` stays finite).
* eig: eigenvalues only, ``dw = diag(V⁻¹ dA V)``; the derivative of the eigenvectors is
  refused (`PSCUnsupportedCallError`; jax also refuses it by default).  A VJP whose
  eigenvector cotangent is zero (the eigenvectors unused) is fine.
* lu: with ``P A = L U`` (P from the pivots), ``X = L⁻¹ P dA U⁻¹``,
  ``dLU = L tril(X, −1) + triu(X) U``: ``np.linalg.det``/``slogdet`` differentiate
  through it (an exactly singular matrix gives NaN; jax's det uses cofactors there).

Every VJP is the transpose of the JVP's tangent map (traced as a region and run
backwards, as `runtime.primitives.custom_derivatives` transposes a custom JVP): one
formula per primitive, both modes.  Batching: the batch dimension moves to the front and
becomes one more LAPACK batch dimension.  On GPU (CUDA/ROCm) `runtime.primitives.linalg_gpu`
lowers qr, geqrf and eigh to cuSOLVER's ``geqrf``/``orgqr``/``syevd`` (verified against
jax's lowering text, not run) and refuses eig.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autodiff.reverse import backward_pass, forward_pass
from ..autodiff.tangents import is_float, zeros_like
from ..autodiff.trace import trace
from ..context import current_builder
from ..errors import PSCShapeError, PSCUnsupportedCallError
from ..lowering import tensor_type, value_type
from ..primitive import batching_rule, checks, jvp_rule, lowers, vjp_rule
from .custom_derivatives import _linear_part
from .linalg import (LAPACK_DTYPES, _byte, _check_matrix, column_major, row_major, LapackText,
                     batched_matmul, matrix_transpose, register_lapack_targets, solve)
from .support import conj, const, fmt, require, to_front

# --- checks -------------------------------------------------------------------------------


def _check_rectangular(name: str, a) -> None:
    require(a.dtype in LAPACK_DTYPES and a.ndim >= 2, PSCShapeError,
            f"{name} needs float32/64 or complex64/128 matrices (..., m, n), got {fmt(a)}")
    require(0 not in a.shape[-2:], PSCShapeError,
            f"{name} needs non-empty matrices, got {fmt(a)} (the NumPy rules build "
            "empty results without LAPACK)")


@checks("qr")
def _check_qr(operands, attrs):
    (a,) = operands
    _check_rectangular("qr", a)
    *batch, m, n = a.shape
    k = m if attrs["full_matrices"] else min(m, n)
    return [(tuple(batch) + (m, k), a.dtype), (tuple(batch) + (k, n), a.dtype)]


@checks("geqrf")
def _check_geqrf(operands, attrs):
    (a,) = operands
    _check_rectangular("geqrf", a)
    return [(a.shape, a.dtype), (a.shape[:-2] + (min(a.shape[-2:]),), a.dtype)]


@checks("eigh")
def _check_eigh(operands, attrs):
    (a,) = operands
    _check_matrix("eigh", a)
    return [(a.shape, a.dtype), (a.shape[:-1], dtypes.real_dtype(a.dtype))]


def _complex(dtype) -> np.dtype:
    return np.dtype(np.complex64 if dtype in (np.float32, np.complex64) else np.complex128)


@checks("eig")
def _check_eig(operands, attrs):
    (a,) = operands
    _check_matrix("eig", a)
    out = [(a.shape[:-1], _complex(a.dtype))]
    return out + [(a.shape, _complex(a.dtype))] if attrs["vectors"] else out


# --- lowering -----------------------------------------------------------------------------

_ALIAS_FIRST = ("#stablehlo.output_operand_alias<output_tuple_indices = [0], "
                "operand_index = 0, operand_tuple_indices = []>")
_ALIAS_ONLY = ("#stablehlo.output_operand_alias<output_tuple_indices = [], "
               "operand_index = 0, operand_tuple_indices = []>")


def _geqrf(t, p, a):
    """The custom call: (packed factors, taus) names."""
    r, k = a.ndim, min(a.shape[-2:])
    a_t = value_type(a)
    out = t.custom_call(f"lapack_{LAPACK_DTYPES[a.dtype]}geqrf_ffi", [p.name(a)], [a_t], [r],
                        [(a_t, column_major(r)),
                         (tensor_type(a.shape[:-2] + (k,), a.dtype), row_major(r - 1))],
                        aliases=_ALIAS_FIRST)
    return f"{out}#0", f"{out}#1"


def _slice(t, x, shape, dtype, limits):
    r = len(shape)
    return t.line("stablehlo.slice", [x], [tensor_type(shape, dtype)],
                  [tensor_type(limits, dtype)],
                  f"start_indices = array<i64: {', '.join(['0'] * r)}>, "
                  f"limit_indices = array<i64: {', '.join(map(str, limits))}>, "
                  f"strides = array<i64: {', '.join(['1'] * r)}>")


def _upper(t, x, shape, dtype):
    """``x`` with its strict lower triangle zeroed."""
    r = len(shape)
    index_t, pred_t, x_t = (tensor_type(shape, d) for d in (np.int32, np.bool_, dtype))
    rows = t.line("stablehlo.iota", [], [], [index_t], f"iota_dimension = {r - 2} : i64")
    cols = t.line("stablehlo.iota", [], [], [index_t], f"iota_dimension = {r - 1} : i64")
    keep = t.line("stablehlo.compare", [rows, cols], [index_t, index_t], [pred_t],
                  "comparison_direction = #stablehlo<comparison_direction LE>, "
                  "compare_type = #stablehlo<comparison_type SIGNED>")
    zero = t.line("stablehlo.constant", [], [], [x_t],
                  f"value = dense<{'(0.0, 0.0)' if np.dtype(dtype).kind == 'c' else '0.0'}>"
                  f" : {x_t}")
    return t.line("stablehlo.select", [keep, x, zero], [pred_t, x_t, x_t], [x_t])


@lowers("qr")
def _lower_qr(p, op):
    register_lapack_targets()
    (a,), (q, r_out) = op.operands, op.results
    t = LapackText(p, op)
    rank, batch, (m, n), dtype = a.ndim, a.shape[:-2], a.shape[-2:], a.dtype
    packed, taus = _geqrf(t, p, a)
    source, source_shape = packed, a.shape
    if m < n:                      # the reflectors are the first m columns
        source_shape = batch + (m, m)
        source = _slice(t, packed, a.shape, dtype, source_shape)
    elif op.attrs["full_matrices"] and m > n:   # complete Q: zero columns, no reflector
        source_shape = batch + (m, m)
        zero = t.line("stablehlo.constant", [], [], [tensor_type((), dtype)],
                      f"value = dense<{'(0.0, 0.0)' if dtype.kind == 'c' else '0.0'}> : "
                      f"{tensor_type((), dtype)}")
        source = t.line("stablehlo.pad", [packed, zero],
                        [tensor_type(a.shape, dtype), tensor_type((), dtype)],
                        [tensor_type(source_shape, dtype)],
                        f"edge_padding_low = array<i64: {', '.join(['0'] * rank)}>, "
                        f"edge_padding_high = array<i64: "
                        f"{', '.join(['0'] * (rank - 1) + [str(m - n)])}>, "
                        f"interior_padding = array<i64: {', '.join(['0'] * rank)}>")
    prefix = LAPACK_DTYPES[dtype] + ("ungqr" if dtype.kind == "c" else "orgqr")
    source_t = tensor_type(source_shape, dtype)
    taus_t = tensor_type(batch + (min(m, n),), dtype)
    p.names[q] = t.custom_call(f"lapack_{prefix}_ffi", [source, taus], [source_t, taus_t],
                               [rank, rank - 1], [(source_t, column_major(rank))],
                               aliases=_ALIAS_ONLY,
                               operand_layouts=[column_major(rank), row_major(rank - 1)])
    r_source = packed
    if r_out.shape != a.shape:     # reduced R of a tall matrix: its first n rows
        r_source = _slice(t, packed, a.shape, dtype, r_out.shape)
    p.names[r_out] = _upper(t, r_source, r_out.shape, dtype)


@lowers("geqrf")
def _lower_geqrf(p, op):
    register_lapack_targets()
    (a,) = op.operands
    packed, taus = _geqrf(LapackText(p, op), p, a)
    p.names[op.results[0]], p.names[op.results[1]] = packed, taus


@lowers("eigh")
def _lower_eigh(p, op):
    register_lapack_targets()
    (a,), (v, w) = op.operands, op.results
    t = LapackText(p, op)
    r, batch = a.ndim, a.shape[:-2]
    kind = "heevd" if a.dtype.kind == "c" else "syevd"
    a_t = value_type(a)
    config = f"mode = {_byte('V')}, uplo = {_byte('L' if op.attrs['lower'] else 'U')}"
    out = t.custom_call(f"lapack_{LAPACK_DTYPES[a.dtype]}{kind}_ffi", [p.name(a)], [a_t], [r],
                        [(a_t, column_major(r)), (value_type(w), row_major(r - 1)),
                         (tensor_type(batch, np.int32), row_major(r - 2))],
                        config, aliases=_ALIAS_FIRST)
    p.names[v] = t.ok_or_nan(f"{out}#2", f"{out}#0", v.shape, v.dtype)
    p.names[w] = t.ok_or_nan(f"{out}#2", f"{out}#1", w.shape, w.dtype, len(batch))


@lowers("eig")
def _lower_eig(p, op):
    register_lapack_targets()
    (a,) = op.operands
    t = LapackText(p, op)
    r, batch = a.ndim, a.shape[:-2]
    real = a.dtype.kind == "f"
    w_t = tensor_type(a.shape[:-1], a.dtype)
    vec_t = tensor_type(a.shape, _complex(a.dtype))
    results = [(w_t, row_major(r - 1))] * (2 if real else 1) + \
              [(vec_t, column_major(r))] * 2 + [(tensor_type(batch, np.int32), row_major(r - 2))]
    vectors = op.attrs["vectors"]
    config = f"compute_left = {_byte('N')}, compute_right = {_byte('V' if vectors else 'N')}"
    out = t.custom_call(f"lapack_{LAPACK_DTYPES[a.dtype]}geev_ffi", [p.name(a)],
                        [value_type(a)], [r], results, config)
    w = f"{out}#0"
    cw_t = tensor_type(a.shape[:-1], _complex(a.dtype))
    if real:
        w = t.line("stablehlo.complex", [f"{out}#0", f"{out}#1"], [w_t, w_t], [cw_t])
    info = f"{out}#{len(results) - 1}"
    p.names[op.results[0]] = t.ok_or_nan(info, w, a.shape[:-1], _complex(a.dtype), len(batch))
    if vectors:
        vr = f"{out}#{len(results) - 2}"
        p.names[op.results[1]] = t.ok_or_nan(info, vr, a.shape, _complex(a.dtype))


# --- shared derivative vocabulary --------------------------------------------------------


def _adjoint(b, x):
    x = matrix_transpose(b, x)
    return conj(b, x) if dtypes.is_complex(x.dtype) else x


def _mask(b, like, keep):
    """Bool mask of ``like``'s shape from ``keep(rows, cols)`` on index iotas."""
    r = like.ndim
    return keep(b.iota(like.shape, np.int32, r - 2), b.iota(like.shape, np.int32, r - 1))


def _band(b, x, keep):
    return b.select(_mask(b, x, keep), x, const(b, 0, x))


def _strict_lower(b, x):
    return _band(b, x, b.gt)


def _strict_upper(b, x):
    return _band(b, x, b.lt)


def _diagonal_part(b, x):
    return _band(b, x, b.eq)


def _real_part(b, x):
    """``Re x`` in ``x``'s dtype."""
    if not dtypes.is_complex(x.dtype):
        return x
    return b.convert(b.convert(x, dtypes.real_dtype(x.dtype)), x.dtype)


def _right_solve(b, x, m):
    """``x m⁻¹``."""
    return matrix_transpose(b, solve(b, matrix_transpose(b, m), matrix_transpose(b, x)))


def _eye_like(b, x):
    n = x.shape[-1]
    eye = b.constant(np.eye(n, dtype=x.dtype))
    return b.broadcast_in_dim(eye, x.shape[:-2] + (n, n), (x.ndim - 2, x.ndim - 1))


def _cut(b, x, rows=None, cols=None):
    """``x[..., rows[0]:rows[1], cols[0]:cols[1]]`` (None: all)."""
    rows = rows or (0, x.shape[-2])
    cols = cols or (0, x.shape[-1])
    start = (0,) * (x.ndim - 2) + (rows[0], cols[0])
    return b.slice(x, start, x.shape[:-2] + (rows[1], cols[1]))


def transpose(b, primals, cts, tangent_fn):
    """The cotangents of ``primals`` for the linear map ``tangent_fn(b, tangents) ->
    output tangents`` (``tangents``: arrays for the float primals, None for the others):
    the map traced as a region and run backwards."""
    floats = [i for i, v in enumerate(primals) if is_float(v)]
    used = []   # the cotangents of the map's outputs that are arrays (found when traced)

    def traced(*float_tangents):
        ts = [None] * len(primals)
        for i, t in zip(floats, float_tangents):
            ts[i] = t
        outs = tangent_fn(current_builder(), ts)
        kept = [(t, ct) for t, ct in zip(outs, cts) if t is not None and ct is not None]
        used.extend(ct for _, ct in kept)
        return [t for t, _ in kept]
    region = trace(b, traced, tuple(primals[i] for i in floats)).region
    env = forward_pass(b, region, [zeros_like(b, primals[i]) for i in floats])
    param_cts, _ = backward_pass(b, _linear_part(region), env, used)
    out = [None] * len(primals)
    for i, ct in zip(floats, param_cts):
        out[i] = ct
    return out


def transposed_vjp(tangent_map):
    """A VJP rule from ``tangent_map(b, op, primals, results, tangents) -> output
    tangents``, linear in ``tangents``."""
    def vjp(b, op, primals, results, cts):
        if all(ct is None for ct in cts):
            return [None] * len(primals)
        return transpose(b, primals, cts,
                         lambda sub, ts: tangent_map(sub, op, primals, results, ts))
    return vjp


def _jvp_from(tangent_map):
    def jvp(b, op, primals, tangents):
        results = b.emit(op.name, list(primals), **op.attrs)
        if all(t is None for t in tangents):
            return results, [None] * len(results)
        ts = [t if t is not None or not is_float(v) else zeros_like(b, v)
              for t, v in zip(tangents, primals)]
        return results, tangent_map(b, op, primals, results, ts)
    return jvp


def _both_modes(name, tangent_map):
    jvp_rule(name)(_jvp_from(tangent_map))
    vjp_rule(name)(transposed_vjp(tangent_map))


# --- qr -----------------------------------------------------------------------------------


def _thin_qr_tangent(b, q, r, da):
    """(dQ, dR) of a (..., m, n) matrix with m ≥ n, q (m, n), r (n, n)."""
    da_rinv = _right_solve(b, da, r)
    c = batched_matmul(b, _adjoint(b, q), da_rinv)
    low = _strict_lower(b, c)
    omega = b.sub(low, _adjoint(b, low))
    if dtypes.is_complex(c.dtype):   # the imaginary part of C's diagonal
        omega = b.add(omega, _diagonal_part(b, b.sub(c, _real_part(b, c))))
    dq = b.add(batched_matmul(b, q, b.sub(omega, c)), da_rinv)
    dr = batched_matmul(b, b.sub(c, omega), r)
    return dq, dr


def _qr_tangent(b, op, primals, results, tangents):
    (a,), (q, r), (da,) = primals, results, tangents
    m, n = a.shape[-2:]
    last = a.ndim - 1
    if m < n:   # A = [A₁ A₂]: the square QR of A₁, and R₂ = Qᴴ A₂
        dq, dr1 = _thin_qr_tangent(b, q, _cut(b, r, cols=(0, m)), _cut(b, da, cols=(0, m)))
        dr2 = b.add(batched_matmul(b, _adjoint(b, dq), _cut(b, a, cols=(m, n))),
                    batched_matmul(b, _adjoint(b, q), _cut(b, da, cols=(m, n))))
        return [dq, b.concatenate([dr1, dr2], last)]
    full = op.attrs["full_matrices"]
    q_mn = _cut(b, q, cols=(0, n)) if full else q
    r_nn = _cut(b, r, rows=(0, n)) if full else r
    dq_mn, dr_nn = _thin_qr_tangent(b, q_mn, r_nn, da)
    if not full or m == n:
        return [dq_mn, dr_nn]
    # the last m - n columns of a complete Q (arXiv:2409.13374, eqs. 32-33)
    q_nn, q_pn, q_mp = _cut(b, q_mn, rows=(0, n)), _cut(b, q_mn, rows=(n, m)), \
        _cut(b, q, cols=(n, m))
    dq_nn, dq_pn = _cut(b, dq_mn, rows=(0, n)), _cut(b, dq_mn, rows=(n, m))
    z_h = solve(b, _adjoint(b, b.sub(q_nn, _eye_like(b, q_nn))), _adjoint(b, q_pn))
    z = _adjoint(b, z_h)
    dq_mp = b.sub(batched_matmul(b, dq_mn, z_h),
                  batched_matmul(b, b.add(q_mn, batched_matmul(b, q_mp, z)),
                                 _adjoint(b, b.sub(dq_pn, batched_matmul(b, z, dq_nn)))))
    zeros = b.broadcast_in_dim(b.constant(np.zeros((), a.dtype)),
                               a.shape[:-2] + (m - n, n), ())
    return [b.concatenate([dq_mn, dq_mp], last), b.concatenate([dr_nn, zeros], last - 1)]


_both_modes("qr", _qr_tangent)


def _refuse_geqrf(b, op, *args, **kwargs):
    raise PSCUnsupportedCallError("the derivative of np.linalg.qr(..., mode='raw') (LAPACK's "
                                  "Householder reflectors) is not supported",
                                  hint="differentiate mode='reduced' or 'complete'")


jvp_rule("geqrf")(_refuse_geqrf)
vjp_rule("geqrf")(_refuse_geqrf)


# --- eigh ---------------------------------------------------------------------------------


def _hermitian_read(b, da, lower: bool):
    """The Hermitian matrix LAPACK reads from ``da``: one strict triangle, its adjoint,
    and the real part of the diagonal."""
    part = _strict_lower(b, da) if lower else _strict_upper(b, da)
    return b.add(b.add(part, _adjoint(b, part)), _real_part(b, _diagonal_part(b, da)))


def _eigh_tangent(b, op, primals, results, tangents):
    (a,), (v, w), (da,) = primals, results, tangents
    da = _hermitian_read(b, da, op.attrs["lower"])
    vdv = batched_matmul(b, batched_matmul(b, _adjoint(b, v), da), v)
    wc = b.convert(w, a.dtype)
    r = a.ndim
    rows = b.broadcast_in_dim(wc, a.shape, tuple(range(r - 2)) + (r - 2,))
    cols = b.broadcast_in_dim(wc, a.shape, tuple(range(r - 2)) + (r - 1,))
    eye = _eye_like(b, a)
    gaps = b.sub(b.div(const(b, 1, a), b.add(eye, b.sub(cols, rows))), eye)   # 1/(w_j-w_i)
    dv = batched_matmul(b, v, b.mul(gaps, vdv))
    diag = b.reduce(_diagonal_part(b, vdv), "sum", (r - 1,))
    dw = b.convert(diag, w.dtype)   # (the real part)
    return [dv, dw]


_both_modes("eigh", _eigh_tangent)


# --- eig ----------------------------------------------------------------------------------


def _refuse_eigenvectors():
    raise PSCUnsupportedCallError(
        "the derivative of the eigenvectors of np.linalg.eig is not supported (it is "
        "only defined under assumptions that cannot be checked: jax refuses it too)",
        hint="differentiate the eigenvalues (np.linalg.eigvals), or use np.linalg.eigh "
             "for a symmetric/Hermitian matrix")


def _eigenvalue_tangent(b, v, da):
    """diag(V⁻¹ dA V), row by row: sum_j (V⁻¹ dA)_ij V_ji."""
    rows = solve(b, v, b.convert(da, v.dtype))
    return b.reduce(b.mul(rows, matrix_transpose(b, v)), "sum", (v.ndim - 1,))


@jvp_rule("eig")
def _eig_jvp(b, op, primals, tangents):
    results = b.emit("eig", list(primals), **op.attrs)
    if tangents[0] is None:
        return results, [None] * len(results)
    if op.attrs["vectors"]:
        _refuse_eigenvectors()
    v = b.emit("eig", list(primals), vectors=True)[1]
    return results, [_eigenvalue_tangent(b, v, tangents[0])]


@vjp_rule("eig")
def _eig_vjp(b, op, primals, results, cts):
    if op.attrs["vectors"] and cts[1] is not None:
        _refuse_eigenvectors()
    if cts[0] is None:
        return [None]
    v = results[1] if op.attrs["vectors"] else b.emit("eig", list(primals), vectors=True)[1]
    return transpose(b, primals, cts[:1],
                     lambda sub, ts: [_eigenvalue_tangent(sub, v, ts[0])])


# --- lu (np.linalg.det and slogdet) --------------------------------------------------------


def _pivots_to_permutation(b, pivots):
    """The row permutation of LAPACK's 1-based sequential row swaps ``pivots`` (..., n):
    ``perm`` with ``(P A)[i] = A[perm[i]]`` (a loop over the n swaps)."""
    n, last = pivots.shape[-1], pivots.ndim - 1
    lanes = b.iota(pivots.shape, np.int32, last)
    batch = tuple(range(last))

    def body(sub, state):
        i, perm = state
        at_i = sub.eq(lanes, sub.broadcast_in_dim(i, lanes.shape, ()))

        def at(mask, x):   # x at the one marked lane, broadcast back over the lanes
            picked = sub.reduce(sub.select(mask, x, const(sub, 0, x)), "sum", (last,))
            return sub.broadcast_in_dim(picked, x.shape, batch)
        j = at(at_i, sub.sub(pivots, const(sub, 1, pivots)))
        at_j = sub.eq(lanes, j)
        swapped = sub.select(at_i, at(at_j, perm), sub.select(at_j, at(at_i, perm), perm))
        return sub.add(i, sub.constant(np.int32(1))), swapped

    start = (b.constant(np.int32(0)), lanes)
    _, perm = b.while_loop(lambda sub, s: sub.lt(s[0], sub.constant(np.int32(n))), body,
                           start, trip_count=n)
    return perm


def _lu_tangent(b, op, primals, results, tangents):
    (a,), (packed, pivots, _), (da,) = primals, results, tangents
    perm = _pivots_to_permutation(b, pivots)
    r = a.ndim
    rows = b.broadcast_in_dim(perm, a.shape, tuple(range(r - 1)))
    onehot = b.convert(b.eq(rows, b.iota(a.shape, np.int32, r - 1)), a.dtype)
    moved = batched_matmul(b, onehot, da)   # P dA
    lower = b.add(_strict_lower(b, packed), _eye_like(b, packed))
    upper = b.sub(packed, _strict_lower(b, packed))
    x = _right_solve(b, solve(b, lower, moved), upper)
    dlu = b.add(batched_matmul(b, lower, _strict_lower(b, x)),
                batched_matmul(b, b.sub(x, _strict_lower(b, x)), upper))
    return [dlu, None, None]


_both_modes("lu", _lu_tangent)


# --- batching -----------------------------------------------------------------------------


@batching_rule("qr", "geqrf", "eigh", "eig")
def _batch_factorization(b, op, operands, dims):
    results = b.emit(op.name, [to_front(b, operands[0], dims[0])], **op.attrs)
    return results, [0] * len(results)

