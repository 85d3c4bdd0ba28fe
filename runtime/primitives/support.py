"""Shared vocabulary of the primitive families: operand checks and rule builders.

Checks raise `PSCError`s without a location (the builder adds the one it is building at).
The rule builders make the usual derivative rules from less: `from_partials` (an
element-wise op's partial derivatives give both its JVP and its VJP) and `linear_jvp` (an
op linear in some operands is its own JVP).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autodiff.tangents import is_float, tangent_or_zeros
from ..autodiff.trace import replay
from ..errors import PSCShapeError, PSCTypeError, PSCValueError
from ..primitive import jvp_rule, vjp_rule

# --- operand checks ---------------------------------------------------------------------


def fmt(v) -> str:
    return f"{v.dtype}{list(v.shape)}"


def require(condition: bool, error, message: str, hint: str | None = None) -> None:
    if not condition:
        raise error(message, hint=hint)


def same_dtypes(name: str, operands) -> None:
    if any(v.dtype != operands[0].dtype for v in operands):   # (the message costs more)
        raise PSCTypeError(f"operands of {name} must have one dtype, got "
                           + ", ".join(fmt(v) for v in operands),
                           hint="builder ops are strict: convert operands first (NumPy "
                                "promotion lives in the translation rules)")


def same_shapes(name: str, operands) -> None:
    if any(v.shape != operands[0].shape for v in operands):
        raise PSCShapeError(f"operands of {name} must have one shape, got "
                            + ", ".join(fmt(v) for v in operands),
                            hint="builder ops are strict: broadcast operands first with "
                                 "broadcast_in_dim")


# Kinds of operand a primitive accepts: a predicate on the dtype and a phrase for errors.
NUMERIC = (lambda d: not dtypes.is_bool(d), "numeric (not bool)")
INEXACT = (dtypes.is_inexact, "floating or complex")
FLOAT = (dtypes.is_floating, "floating")
INTEGRAL = (lambda d: dtypes.is_integer(d) or dtypes.is_bool(d), "integer or bool")
INTEGER = (dtypes.is_integer, "integer")
ANY = (lambda d: True, "any")


def check_kind(name: str, v, kind) -> None:
    accepts, phrase = kind
    if not accepts(v.dtype):
        raise PSCTypeError(f"{name} needs a {phrase} operand, got {fmt(v)}")


def check_dims(name: str, what: str, dims, bound: int, ordered: bool = True) -> None:
    """Dimension numbers must be in range and unique (and sorted, where StableHLO says)."""
    require(all(0 <= d < bound for d in dims) and len(set(dims)) == len(dims) and
            (not ordered or list(dims) == sorted(dims)), PSCValueError,
            f"{name}: {what} {list(dims)} must be {'sorted, ' if ordered else ''}unique and "
            f"below {bound}")


def check_scalar_indices(name, x, indices) -> None:
    require(len(indices) == x.ndim, PSCShapeError,
            f"{name} of {fmt(x)} needs {x.ndim} start indices, got {len(indices)}")
    for i in indices:
        require(i.shape == () and dtypes.is_integer(i.dtype), PSCTypeError,
                f"{name} start indices must be integer scalars, got {fmt(i)}")
    if indices:
        same_dtypes(name + " indices", indices)


def const(b, value, like):
    """``value`` broadcast to the shape and dtype of ``like``."""
    return b.broadcast_in_dim(b.constant(np.asarray(value, like.dtype)), like.shape, ())


def conj(b, z):
    """The complex conjugate (the ``conj`` primitive, `runtime.primitives.complex_parts`);
    a real ``z`` is its own conjugate."""
    return b.conj(z) if dtypes.is_complex(z.dtype) else z


# --- rule builders ------------------------------------------------------------------------

def from_partials(name: str, partials) -> None:
    """Register ``name``'s JVP and VJP from its partial derivatives:
    ``partials(b, *operands, result)`` gives one array per operand, the derivative of the
    result with respect to it.  Forward mode multiplies tangents by them, reverse mode the
    cotangent: one formula, both modes."""
    @jvp_rule(name)
    def jvp(b, op, primals, tangents):
        results = replay(b, op, primals)
        if all(t is None for t in tangents) or not is_float(results[0]):
            return results, [None]
        total = None
        for partial, tangent in zip(partials(b, *primals, results[0]), tangents):
            if tangent is not None:
                term = b.mul(partial, tangent)
                total = term if total is None else b.add(total, term)
        return results, [total]

    @vjp_rule(name)
    def vjp(b, op, primals, results, cts):
        (ct,) = cts
        return [b.mul(p, ct) if is_float(x) else None
                for p, x in zip(partials(b, *primals, results[0]), primals)]


def linear_jvp(name: str, positions=None) -> None:
    """Register the JVP of an op linear in the operands at ``positions`` (None: all; the
    others are indices or predicates): the op itself applied to the tangents."""
    @jvp_rule(name)
    def jvp(b, op, primals, tangents):
        results = replay(b, op, primals)
        chosen = range(len(primals)) if positions is None else positions
        if not is_float(results[0]) or all(tangents[i] is None for i in chosen):
            return results, [None]
        operands = list(primals)
        for i in chosen:
            operands[i] = tangent_or_zeros(b, tangents[i], primals[i])
        return results, [replay(b, op, operands)[0]]


# --- batching -------------------------------------------------------------------------------

def align_batched(b, operands, dims):
    """Operands of one element-wise op made to agree on their batch dimension: (the
    operands, that dimension).  Operands all batched along one dimension keep it;
    otherwise each batched operand's dimension moves to the front and the unbatched ones
    are broadcast along it (builder ops need one shape).  Nothing batched: unchanged."""
    present = [d for d in dims if d is not None]
    if not present:
        return list(operands), None
    if len(present) == len(dims) and len(set(present)) == 1:
        return list(operands), present[0]
    size = next(v.shape[d] for v, d in zip(operands, dims) if d is not None)
    return [to_front(b, v, d, size) for v, d in zip(operands, dims)], 0


def to_front(b, value, dim, size=None):
    """``value`` with its batch dimension ``dim`` first; an unbatched value (``dim`` None)
    is broadcast to ``size`` lanes."""
    if dim is None:
        return b.broadcast_in_dim(value, (size,) + value.shape, range(1, value.ndim + 1))
    return b.transpose(value, [dim] + [d for d in range(value.ndim) if d != dim])


# --- rows of stacked per-iteration values (loops' residuals, scan's xs and ys) ----------


def read_row(b, buffer, k):
    """Row ``k`` (a traced integer scalar) of ``buffer``, without its leading axis."""
    zeros = [b.constant(np.zeros((), k.dtype))] * (buffer.ndim - 1)
    return b.reshape(b.dynamic_slice(buffer, [k] + zeros, (1,) + buffer.shape[1:]),
                     buffer.shape[1:])


def write_row(b, buffer, value, k):
    """``buffer`` with row ``k`` replaced by ``value`` (shaped like one row)."""
    zeros = [b.constant(np.zeros((), k.dtype))] * value.ndim
    return b.dynamic_update_slice(buffer, b.reshape(value, (1,) + value.shape), [k] + zeros)
