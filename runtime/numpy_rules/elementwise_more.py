"""More element-wise NumPy functions: ``ldexp``, ``frexp``, ``modf``, ``gcd``, ``lcm``,
``heaviside``, ``nextafter``, ``spacing``, ``bitwise_count``, ``sinc``, ``i0``,
``nan_to_num``, ``isposinf``, ``isneginf`` (and the name ``true_divide``).

The ufuncs take NumPy's loop dtypes (`apply_ufunc`: bool ``modf``/``frexp`` are float16,
integer ``ldexp`` is float64, ``bitwise_count`` is uint8...).  ``ldexp`` scales as C's
``scalbn`` does (two partial steps, so that no intermediate over- or underflows and a
subnormal result is rounded once); ``frexp`` reads the exponent from the bits (subnormals
scaled up first) and gives the mantissa as ``ldexp(x, -e)``, so that it has a derivative
(``2**-e``); ``modf``'s fractional part has the sign of ``x`` (``modf(-2.0)`` is
``(-0.0, -2.0)``; ``modf(inf)`` is ``(0.0, inf)``).  ``gcd`` runs Euclid's algorithm in a
loop until every lane is done.  ``sinc``, ``i0`` and ``nan_to_num`` follow NumPy's own
Python code (``i0`` uses NumPy's Chebyshev coefficients, read from NumPy), so their dtypes
and edge cases are NumPy's.  ``nan_to_num(copy=False)`` is refused: NumPy changes the
argument in place.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..errors import PSCTypeError, PSCValueError
from ..translation import register_translation_rule, translate_numpy
from ._core import broadcast_to, full_like_value, lift, promote_and_broadcast, \
    resolve_ufunc_dtypes
from .elementwise import UFUNC_RULES, apply_ufunc

_FLOAT16 = np.dtype(np.float16)
# float dtype -> (largest exponent, smallest normal exponent, mantissa bits, same-width int)
_FORMATS = {np.dtype(np.float64): (1023, -1022, 52, np.dtype(np.int64)),
            np.dtype(np.float32): (127, -126, 23, np.dtype(np.int32)),
            np.dtype(np.float16): (15, -14, 10, np.dtype(np.int16))}


def _format(b, x):
    found = _FORMATS.get(x.dtype)
    if found is None:
        raise b.error(PSCTypeError, f"{x.dtype} is not supported here (float16, float32 "
                      "and float64 are)")
    return found


def _refuse_out(b, name, kwargs):
    if kwargs.pop("out", None) is not None:
        raise b.error(PSCTypeError, f"np.{name}(..., out=...) writes into an array, which "
                      "PSC functions cannot do", "use the returned value")


def _ufunc_rule(ufunc, impl):
    def rule(b, *args, **kwargs):
        return apply_ufunc(b, ufunc, impl, args, dict(kwargs))
    rule.__name__ = f"numpy_{ufunc.__name__}"
    return rule


def _two_output_ufunc(ufunc, impl):
    """A ufunc with two results (``frexp``, ``modf``): NumPy's loop dtypes for both."""
    def rule(b, *args, **kwargs):
        _refuse_out(b, ufunc.__name__, kwargs)
        if kwargs:
            raise b.error(PSCTypeError, f"np.{ufunc.__name__}: unsupported keyword "
                          f"arguments {sorted(kwargs)}")
        if len(args) != ufunc.nin:
            raise b.error(PSCTypeError, f"np.{ufunc.__name__} takes {ufunc.nin} argument, "
                          f"got {len(args)}")
        in_dtypes, out_dtypes = resolve_ufunc_dtypes(b, ufunc, args)
        operands = promote_and_broadcast(b, args, in_dtypes)
        return tuple(b.convert(r, d) for r, d in zip(impl(b, *operands), out_dtypes))
    rule.__name__ = f"numpy_{ufunc.__name__}"
    return rule


def _const(b, value, like, dtype=None):
    return full_like_value(b, value, like, dtype)


# --- ldexp, frexp, modf ----------------------------------------------------------------


def _power_of_two(b, n, like):
    """``2.0**n`` in ``like``'s dtype, for integer ``n`` in the normal exponent range."""
    top, low, mantissa, int_dtype = _FORMATS[like.dtype]
    biased = b.add(b.convert(n, int_dtype), _const(b, top, n, int_dtype))
    return b.bitcast_convert(b.shift_left(biased, _const(b, mantissa, n, int_dtype)),
                             like.dtype)


def scale_by_power_of_two(b, x, n):
    """``x * 2**n`` (C's ``scalbn``, musl's algorithm): at most two partial steps each way,
    then one multiplication that rounds at most once.  float16 is scaled in float32 (exact
    there) and rounded once on the way back."""
    if x.dtype == _FLOAT16:
        n = b.min(b.max(b.convert(n, dtypes.int64), _const(b, -64, n, dtypes.int64)),
                  _const(b, 64, n, dtypes.int64))
        return b.convert(scale_by_power_of_two(b, b.convert(x, dtypes.float32), n), x.dtype)
    top, low, mantissa, _ = _format(b, x)
    bound = top - low + mantissa + 2   # beyond it every finite x over- or underflows
    n = b.convert(n, dtypes.int64)
    n = b.min(b.max(n, _const(b, -bound, n)), _const(b, bound, n))
    down_step = low + mantissa + 1   # a step down that keeps a normal x normal
    for _ in range(2):
        up = b.gt(n, _const(b, top, n))
        x = b.select(up, b.mul(x, _const(b, 2.0 ** top, x)), x)
        n = b.select(up, b.sub(n, _const(b, top, n)), n)
        down = b.lt(n, _const(b, low, n))
        x = b.select(down, b.mul(x, _const(b, 2.0 ** down_step, x)), x)
        n = b.select(down, b.sub(n, _const(b, down_step, n)), n)
    n = b.min(b.max(n, _const(b, low, n)), _const(b, top, n))
    return b.mul(x, _power_of_two(b, n, x))


def _frexp(b, x):
    top, low, mantissa, int_dtype = _format(b, x)
    zero = _const(b, 0, x)
    special = b.or_(b.eq(x, zero), b.not_(b.is_finite(x)))
    subnormal = b.and_(b.lt(b.abs(x), _const(b, 2.0 ** low, x)), b.ne(x, zero))
    scaled = b.select(subnormal, b.mul(x, _const(b, 2.0 ** (mantissa + 1), x)), x)
    bits = b.bitcast_convert(scaled, int_dtype)
    field = b.and_(b.shift_right_logical(bits, _const(b, mantissa, bits)),
                   _const(b, 2 * top + 1, bits))
    exponent = b.sub(b.convert(field, dtypes.int32), _const(b, top - 1, x, dtypes.int32))
    exponent = b.select(subnormal, b.sub(exponent, _const(b, mantissa + 1, exponent)),
                        exponent)
    exponent = b.select(special, _const(b, 0, exponent), exponent)
    return scale_by_power_of_two(b, x, b.neg(exponent)), exponent


def _trunc(b, x):
    return b.select(b.lt(x, _const(b, 0, x)), b.ceil(x), b.floor(x))


def _modf(b, x):
    whole = _trunc(b, x)
    fraction = b.abs(b.sub(x, whole))
    fraction = b.select(b.eq(b.abs(x), _const(b, np.inf, x)), _const(b, 0, x), fraction)
    int_dtype = _format(b, x)[3]   # the sign bit: -0.0 (and -nan) count as negative
    negative = b.lt(b.bitcast_convert(x, int_dtype), _const(b, 0, x, int_dtype))
    return b.select(negative, b.neg(fraction), fraction), whole


# --- gcd, lcm --------------------------------------------------------------------------


def _magnitude(b, x):
    return x if dtypes.is_unsigned(x.dtype) else b.abs(x)


def _gcd(b, x, y):
    """Euclid's algorithm on every lane at once, until every lane's remainder is 0."""
    def not_done(sb, state):
        pending = sb.ne(state[1], _const(sb, 0, state[1]))
        return sb.reduce(pending, "or", range(pending.ndim))

    def step(sb, state):
        a, c = state
        done = sb.eq(c, _const(sb, 0, c))
        safe = sb.select(done, _const(sb, 1, c), c)
        return (sb.select(done, a, c), sb.select(done, c, sb.rem(a, safe)))
    return b.while_loop(not_done, step, (_magnitude(b, x), _magnitude(b, y)))[0]


def _lcm(b, x, y):
    g = _gcd(b, x, y)
    zero = b.eq(g, _const(b, 0, g))
    quotient = b.div(_magnitude(b, x), b.select(zero, _const(b, 1, g), g))
    # (NumPy's npy_lcm: |x| / g * |y|, wrapping where that overflows)
    return b.select(zero, _const(b, 0, g), b.mul(quotient, _magnitude(b, y)))


# --- heaviside, nextafter, spacing, bitwise_count -----------------------------------------


def _heaviside(b, x, h):
    zero = _const(b, 0, x)
    at_zero = b.select(b.eq(x, zero), h, x)   # NaN stays NaN
    return b.select(b.lt(x, zero), zero, b.select(b.gt(x, zero), _const(b, 1, x), at_zero))


def _spacing(b, x):
    """NumPy's ``npy_spacing``: one step away from zero (-0.0 steps up), NaN at inf; its
    float16 version always steps up (``spacing(float16(-1))`` is ``+2**-11``)."""
    toward = _const(b, np.inf, x)
    if x.dtype != _FLOAT16:
        toward = b.select(b.lt(x, _const(b, 0, x)), b.neg(toward), toward)
    step = b.sub(b.next_after(x, toward), x)
    return b.select(b.eq(b.abs(x), _const(b, np.inf, x)), _const(b, np.nan, x), step)


def _bitwise_count(b, x):
    return b.popcnt(_magnitude(b, x))


for _ufunc, _impl in ((np.ldexp, scale_by_power_of_two), (np.gcd, _gcd), (np.lcm, _lcm),
                      (np.heaviside, _heaviside),
                      (np.nextafter, lambda b, x, y: b.next_after(x, y)),
                      (np.spacing, _spacing), (np.bitwise_count, _bitwise_count)):
    register_translation_rule(f"numpy.{_ufunc.__name__}", _ufunc_rule(_ufunc, _impl))
register_translation_rule("numpy.frexp", _two_output_ufunc(np.frexp, _frexp))
register_translation_rule("numpy.modf", _two_output_ufunc(np.modf, _modf))
register_translation_rule("numpy.true_divide", UFUNC_RULES[np.true_divide])


# --- functions written in NumPy: sinc, i0, nan_to_num, isposinf, isneginf ---------------


def sinc(b: Builder, x):
    """NumPy's ``sinc``: ``y = pi * where(x == 0, 1e-20, x); sin(y) / y``."""
    x = lift(b, x)
    y = translate_numpy(b, np.where, UFUNC_RULES[np.equal](b, x, 0), 1.0e-20, x)
    y = UFUNC_RULES[np.multiply](b, math.pi, y)
    return UFUNC_RULES[np.true_divide](b, UFUNC_RULES[np.sin](b, y), y)


def _chebyshev(b, x, coefficients):
    """NumPy's ``_chbevl`` (Clenshaw's recurrence), in ``x``'s dtype."""
    b0, b1, b2 = _const(b, coefficients[0], x), _const(b, 0, x), _const(b, 0, x)
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = b.add(b.sub(b.mul(x, b1), b2), _const(b, c, x))
    return b.mul(_const(b, 0.5, x), b.sub(b0, b2))


def i0(b: Builder, x):
    """NumPy's ``i0``: Chebyshev series on ``[0, 8]`` and above (Cephes' coefficients,
    as NumPy has them), in the float dtype of ``x`` (float64 for integers)."""
    from numpy.lib import _function_base_impl as numpy_impl
    x = lift(b, x)
    if dtypes.is_complex(x.dtype):
        raise b.error(PSCTypeError, "i0 not supported for complex values")
    if not dtypes.is_floating(x.dtype):
        x = b.convert(x, dtypes.float64)
    x = b.abs(x)
    small = b.mul(b.exp(x), _chebyshev(b, b.sub(b.mul(x, _const(b, 0.5, x)), _const(b, 2, x)),
                                       numpy_impl._i0A))
    safe = b.select(b.le(x, _const(b, 8.0, x)), _const(b, 32.0, x), x)
    large = b.div(b.mul(b.exp(safe), _chebyshev(b, b.sub(b.div(_const(b, 32.0, x), safe),
                                                         _const(b, 2, x)), numpy_impl._i0B)),
                  b.sqrt(safe))
    return b.select(b.le(x, _const(b, 8.0, x)), small, large)


def nan_to_num(b: Builder, x, copy=True, nan=0.0, posinf=None, neginf=None):
    if not copy:
        raise b.error(PSCValueError, "np.nan_to_num(..., copy=False) changes its argument "
                      "in place, which PSC functions cannot do",
                      "write x = np.nan_to_num(x) (copy=True, the default)")
    x = lift(b, x)
    if not dtypes.is_inexact(x.dtype):
        return x
    if dtypes.is_complex(x.dtype):
        return b.complex(*(_finite_part(b, part, nan, posinf, neginf)
                           for part in (b.real(x), b.imag(x))))
    return _finite_part(b, x, nan, posinf, neginf)


def _finite_part(b, x, nan, posinf, neginf):
    info = np.finfo(x.dtype)
    for replaced, value, default in (
            (b.ne(x, x), nan, 0.0),
            (b.eq(x, _const(b, np.inf, x)), posinf, info.max),
            (b.eq(x, _const(b, -np.inf, x)), neginf, info.min)):
        value = default if value is None else value
        x = b.select(replaced, broadcast_to(b, lift(b, value, x.dtype), x.shape), x)
    return x


def _signed_infinity(negative: bool):
    def rule(b: Builder, x, out=None):
        _refuse_out(b, "isneginf" if negative else "isposinf", {"out": out})
        x = lift(b, x)
        if dtypes.is_complex(x.dtype):
            raise b.error(PSCTypeError, f"This operation is not supported for {x.dtype} "
                          "values because it would be ambiguous.")
        sign = UFUNC_RULES[np.signbit](b, x)
        if not negative:
            sign = b.not_(sign)
        return b.and_(UFUNC_RULES[np.isinf](b, x), sign)
    return rule


for _name, _rule in (("sinc", sinc), ("i0", i0), ("nan_to_num", nan_to_num),
                     ("isposinf", _signed_infinity(False)),
                     ("isneginf", _signed_infinity(True))):
    register_translation_rule(f"numpy.{_name}", _rule)
