"""Element-wise primitives: unary and binary arithmetic, ``compare``, ``select``, ``convert``,
``bitcast_convert``.

Each is declared once below with what it accepts, its builder method and its derivative:
`unary` and `binary` register the check, the lowering (a plain StableHLO or CHLO op),
the JVP and VJP from the partial derivatives (`support.from_partials`) and the batching
rule.  At non-differentiable points JAX's conventions hold: ``max``/``min`` split the
derivative evenly between tied operands; ``abs'(0) = 1``; ``floor``/``round``/``sign``
have zero derivative.
"""
from __future__ import annotations

import math

from .. import dtypes
from ..autodiff.tangents import is_float, zeros_like
from ..autodiff.trace import replay
from ..errors import PSCShapeError, PSCTypeError, PSCUnsupportedCallError, PSCValueError
from ..lowering import compare_attrs
from ..primitive import (batching_rule, checks, jvp_rule, lowers, nondifferentiable,
                         primitive, vjp_rule)
from .support import (ANY, FLOAT, INEXACT, INTEGER, INTEGRAL, NUMERIC, check_kind, const,
                      conj, fmt, from_partials, linear_jvp, require, same_dtypes, same_shapes,
                      align_batched)

# Builder method name -> (primitive name, number of operands): `Builder` gets one method
# per entry (``b.exp(x)`` records ``exponential``).
BUILDER_METHODS: dict[str, tuple[str, int]] = {}
COMPARISON_DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")


def unary(name, kind, method, partials=None, result_dtype=None, dialect="stablehlo"):
    """Declare a unary element-wise primitive.  ``partials(b, x, result) -> (d/dx,)``, or
    None for a piecewise-constant (or integer) function; ``result_dtype(dtype)`` when the
    result's dtype differs from the operand's."""
    @checks(name)
    def check(operands, attrs):
        (x,) = operands
        check_kind(name, x, kind)
        return [(x.shape, result_dtype(x.dtype) if result_dtype else x.dtype)]
    _declare(name, method, 1, partials, dialect)


def binary(name, kind, method, partials=None, dialect="stablehlo"):
    """Declare a binary element-wise primitive (operands of one shape and dtype)."""
    @checks(name)
    def check(operands, attrs):
        same_dtypes(name, operands)
        same_shapes(name, operands)
        check_kind(name, operands[0], kind)
        return [(operands[0].shape, operands[0].dtype)]
    _declare(name, method, 2, partials, dialect)


def _declare(name, method, arity, partials, dialect="stablehlo"):
    BUILDER_METHODS[method] = (name, arity)
    lowers(name)(lambda p, op: p.generic(op, op.name, dialect=dialect))
    batching_rule(name)(batch_elementwise)
    if partials is None:
        nondifferentiable(name)
    else:
        from_partials(name, partials)


# --- batching -----------------------------------------------------------------------------


def batch_elementwise(b, op, operands, dims):
    """Any element-wise op under `vmap`, its operands aligned by `align_batched`."""
    operands, dim = align_batched(b, operands, dims)
    return replay(b, op, operands), [dim]


def _recip(b, x):
    return b.div(const(b, 1, x), x)


def _balanced(b, x, y, r):
    """d max(x, y)/dx: 1 where x alone attains the result, 1/2 on ties (JAX's choice)."""
    one, half, zero = const(b, 1, r), const(b, 0.5, r), const(b, 0, r)
    return b.select(b.eq(x, r), b.select(b.eq(y, r), half, one), zero)


def _pow_dx(b, x, y, r):
    # y * x**(y-1), with 0 where y == 0 (so 0**0 has derivative 0, as JAX)
    dx = b.mul(y, b.pow(x, b.sub(y, const(b, 1, y))))
    return b.select(b.eq(y, const(b, 0, y)), const(b, 0, dx), dx)


def _pow_dy(b, x, y, r):
    # log(x) * x**y, with log(0) replaced by 0 (JAX's convention for 0**y)
    safe = b.select(b.eq(x, const(b, 0, x)), const(b, 1, x), x)
    return b.mul(b.log(safe), r)


def _atan2_partials(b, x, y, r):
    denominator = b.add(b.mul(x, x), b.mul(y, y))
    return b.div(y, denominator), b.neg(b.div(x, denominator))


def _gaussian(b, x, scale):
    return b.mul(const(b, scale, x), b.exp(b.neg(b.mul(x, x))))


def _no_derivative(name):
    def partials(b, *args):
        raise b.error(PSCUnsupportedCallError, f"the derivative of {name} is not available",
                      "differentiate a function that avoids it")
    return partials


def _abs_dtype(dtype):
    return dtypes.real_dtype(dtype) if dtypes.is_complex(dtype) else dtype


# --- unary ----------------------------------------------------------------------------------

unary("negate", NUMERIC, "neg", lambda b, x, r: (const(b, -1, x),))
unary("abs", NUMERIC, "abs", lambda b, x, r: (b.select(b.ge(x, const(b, 0, x)), const(b, 1, x),
                                                      const(b, -1, x)),),   # abs'(0) = 1
      result_dtype=_abs_dtype)
_real_abs_jvp, _real_abs_vjp = primitive("abs").jvp, primitive("abs").vjp


# |z| of a complex z (JAX's convention): d|z| = Re(conj(z) dz) / |z| (0 at z = 0); the VJP is
# its transpose, ct * conj(z) / |z|, jax's convention for complex cotangents.
def _complex_abs_direction(b, x, r):
    safe = b.select(b.eq(r, const(b, 0, r)), const(b, 1, r), r)
    return b.div(conj(b, x), b.convert(safe, x.dtype))


@jvp_rule("abs")
def _abs_jvp(b, op, primals, tangents):
    (x,), (t,) = primals, tangents
    if not dtypes.is_complex(x.dtype) or t is None:
        return _real_abs_jvp(b, op, primals, tangents)
    (r,) = replay(b, op, primals)
    return [r], [b.convert(b.mul(_complex_abs_direction(b, x, r), t), r.dtype)]


@vjp_rule("abs")
def _abs_vjp(b, op, primals, results, cts):
    (x,), (ct,) = primals, cts
    if not dtypes.is_complex(x.dtype):
        return _real_abs_vjp(b, op, primals, results, cts)
    return [b.mul(_complex_abs_direction(b, x, results[0]), b.convert(ct, x.dtype))]


unary("sign", NUMERIC, "sign")

unary("exponential", INEXACT, "exp", lambda b, x, r: (r,))
unary("log", INEXACT, "log", lambda b, x, r: (_recip(b, x),))
unary("log_plus_one", INEXACT, "log1p", lambda b, x, r: (_recip(b, b.add(x, const(b, 1, x))),))
unary("exponential_minus_one", INEXACT, "expm1", lambda b, x, r: (b.add(r, const(b, 1, r)),))
unary("sqrt", INEXACT, "sqrt", lambda b, x, r: (b.div(const(b, 0.5, r), r),))
unary("rsqrt", INEXACT, "rsqrt", lambda b, x, r: (b.div(b.mul(const(b, -0.5, r), r), x),))
unary("cbrt", FLOAT, "cbrt", lambda b, x, r: (b.div(r, b.mul(const(b, 3, x), x)),))
unary("sine", INEXACT, "sin", lambda b, x, r: (b.cos(x),))
unary("cosine", INEXACT, "cos", lambda b, x, r: (b.neg(b.sin(x)),))
unary("tan", INEXACT, "tan", lambda b, x, r: (b.add(const(b, 1, r), b.mul(r, r)),))
unary("tanh", INEXACT, "tanh", lambda b, x, r: (b.sub(const(b, 1, r), b.mul(r, r)),))
unary("logistic", INEXACT, "logistic", lambda b, x, r: (b.mul(r, b.sub(const(b, 1, r), r)),))
unary("floor", FLOAT, "floor")
unary("ceil", FLOAT, "ceil")
unary("round_nearest_afz", FLOAT, "round")
unary("round_nearest_even", FLOAT, "round_nearest_even")
unary("not", INTEGRAL, "not_")
unary("is_finite", FLOAT, "is_finite", result_dtype=lambda d: dtypes.bool_)
unary("popcnt", INTEGER, "popcnt")   # the number of 1 bits (NumPy's bitwise_count)

# CHLO decompositions, legalized by XLA like the StableHLO ops.
_one_minus_square = (lambda b, x: b.sub(const(b, 1, x), b.mul(x, x)))
unary("asin", INEXACT, "asin", lambda b, x, r: (b.rsqrt(_one_minus_square(b, x)),),
      dialect="chlo")
unary("acos", INEXACT, "acos", lambda b, x, r: (b.neg(b.rsqrt(_one_minus_square(b, x))),),
      dialect="chlo")
unary("atan", INEXACT, "atan", lambda b, x, r: (_recip(b, b.add(const(b, 1, x), b.mul(x, x))),),
      dialect="chlo")
unary("sinh", INEXACT, "sinh", lambda b, x, r: (b.cosh(x),), dialect="chlo")
unary("cosh", INEXACT, "cosh", lambda b, x, r: (b.sinh(x),), dialect="chlo")
unary("asinh", INEXACT, "asinh", lambda b, x, r: (b.rsqrt(b.add(b.mul(x, x), const(b, 1, x))),),
      dialect="chlo")
unary("acosh", INEXACT, "acosh", lambda b, x, r: (b.rsqrt(b.sub(b.mul(x, x), const(b, 1, x))),),
      dialect="chlo")
unary("atanh", INEXACT, "atanh", lambda b, x, r: (_recip(b, _one_minus_square(b, x)),),
      dialect="chlo")
unary("erf", FLOAT, "erf", lambda b, x, r: (_gaussian(b, x, 2 / math.sqrt(math.pi)),),
      dialect="chlo")
unary("erfc", FLOAT, "erfc", lambda b, x, r: (_gaussian(b, x, -2 / math.sqrt(math.pi)),),
      dialect="chlo")
unary("erf_inv", FLOAT, "erf_inv", lambda b, x, r: (b.mul(const(b, math.sqrt(math.pi) / 2, r),
                                                         b.exp(b.mul(r, r))),), dialect="chlo")
unary("lgamma", FLOAT, "lgamma", lambda b, x, r: (b.digamma(x),), dialect="chlo")
unary("digamma", FLOAT, "digamma", lambda b, x, r: (b.polygamma(const(b, 1, x), x),),
      dialect="chlo")

# --- binary ---------------------------------------------------------------------------------

binary("add", ANY, "add", lambda b, x, y, r: (const(b, 1, x), const(b, 1, y)))
binary("subtract", NUMERIC, "sub", lambda b, x, y, r: (const(b, 1, x), const(b, -1, y)))
binary("multiply", ANY, "mul", lambda b, x, y, r: (y, x))
binary("divide", NUMERIC, "div", lambda b, x, y, r: (_recip(b, y), b.neg(b.div(r, y))))
binary("remainder", NUMERIC, "rem", lambda b, x, y, r: (
    const(b, 1, x), b.neg(b.round_nearest_even(b.sub(b.div(x, y), b.div(r, y))))))
binary("power", NUMERIC, "pow", lambda b, x, y, r: (_pow_dx(b, x, y, r), _pow_dy(b, x, y, r)))
binary("maximum", ANY, "max", lambda b, x, y, r: (_balanced(b, x, y, r), _balanced(b, y, x, r)))
binary("minimum", ANY, "min", lambda b, x, y, r: (_balanced(b, x, y, r), _balanced(b, y, x, r)))
binary("atan2", INEXACT, "atan2", _atan2_partials)
binary("and", INTEGRAL, "and_")
binary("or", INTEGRAL, "or_")
binary("xor", INTEGRAL, "xor")
binary("shift_left", INTEGER, "shift_left")
binary("shift_right_arithmetic", INTEGER, "shift_right_arithmetic")
binary("shift_right_logical", INTEGER, "shift_right_logical")
# polygamma(n, x), the n-th derivative of digamma: ``n`` is an order (a constant
# integer-valued float), so its partial is taken as 0; d/dx is polygamma(n + 1, x)
binary("polygamma", FLOAT, "polygamma", lambda b, n, x, r: (
    const(b, 0, n), b.polygamma(b.add(n, const(b, 1, n)), x)), dialect="chlo")
# the next float after x toward y (NumPy's nextafter): a step of one ulp, slope 1 in x
binary("next_after", FLOAT, "next_after", lambda b, x, y, r: (const(b, 1, x), const(b, 0, y)),
       dialect="chlo")

# --- compare ------------------------------------------------------------------------------


@checks("compare")
def _check_compare(operands, attrs):
    same_dtypes("compare", operands)
    same_shapes("compare", operands)
    require(attrs["direction"] in COMPARISON_DIRECTIONS, PSCValueError,
            f"unknown comparison direction {attrs['direction']!r}")
    return [(operands[0].shape, dtypes.bool_)]


@lowers("compare")
def _lower_compare(p, op):
    p.generic(op, "compare", compare_attrs(op.attrs["direction"], op.operands[0].dtype))


nondifferentiable("compare")
batching_rule("compare")(lambda b, op, operands, dims: batch_elementwise(b, op, operands, dims))

# --- select -------------------------------------------------------------------------------


@checks("select")
def _check_select(operands, attrs):
    pred, on_true, on_false = operands
    require(pred.dtype == dtypes.bool_, PSCTypeError,
            f"select needs a bool predicate, got {fmt(pred)}")
    same_dtypes("select", (on_true, on_false))
    same_shapes("select", (on_true, on_false))
    require(pred.shape in ((), on_true.shape), PSCShapeError,
            f"select predicate {fmt(pred)} must be a scalar or have the shape of its "
            f"operands {fmt(on_true)}")
    return [(on_true.shape, on_true.dtype)]


lowers("select")(lambda p, op: p.generic(op, "select"))
linear_jvp("select", (1, 2))


@vjp_rule("select")
def _select_vjp(b, op, primals, results, cts):
    pred, (ct,) = primals[0], cts
    zero = zeros_like(b, ct)
    if pred.shape != ct.shape:
        pred = b.broadcast_in_dim(pred, ct.shape, ())
    return [None, b.select(pred, ct, zero), b.select(pred, zero, ct)]


@batching_rule("select")
def _batch_select(b, op, operands, dims):
    pred, on_true, on_false = operands
    lane_shape, pred_dim = op.results[0].shape, dims[0]
    if pred_dim is not None and op.operands[0].shape == () and lane_shape != ():
        # one scalar predicate per lane: spread it over the lane
        pred = b.broadcast_in_dim(pred, (pred.shape[pred_dim],) + lane_shape, (0,))
        pred_dim = 0
    if pred_dim is None and pred.shape == ():
        (on_true, on_false), dim = align_batched(b, [on_true, on_false], dims[1:])
        return [b.select(pred, on_true, on_false)], [dim]
    (pred, on_true, on_false), dim = align_batched(b, [pred, on_true, on_false],
                                                   (pred_dim,) + tuple(dims[1:]))
    return [b.select(pred, on_true, on_false)], [dim]

# --- convert ------------------------------------------------------------------------------


@checks("convert")
def _check_convert(operands, attrs):
    (x,) = operands
    return [(x.shape, attrs["dtype"])]


lowers("convert")(lambda p, op: p.generic(op, "convert"))


@jvp_rule("convert")
def _convert_jvp(b, op, primals, tangents):
    results = replay(b, op, primals)
    if tangents[0] is None or not is_float(results[0]) or not is_float(primals[0]):
        return results, [None]
    return results, [replay(b, op, tangents)[0]]


@vjp_rule("convert")
def _convert_vjp(b, op, primals, results, cts):
    (x,) = primals
    return [b.convert(cts[0], x.dtype) if dtypes.is_inexact(x.dtype) else None]


batching_rule("convert")(lambda b, op, operands, dims: batch_elementwise(b, op, operands, dims))

# --- bitcast_convert ----------------------------------------------------------------------
# The same bits read as another dtype of the same width (NumPy's ``x.view(dtype)``): what
# `runtime.random` turns random bits into floats with.


@checks("bitcast_convert")
def _check_bitcast_convert(operands, attrs):
    (x,), dtype = operands, attrs["dtype"]
    require(dtype.itemsize == x.dtype.itemsize and dtypes.bool_ not in (dtype, x.dtype),
            PSCTypeError, f"bitcast_convert keeps the width: cannot read {fmt(x)} as "
            f"{dtype.name}")
    return [(x.shape, dtype)]


lowers("bitcast_convert")(lambda p, op: p.generic(op, "bitcast_convert"))
nondifferentiable("bitcast_convert")   # a bit pattern has no derivative (as jax)
batching_rule("bitcast_convert")(batch_elementwise)

# Every element-wise primitive must be declared above.
assert all(primitive(name).check for name, _ in BUILDER_METHODS.values())

# --- issue 15: reduce_precision ---------------------------------------------------------------
# Rounding to a float format of ``exponent_bits`` and ``mantissa_bits`` (round to nearest
# even, overflow to inf), kept in the operand's dtype.  As in JAX, its derivative is the
# rounding applied to the tangent (and to the cotangent): the op counts as linear.


@checks("reduce_precision")
def _check_reduce_precision(operands, attrs):
    (x,) = operands
    check_kind("reduce_precision", x, FLOAT)
    require(attrs["exponent_bits"] >= 1 and attrs["mantissa_bits"] >= 0, PSCValueError,
            f"reduce_precision needs exponent_bits >= 1 and mantissa_bits >= 0, got "
            f"{attrs['exponent_bits']} and {attrs['mantissa_bits']}")
    return [(x.shape, x.dtype)]


lowers("reduce_precision")(lambda p, op: p.generic(
    op, "reduce_precision", f"exponent_bits = {op.attrs['exponent_bits']} : i32, "
                            f"mantissa_bits = {op.attrs['mantissa_bits']} : i32"))
linear_jvp("reduce_precision")
vjp_rule("reduce_precision")(
    lambda b, op, primals, results, cts: [replay(b, op, [cts[0]])[0]])
batching_rule("reduce_precision")(batch_elementwise)
