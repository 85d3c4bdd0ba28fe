"""Complex parts as primitives: ``real``, ``imag``, ``complex`` (two reals -> one complex)
and ``conj``, lowered to ``stablehlo.real``, ``stablehlo.imag`` and ``stablehlo.complex``
(``conj`` as ``complex(real(z), -imag(z))``).

All four are real-linear, so each JVP is the op applied to the tangent.  Their VJPs follow
JAX's convention for complex cotangents (the one complex ``abs`` uses): the cotangent of a
complex value ``z = x + iy`` is ``dL/dx - i dL/dy``, hence the transposes
``real: ct -> ct + 0i``, ``imag: ct -> 0 - i ct``, ``complex: ct -> (Re ct, -Im ct)`` and
``conj: ct -> conj(ct)``.  The builder methods are ``b.real``, ``b.imag``, ``b.complex``
and ``b.conj``.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autodiff.trace import replay
from ..lowering import location, tensor_type, value_type
from ..primitive import batching_rule, checks, jvp_rule, lowers, vjp_rule
from .elementwise import BUILDER_METHODS, batch_elementwise
from .support import check_kind, const, same_dtypes, same_shapes

COMPLEX = (dtypes.is_complex, "complex")
FLOAT = (dtypes.is_floating, "floating")
_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}


def _complex_of(dtype) -> np.dtype:
    return _COMPLEX_OF[np.dtype(dtype)]


def _linear(name):
    """A real-linear op's JVP: the op itself on the tangents (zeros for missing ones)."""
    @jvp_rule(name)
    def jvp(b, op, primals, tangents):
        results = replay(b, op, primals)
        if all(t is None for t in tangents):
            return results, [None]
        filled = [t if t is not None else const(b, 0, x) for t, x in zip(tangents, primals)]
        return results, [replay(b, op, filled)[0]]
    batching_rule(name)(batch_elementwise)


# --- real, imag --------------------------------------------------------------------------


def _part(name):
    @checks(name)
    def check(operands, attrs):
        (z,) = operands
        check_kind(name, z, COMPLEX)
        return [(z.shape, dtypes.real_dtype(z.dtype))]
    lowers(name)(lambda p, op: p.generic(op, name))
    _linear(name)
    BUILDER_METHODS[name] = (name, 1)


_part("real")
_part("imag")


@vjp_rule("real")
def _real_vjp(b, op, primals, results, cts):
    (ct,) = cts
    return [b.complex(ct, const(b, 0, ct))]


@vjp_rule("imag")
def _imag_vjp(b, op, primals, results, cts):
    (ct,) = cts
    return [b.complex(const(b, 0, ct), b.neg(ct))]

# --- complex -----------------------------------------------------------------------------


@checks("complex")
def _check_complex(operands, attrs):
    same_dtypes("complex", operands)
    same_shapes("complex", operands)
    check_kind("complex", operands[0], FLOAT)
    check_kind("complex", operands[0], (lambda d: np.dtype(d) in _COMPLEX_OF,
                                        "float32 or float64"))
    return [(operands[0].shape, _complex_of(operands[0].dtype))]


lowers("complex")(lambda p, op: p.generic(op, "complex"))
_linear("complex")
BUILDER_METHODS["complex"] = ("complex", 2)


@vjp_rule("complex")
def _complex_vjp(b, op, primals, results, cts):
    (ct,) = cts
    return [b.real(ct), b.neg(b.imag(ct))]

# --- conj --------------------------------------------------------------------------------


@checks("conj")
def _check_conj(operands, attrs):
    (z,) = operands
    check_kind("conj", z, COMPLEX)
    return [(z.shape, z.dtype)]


@lowers("conj")
def _lower_conj(p, op):
    (z,), (r,) = op.operands, op.results
    part, where = tensor_type(z.shape, dtypes.real_dtype(z.dtype)), location(op)
    re, im, neg = p.fresh(), p.fresh(), p.fresh()
    p.emit(f'{re} = "stablehlo.real"({p.name(z)}) : ({value_type(z)}) -> {part} {where}')
    p.emit(f'{im} = "stablehlo.imag"({p.name(z)}) : ({value_type(z)}) -> {part} {where}')
    p.emit(f'{neg} = "stablehlo.negate"({im}) : ({part}) -> {part} {where}')
    p.emit(f'{p.bind_results(op)} = "stablehlo.complex"({re}, {neg}) : ({part}, {part}) -> '
           f'{value_type(r)} {where}')


_linear("conj")
BUILDER_METHODS["conj"] = ("conj", 1)


@vjp_rule("conj")
def _conj_vjp(b, op, primals, results, cts):
    return [b.conj(cts[0])]
