"""Differentiation rules for every primitive in `runtime.ops.OP_DEFS`.

* `PARTIALS`: element-wise ops, as the partial derivative of the result with respect to
  each operand (builder code given the operands and the result).  Forward mode multiplies
  tangents by them; reverse mode multiplies the cotangent by them.  One table, both modes.
* `LINEAR`: structural ops that are linear in (some of) their operands.  Forward mode
  applies the op itself to the tangents; `TRANSPOSE` rules give reverse mode.
* `JVP` / `VJP`: the other ops (reductions by max/min/prod, sort, dot_general...).
* `NONDIFFERENTIABLE`: ops whose results carry no derivative (comparisons, integer ops,
  iota, argmax): their tangents are zero.
Control flow (``while``, ``case``) lives in `control.py`.  `tests/test_registries.py` checks
every op has a rule in both modes.

At non-differentiable points JAX's conventions: ``max``/``min`` split the derivative evenly
between tied operands; ``abs'(0) = 1`` (``select(x >= 0, g, -g)``); ``floor``/``round``/
``sign`` have zero derivative.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..errors import PSCUnsupportedCallError


def _const(b, value, like):
    return b.broadcast_in_dim(b.constant(np.asarray(value, like.dtype)), like.shape, ())


def _recip(b, x):
    return b.div(_const(b, 1, x), x)


# --- element-wise: partial derivatives ------------------------------------------------------

def _balanced(b, x, y, r):
    """d max(x, y)/dx: 1 where x alone attains the result, 1/2 on ties (JAX's choice)."""
    one, half, zero = _const(b, 1, r), _const(b, 0.5, r), _const(b, 0, r)
    return b.select(b.eq(x, r), b.select(b.eq(y, r), half, one), zero)


def _pow_dx(b, x, y, r):
    # y * x**(y-1), with 0 where y == 0 (so 0**0 has derivative 0, as JAX)
    dx = b.mul(y, b.pow(x, b.sub(y, _const(b, 1, y))))
    return b.select(b.eq(y, _const(b, 0, y)), _const(b, 0, dx), dx)


def _pow_dy(b, x, y, r):
    # log(x) * x**y, with log(0) replaced by 0 (JAX's convention for 0**y)
    safe = b.select(b.eq(x, _const(b, 0, x)), _const(b, 1, x), x)
    return b.mul(b.log(safe), r)


def _atan2_parts(b, x, y, r):
    denominator = b.add(b.mul(x, x), b.mul(y, y))
    return b.div(y, denominator), b.neg(b.div(x, denominator))


def _sqrt_pi_term(b, x, scale):
    return b.mul(_const(b, scale, x), b.exp(b.neg(b.mul(x, x))))


def _no_partial(name):
    def rule(b, *args):
        raise b.error(PSCUnsupportedCallError, f"the derivative of {name} is not available",
                      "differentiate a function that avoids it")
    return rule


# name -> function(b, *operands, result) -> tuple of partials, one per operand
PARTIALS = {
    "negate": lambda b, x, r: (_const(b, -1, x),),
    "abs": lambda b, x, r: (b.select(b.ge(x, _const(b, 0, x)), _const(b, 1, x),
                                     _const(b, -1, x)),),   # abs'(0) = 1, as JAX
    "exponential": lambda b, x, r: (r,),
    "log": lambda b, x, r: (_recip(b, x),),
    "log_plus_one": lambda b, x, r: (_recip(b, b.add(x, _const(b, 1, x))),),
    "exponential_minus_one": lambda b, x, r: (b.add(r, _const(b, 1, r)),),
    "sqrt": lambda b, x, r: (b.div(_const(b, 0.5, r), r),),
    "rsqrt": lambda b, x, r: (b.div(b.mul(_const(b, -0.5, r), r), x),),
    "cbrt": lambda b, x, r: (b.div(r, b.mul(_const(b, 3, x), x)),),
    "sine": lambda b, x, r: (b.cos(x),),
    "cosine": lambda b, x, r: (b.neg(b.sin(x)),),
    "tan": lambda b, x, r: (b.add(_const(b, 1, r), b.mul(r, r)),),
    "tanh": lambda b, x, r: (b.sub(_const(b, 1, r), b.mul(r, r)),),
    "logistic": lambda b, x, r: (b.mul(r, b.sub(_const(b, 1, r), r)),),
    "asin": lambda b, x, r: (b.rsqrt(b.sub(_const(b, 1, x), b.mul(x, x))),),
    "acos": lambda b, x, r: (b.neg(b.rsqrt(b.sub(_const(b, 1, x), b.mul(x, x)))),),
    "atan": lambda b, x, r: (_recip(b, b.add(_const(b, 1, x), b.mul(x, x))),),
    "sinh": lambda b, x, r: (b.cosh(x),),
    "cosh": lambda b, x, r: (b.sinh(x),),
    "asinh": lambda b, x, r: (b.rsqrt(b.add(b.mul(x, x), _const(b, 1, x))),),
    "acosh": lambda b, x, r: (b.rsqrt(b.sub(b.mul(x, x), _const(b, 1, x))),),
    "atanh": lambda b, x, r: (_recip(b, b.sub(_const(b, 1, x), b.mul(x, x))),),
    "erf": lambda b, x, r: (_sqrt_pi_term(b, x, 2 / math.sqrt(math.pi)),),
    "erfc": lambda b, x, r: (_sqrt_pi_term(b, x, -2 / math.sqrt(math.pi)),),
    "erf_inv": lambda b, x, r: (b.mul(_const(b, math.sqrt(math.pi) / 2, r),
                                      b.exp(b.mul(r, r))),),
    "lgamma": lambda b, x, r: (b.digamma(x),),
    "digamma": _no_partial("digamma"),
    "add": lambda b, x, y, r: (_const(b, 1, x), _const(b, 1, y)),
    "subtract": lambda b, x, y, r: (_const(b, 1, x), _const(b, -1, y)),
    "multiply": lambda b, x, y, r: (y, x),
    "divide": lambda b, x, y, r: (_recip(b, y), b.neg(b.div(r, y))),
    "remainder": lambda b, x, y, r: (_const(b, 1, x), b.neg(b.round_nearest_even(
        b.sub(b.div(x, y), b.div(r, y))))),
    "power": lambda b, x, y, r: (_pow_dx(b, x, y, r), _pow_dy(b, x, y, r)),
    "maximum": lambda b, x, y, r: (_balanced(b, x, y, r), _balanced(b, y, x, r)),
    "minimum": lambda b, x, y, r: (_balanced(b, x, y, r), _balanced(b, y, x, r)),
    "atan2": _atan2_parts,
}

# Results with no derivative (integer/bool results, or piecewise-constant functions).
NONDIFFERENTIABLE = frozenset({
    "sign", "floor", "ceil", "round_nearest_afz", "round_nearest_even", "not", "is_finite",
    "and", "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical",
    "compare", "iota", "constant", "argmax", "argmin",
})


def is_float(value) -> bool:
    return dtypes.is_inexact(value.dtype)
