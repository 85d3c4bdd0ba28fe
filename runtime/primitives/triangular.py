"""``triangular_solve``: ``x`` with ``op(A) @ x == b`` for the triangle ``A`` of ``a``, on
jaxlib's LAPACK ``trsm`` kernel (``lapack_?trsm_ffi``, the one ``solve`` already uses).

Operands ``a`` (..., n, n) and ``b`` (..., n, k): the same batch dimensions and dtype
(float32/64, complex64/128).  Attributes: ``lower`` (read the lower triangle of ``a``, else
the upper one; the other triangle is never read), ``trans`` (``op``: ``"N"`` none, ``"T"``
transpose, ``"C"`` conjugate transpose) and ``unit_diagonal`` (the diagonal is taken to be
ones and not read).  ``trsm`` divides by the diagonal as it is: an exact zero there gives
inf/NaN (the scipy rule turns that into NaN for the whole matrix).  StableHLO's own
``triangular_solve`` would also do; ``trsm`` is the BLAS-3 kernel XLA's CPU expansion of it
cannot match.

Derivatives (transposes, not adjoints: ``dot_general``'s convention, and jax's): with
``T(d)`` the part of ``d`` the solve reads (its triangle, the diagonal dropped when
``unit_diagonal``) and ``M = op(T(a))``, ``dx = M⁻¹ (db − op(T(da)) x)``.  The VJP:
``b̄ = M⁻ᵀ x̄`` (a solve with ``trans`` swapped between "N" and "T"; for "C",
``conj(solve(a, conj(x̄)))``), and ``ā = T(op⁻ᵀ(−b̄ xᵀ))`` where ``op⁻ᵀ`` undoes ``op``'s
transpose (and conjugates for "C": conj is its own transpose).

Batching: the batch dimensions move to the front and become one more LAPACK batch
dimension.  On GPU (CUDA/ROCm) the lowering is StableHLO's own ``triangular_solve``, as
jax's (`runtime.primitives.linalg_gpu`).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import PSCShapeError, PSCTypeError, PSCValueError
from ..lowering import value_type
from ..primitive import batching_rule, checks, jvp_rule, lowers, vjp_rule
from .linalg import (LAPACK_DTYPES, _byte, column_major, LapackText, batched_matmul,
                     matrix_transpose, register_lapack_targets)
from .support import conj, fmt, require, same_dtypes, to_front

TRANSPOSES = ("N", "T", "C")


def triangular_solve(b, a, rhs, *, lower: bool, trans: str = "N",
                     unit_diagonal: bool = False):
    return b.emit("triangular_solve", [a, rhs], lower=bool(lower), trans=trans,
                  unit_diagonal=bool(unit_diagonal))[0]


@checks("triangular_solve")
def _check(operands, attrs):
    a, rhs = operands
    require(a.dtype in LAPACK_DTYPES, PSCTypeError, "triangular_solve needs a float32, "
            f"float64, complex64 or complex128 operand, got {fmt(a)}")
    require(a.ndim >= 2 and a.shape[-1] == a.shape[-2], PSCShapeError,
            f"triangular_solve needs square matrices (..., n, n), got {fmt(a)}")
    same_dtypes("triangular_solve", operands)
    require(rhs.ndim == a.ndim and rhs.shape[:-1] == a.shape[:-1], PSCShapeError,
            "triangular_solve needs b of shape (..., n, k) with a's batch dimensions and "
            f"n, got a {fmt(a)} and b {fmt(rhs)}")
    require(attrs.get("trans") in TRANSPOSES, PSCValueError,
            f"triangular_solve: trans must be one of {TRANSPOSES}, got {attrs.get('trans')!r}")
    return [(rhs.shape, rhs.dtype)]


@lowers("triangular_solve")
def _lower(p, op):
    register_lapack_targets()
    a, rhs = op.operands
    (x,) = op.results
    r = a.ndim
    t = LapackText(p, op)
    config = (f"diag = {_byte('U' if op.attrs['unit_diagonal'] else 'N')}, "
              f"side = {_byte('L')}, trans_x = {_byte(op.attrs['trans'])}, "
              f"uplo = {_byte('L' if op.attrs['lower'] else 'U')}")
    p.names[x] = t.custom_call(
        f"lapack_{LAPACK_DTYPES[a.dtype]}trsm_ffi", [p.name(a), p.name(rhs)],
        [value_type(a), value_type(rhs)], [r, r], [(value_type(rhs), column_major(r))],
        config, aliases="#stablehlo.output_operand_alias<output_tuple_indices = [], "
                        "operand_index = 1, operand_tuple_indices = []>")


# --- derivatives --------------------------------------------------------------------------


def read_part(b, x, lower: bool, unit_diagonal: bool):
    """The part of ``x`` a solve with these attributes reads (zeros elsewhere)."""
    r = x.ndim
    rows, cols = b.iota(x.shape, np.int32, r - 2), b.iota(x.shape, np.int32, r - 1)
    keep = (b.gt if unit_diagonal else b.ge)(*((rows, cols) if lower else (cols, rows)))
    return b.select(keep, x, b.broadcast_in_dim(b.constant(np.zeros((), x.dtype)),
                                                x.shape, ()))


def _conj(b, x):
    return conj(b, x) if dtypes.is_complex(x.dtype) else x


def _apply_op(b, x, trans: str):
    if trans == "N":
        return x
    x = matrix_transpose(b, x)
    return _conj(b, x) if trans == "C" else x


def _attrs(op):
    return {k: op.attrs[k] for k in ("lower", "trans", "unit_diagonal")}


@jvp_rule("triangular_solve")
def _jvp(b, op, primals, tangents):
    (a, rhs), (ta, tb) = primals, tangents
    attrs = _attrs(op)
    x = triangular_solve(b, a, rhs, **attrs)
    if ta is None and tb is None:
        return [x], [None]
    change = tb
    if ta is not None:
        part = read_part(b, ta, attrs["lower"], attrs["unit_diagonal"])
        moved = b.neg(batched_matmul(b, _apply_op(b, part, attrs["trans"]), x))
        change = moved if change is None else b.add(change, moved)
    return [x], [triangular_solve(b, a, change, **attrs)]


def _transposed_solve(b, a, ct, attrs):
    """``M⁻ᵀ ct`` for ``M = op(T(a))``."""
    trans = attrs["trans"]
    same = {"lower": attrs["lower"], "unit_diagonal": attrs["unit_diagonal"]}
    if trans == "C":
        return _conj(b, triangular_solve(b, a, _conj(b, ct), trans="N", **same))
    return triangular_solve(b, a, ct, trans="T" if trans == "N" else "N", **same)


@vjp_rule("triangular_solve")
def _vjp(b, op, primals, results, cts):
    (a, _), (x,), (ct,) = primals, results, cts
    attrs = _attrs(op)
    ct_b = _transposed_solve(b, a, ct, attrs)
    ct_op = b.neg(batched_matmul(b, ct_b, matrix_transpose(b, x)))
    ct_a = read_part(b, _apply_op(b, ct_op, attrs["trans"]), attrs["lower"],
                     attrs["unit_diagonal"])
    return [ct_a, ct_b]


@batching_rule("triangular_solve")
def _batch(b, op, operands, dims):
    size = next(v.shape[d] for v, d in zip(operands, dims) if d is not None)
    a, rhs = (to_front(b, v, d, size) for v, d in zip(operands, dims))
    return [triangular_solve(b, a, rhs, **_attrs(op))], [0]
