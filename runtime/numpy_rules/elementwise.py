"""Element-wise NumPy functions (ufuncs and friends) and the Python operators on arrays.

Each ufunc rule is an *implementation* on operands that already have NumPy's loop dtype and
the broadcast shape (`apply_ufunc` does that part, the same for all of them).  Where XLA's
op differs from NumPy's function (integer floor division, ``%`` with negative operands,
NaN in ``maximum``), the implementation says how.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..checks import guard
from ..errors import PSCTypeError, PSCValueError
from ..ir import Value
from ..translation import has_traced, register_translation_rule
from ._core import (cast, full_like_value, lift, promote_and_broadcast, resolve_ufunc_dtypes,
                    static_int)


def apply_ufunc(b: Builder, ufunc: np.ufunc, impl, args, kwargs) -> Value:
    """NumPy semantics around ``impl(b, *operands)``: loop dtypes, broadcasting, weakness."""
    dtype = kwargs.pop("dtype", None)
    if kwargs.pop("out", None) is not None or len(args) == ufunc.nin + ufunc.nout:
        raise b.error(PSCTypeError, f"np.{ufunc.__name__}(..., out) whose result is used: "
                      "PSC writes into `out` only in a call statement of its own",
                      f"write `np.{ufunc.__name__}(..., out)` on its own line (the variable "
                      "is updated, as NumPy's array is), or use the returned value")
    if kwargs:
        raise b.error(PSCTypeError, f"np.{ufunc.__name__}: unsupported keyword arguments "
                      f"{sorted(kwargs)}")
    if len(args) != ufunc.nin:
        raise b.error(PSCTypeError, f"np.{ufunc.__name__} takes {ufunc.nin} arguments, got "
                      f"{len(args)}")
    in_dtypes, (out_dtype,) = resolve_ufunc_dtypes(b, ufunc, args)
    if dtype is not None:
        in_dtypes = [np.dtype(dtype)] * len(in_dtypes)
        out_dtype = out_dtype if out_dtype == dtypes.bool_ else np.dtype(dtype)
    operands = promote_and_broadcast(b, args, in_dtypes)
    result = b.convert(impl(b, *operands), out_dtype)
    result.weak = out_dtype != dtypes.bool_ and all(
        getattr(a, "weak", type(a) in (int, float, complex)) for a in args)
    return result


def _is_float(v: Value) -> bool:
    return dtypes.is_inexact(v.dtype)


def _zero(b, like):
    return full_like_value(b, 0, like)


def _isnan(b, x):
    return b.ne(x, x) if _is_float(x) else full_like_value(b, False, x, dtypes.bool_)


def _nan_aware(op, nan_wins: bool):
    """maximum/minimum (a NaN operand wins, as NumPy; XLA's choice differs by backend) and
    fmax/fmin (a NaN operand loses)."""
    def impl(b, x, y):
        result = getattr(b, op)(x, y)
        if not _is_float(x):
            return result
        if_x_nan, if_y_nan = (x, y) if nan_wins else (y, x)
        return b.select(b.ne(x, x), if_x_nan, b.select(b.ne(y, y), if_y_nan, result))
    return impl


def _guard_division(b, y, zero):
    """The ``div`` run-time check (`runtime.checks`): NumPy warns where this gives 0."""
    guard(b, "div", b.eq(y, zero), "integer division or modulo by zero")


def _int_floor_divide(b, x, y):
    """Floor division rounding towards -inf; division by zero gives 0, as NumPy does."""
    zero = _zero(b, x)
    _guard_division(b, y, zero)
    safe_y = b.select(b.eq(y, zero), full_like_value(b, 1, y), y)
    quotient = b.div(x, safe_y)
    if dtypes.is_unsigned(x.dtype):
        return b.select(b.eq(y, zero), zero, quotient)
    remainder = b.rem(x, safe_y)
    needs_fix = b.and_(b.ne(remainder, zero), b.ne(b.lt(remainder, zero), b.lt(safe_y, zero)))
    quotient = b.select(needs_fix, b.sub(quotient, full_like_value(b, 1, x)), quotient)
    return b.select(b.eq(y, zero), zero, quotient)


def _float_divmod(b, x, y):
    """NumPy's ``npy_divmod`` for floats: (floor quotient, remainder with the sign of y)."""
    zero = _zero(b, x)
    mod = b.rem(x, y)
    div = b.div(b.sub(x, mod), y)
    fix = b.and_(b.ne(mod, zero), b.ne(b.lt(y, zero), b.lt(mod, zero)))
    mod = b.select(fix, b.add(mod, y), mod)
    signed_zero = b.select(b.lt(y, zero), b.neg(zero), zero)   # a zero remainder: y's sign
    mod = b.select(b.eq(mod, zero), signed_zero, mod)
    div = b.select(fix, b.sub(div, full_like_value(b, 1, x)), div)
    floordiv = b.floor(div)
    round_up = b.gt(b.sub(div, floordiv), full_like_value(b, 0.5, x))
    floordiv = b.select(round_up, b.add(floordiv, full_like_value(b, 1, x)), floordiv)
    floordiv = b.select(b.eq(div, zero), b.mul(zero, b.div(x, y)), floordiv)
    by_zero = b.eq(y, zero)
    return b.select(by_zero, b.div(x, y), floordiv), b.select(by_zero, b.rem(x, y), mod)


def _floor_divide(b, x, y):
    return _float_divmod(b, x, y)[0] if _is_float(x) else _int_floor_divide(b, x, y)


def _remainder(b, x, y):
    if _is_float(x):
        return _float_divmod(b, x, y)[1]
    zero = _zero(b, x)
    _guard_division(b, y, zero)
    safe_y = b.select(b.eq(y, zero), full_like_value(b, 1, y), y)
    remainder = b.rem(x, safe_y)
    if not dtypes.is_unsigned(x.dtype):
        fix = b.and_(b.ne(remainder, zero), b.ne(b.lt(remainder, zero), b.lt(safe_y, zero)))
        remainder = b.select(fix, b.add(remainder, safe_y), remainder)
    return b.select(b.eq(y, zero), zero, remainder)


def _fmod(b, x, y):
    if _is_float(x):
        return b.rem(x, y)
    zero = _zero(b, x)
    _guard_division(b, y, zero)
    safe_y = b.select(b.eq(y, zero), full_like_value(b, 1, y), y)
    return b.select(b.eq(y, zero), zero, b.rem(x, safe_y))


def _logaddexp(log_base):
    """log(base**x + base**y) = larger + log1p(base**(smaller - larger)), without overflow.

    Which operand counts as the larger is chosen once (``x >= y``) and used for both
    terms, so the formula is smooth through ties and its first and second derivatives are
    right there (1/2 each; no ``abs``/``max`` kinks).  Only equal infinities need a special
    case (their difference is NaN)."""
    def impl(b, x, y):
        first = b.ge(x, y)
        larger = b.select(first, x, y)
        gap = b.select(first, b.sub(y, x), b.sub(x, y))   # <= 0
        if log_base == 1.0:
            tail = b.log1p(b.exp(gap))
        else:
            scale = full_like_value(b, log_base, x)
            tail = b.div(b.log1p(b.exp(b.mul(gap, scale))), scale)
        same_infinity = b.and_(b.eq(x, y), _isinf(b, x))
        return b.select(same_infinity, x, b.add(larger, tail))   # NaN flows through tail
    return impl


def _truthy(b, x):
    return x if x.dtype == dtypes.bool_ else b.ne(x, _zero(b, x))


def _logical(op):
    def impl(b, x, y):
        return getattr(b, op)(_truthy(b, x), _truthy(b, y))
    return impl


def _right_shift(b, x, y):
    if dtypes.is_unsigned(x.dtype):
        return b.shift_right_logical(x, y)
    return b.shift_right_arithmetic(x, y)


def _int_identity_or(op):
    """floor/ceil/trunc: integer inputs are already integral (NumPy 2 keeps the dtype)."""
    def impl(b, x):
        return op(b, x) if _is_float(x) else x
    return impl


def _trunc(b, x):
    return b.select(b.lt(x, _zero(b, x)), b.ceil(x), b.floor(x))


def _scaled(op, factor):
    def impl(b, x):
        return op(b, b.mul(x, full_like_value(b, factor, x)))
    return impl


def _isinf(b, x):
    if not _is_float(x):
        return full_like_value(b, False, x, dtypes.bool_)
    return b.eq(b.abs(x), full_like_value(b, np.inf, b.abs(x)))


def _isfinite(b, x):
    if dtypes.is_complex(x.dtype):   # both parts finite
        return b.and_(b.is_finite(b.real(x)), b.is_finite(b.imag(x)))
    return b.is_finite(x) if _is_float(x) else full_like_value(b, True, x, dtypes.bool_)


def _signbit(b, x):
    if not _is_float(x):
        return b.lt(x, _zero(b, x)) if not dtypes.is_unsigned(x.dtype) else \
            full_like_value(b, False, x, dtypes.bool_)
    negative_zero = b.and_(b.eq(x, _zero(b, x)),
                           b.lt(b.div(full_like_value(b, 1, x), x), _zero(b, x)))
    return b.or_(b.lt(x, _zero(b, x)), negative_zero)


def _hypot(b, x, y):
    """Scaled so that squares cannot overflow; an infinite side wins over NaN (C99)."""
    ax, ay = b.abs(x), b.abs(y)
    big, small = b.max(ax, ay), b.min(ax, ay)
    safe_big = b.select(b.eq(big, _zero(b, big)), full_like_value(b, 1, big), big)
    ratio = b.div(small, safe_big)
    result = b.mul(big, b.sqrt(b.add(full_like_value(b, 1, big), b.mul(ratio, ratio))))
    result = b.select(b.or_(b.ne(x, x), b.ne(y, y)), full_like_value(b, np.nan, result),
                      result)
    return b.select(b.or_(_isinf(b, x), _isinf(b, y)), full_like_value(b, np.inf, result),
                    result)


def _reciprocal(b, x):
    one = full_like_value(b, 1, x)
    if _is_float(x):
        return b.div(one, x)
    zero = _zero(b, x)   # NumPy's integer 1/0 is 0; XLA's is -1
    is_zero = b.eq(x, zero)
    return b.select(is_zero, zero, b.div(one, b.select(is_zero, one, x)))


def _sign(b, x):
    if x.dtype == dtypes.bool_:
        return x
    if dtypes.is_unsigned(x.dtype):
        return b.convert(b.ne(x, _zero(b, x)), x.dtype)
    return b.sign(x)


def _abs(b, x):
    return x if x.dtype == dtypes.bool_ or dtypes.is_unsigned(x.dtype) else b.abs(x)


def _copysign(b, x, y):
    magnitude = b.abs(x)
    return b.select(_signbit(b, y), b.neg(magnitude), magnitude)


_LN2 = math.log(2.0)
UFUNC_IMPLS = {
    # arithmetic
    np.add: lambda b, x, y: b.add(x, y),
    np.subtract: lambda b, x, y: b.sub(x, y),
    np.multiply: lambda b, x, y: b.mul(x, y),
    np.true_divide: lambda b, x, y: b.div(x, y),
    np.floor_divide: _floor_divide,
    np.remainder: _remainder,
    np.fmod: _fmod,
    np.power: lambda b, x, y: b.pow(x, y),
    np.float_power: lambda b, x, y: b.pow(x, y),
    np.maximum: _nan_aware("max", nan_wins=True),
    np.minimum: _nan_aware("min", nan_wins=True),
    np.fmax: _nan_aware("max", nan_wins=False),
    np.fmin: _nan_aware("min", nan_wins=False),
    np.arctan2: lambda b, x, y: b.atan2(x, y),
    np.hypot: _hypot,
    np.logaddexp: _logaddexp(1.0),
    np.logaddexp2: _logaddexp(_LN2),
    np.copysign: _copysign,
    # comparisons and logic
    np.equal: lambda b, x, y: b.eq(x, y),
    np.not_equal: lambda b, x, y: b.ne(x, y),
    np.less: lambda b, x, y: b.lt(x, y),
    np.less_equal: lambda b, x, y: b.le(x, y),
    np.greater: lambda b, x, y: b.gt(x, y),
    np.greater_equal: lambda b, x, y: b.ge(x, y),
    np.logical_and: _logical("and_"),
    np.logical_or: _logical("or_"),
    np.logical_xor: _logical("xor"),
    np.logical_not: lambda b, x: b.not_(_truthy(b, x)),
    np.bitwise_and: lambda b, x, y: b.and_(x, y),
    np.bitwise_or: lambda b, x, y: b.or_(x, y),
    np.bitwise_xor: lambda b, x, y: b.xor(x, y),
    np.invert: lambda b, x: b.not_(x),
    np.left_shift: lambda b, x, y: b.shift_left(x, y),
    np.right_shift: _right_shift,
    # unary arithmetic
    np.negative: lambda b, x: b.neg(x),
    np.positive: lambda b, x: x,
    np.absolute: _abs,
    np.fabs: _abs,
    np.sign: _sign,
    np.square: lambda b, x: b.mul(x, x),
    np.reciprocal: _reciprocal,
    np.sqrt: lambda b, x: b.sqrt(x),
    np.cbrt: lambda b, x: b.cbrt(x),
    # exponentials and logarithms
    np.exp: lambda b, x: b.exp(x),
    np.exp2: lambda b, x: b.pow(full_like_value(b, 2, x), x),
    np.expm1: lambda b, x: b.expm1(x),
    np.log: lambda b, x: b.log(x),
    np.log2: lambda b, x: b.div(b.log(x), full_like_value(b, _LN2, x)),
    np.log10: lambda b, x: b.div(b.log(x), full_like_value(b, math.log(10.0), x)),
    np.log1p: lambda b, x: b.log1p(x),
    # trigonometric and hyperbolic
    np.sin: lambda b, x: b.sin(x),
    np.cos: lambda b, x: b.cos(x),
    np.tan: lambda b, x: b.tan(x),
    np.arcsin: lambda b, x: b.asin(x),
    np.arccos: lambda b, x: b.acos(x),
    np.arctan: lambda b, x: b.atan(x),
    np.sinh: lambda b, x: b.sinh(x),
    np.cosh: lambda b, x: b.cosh(x),
    np.tanh: lambda b, x: b.tanh(x),
    np.arcsinh: lambda b, x: b.asinh(x),
    np.arccosh: lambda b, x: b.acosh(x),
    np.arctanh: lambda b, x: b.atanh(x),
    np.deg2rad: _scaled(lambda b, x: x, math.pi / 180.0),
    np.rad2deg: _scaled(lambda b, x: x, 180.0 / math.pi),
    # rounding
    np.floor: _int_identity_or(lambda b, x: b.floor(x)),
    np.ceil: _int_identity_or(lambda b, x: b.ceil(x)),
    np.trunc: _int_identity_or(_trunc),
    np.rint: _int_identity_or(lambda b, x: b.round_nearest_even(x)),
    # classification
    np.isnan: _isnan,
    np.isinf: _isinf,
    np.isfinite: _isfinite,
    np.signbit: _signbit,
}

# Aliases NumPy exposes under other names (np.abs is np.absolute, np.radians...).
_ALIASES = {"abs": np.absolute, "radians": np.deg2rad, "degrees": np.rad2deg,
            "divide": np.true_divide, "mod": np.remainder,
            "bitwise_not": np.invert, "bitwise_invert": np.invert,
            "bitwise_left_shift": np.left_shift, "bitwise_right_shift": np.right_shift,
            "pow": np.power, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
            "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
            "atan2": np.arctan2}


# NumPy 2 compares an integer array with a Python int outside its dtype's range exactly
# (``uint8_array < 300`` is all True) instead of refusing the int as arithmetic does.
# (comparison, Python int above the range, int on the right) -> the result everywhere;
# below the range each answer flips except for == and !=.
_ABOVE_RANGE = {np.less: True, np.less_equal: True, np.greater: False,
                np.greater_equal: False, np.equal: False, np.not_equal: True}
_MIRRORED = {np.less: np.greater, np.less_equal: np.greater_equal, np.greater: np.less,
             np.greater_equal: np.less_equal, np.equal: np.equal, np.not_equal: np.not_equal}


def _out_of_range_comparison(b, ufunc, args, kwargs):
    """The constant result of comparing an integer array with a Python int its dtype
    cannot hold, or None when the comparison is an ordinary one."""
    if ufunc not in _ABOVE_RANGE or len(args) != 2 or kwargs:
        return None
    if type(args[0]) is int and isinstance(args[1], Value):
        args, ufunc = args[::-1], _MIRRORED[ufunc]
    array, number = args
    if not (isinstance(array, Value) and type(number) is int and not array.weak
            and dtypes.is_integer(array.dtype)):
        return None
    info = np.iinfo(array.dtype)
    if info.min <= number <= info.max:
        return None
    above = _ABOVE_RANGE[ufunc]
    truth = above if number > info.max or ufunc in (np.equal, np.not_equal) else not above
    return full_like_value(b, truth, array, dtypes.bool_)


def _python_int_to_negative_power(args) -> bool:
    """A traced Python int (weak) raised to a static negative Python int."""
    return (len(args) == 2 and isinstance(args[0], Value) and args[0].weak
            and dtypes.is_integer(args[0].dtype) and type(args[1]) is int and args[1] < 0)


def _check_integer_power(b, args):
    """NumPy refuses a negative integer exponent for integer powers; a static one is
    refused here, at the line (a traced one is only known when the program runs)."""
    if len(args) != 2 or isinstance(args[1], Value):
        return
    exponent = args[1]
    if isinstance(exponent, (list, tuple)) and has_traced(exponent):
        return
    in_dtypes, _ = resolve_ufunc_dtypes(b, np.power, args)
    if dtypes.is_integer(in_dtypes[1]) and np.any(np.asarray(exponent) < 0):
        raise b.error(PSCValueError, "Integers to negative integer powers are not allowed.",
                      "make the base or the exponent a float (x ** -1.0, or "
                      "x.astype(float) ** n)")


def _ufunc_rule(ufunc, impl):
    def rule(b, *args, **kwargs):
        constant = _out_of_range_comparison(b, ufunc, args, kwargs)
        if constant is not None:
            return constant
        if ufunc is np.power:
            if _python_int_to_negative_power(args) and not kwargs:
                # Python's int ** negative int is a float (2 ** -1 == 0.5).
                result = apply_ufunc(b, ufunc, impl, (b.convert(args[0], dtypes.float64),
                                                      float(args[1])), {})
                result.weak = True
                return result
            _check_integer_power(b, args)
        return apply_ufunc(b, ufunc, impl, args, kwargs)
    rule.__name__ = f"numpy_{ufunc.__name__}"
    return rule


UFUNC_RULES = {}
for _ufunc, _impl in UFUNC_IMPLS.items():
    UFUNC_RULES[_ufunc] = _ufunc_rule(_ufunc, _impl)
    register_translation_rule(f"numpy.{_ufunc.__name__}", UFUNC_RULES[_ufunc])
for _alias, _ufunc in _ALIASES.items():
    if hasattr(np, _alias):
        register_translation_rule(f"numpy.{_alias}", UFUNC_RULES[_ufunc])


# --- Python operators on arrays: NumPy's meaning of each operator ---------------------------

_OPERATORS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
    "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "neg": np.negative,
    "pos": np.positive, "invert": np.invert, "abs": np.absolute, "eq": np.equal,
    "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "and_": np.bitwise_and, "or_": np.bitwise_or,
    "xor": np.bitwise_xor, "lshift": np.left_shift, "rshift": np.right_shift,
}
for _op, _ufunc in _OPERATORS.items():
    register_translation_rule(f"operator.{_op}", UFUNC_RULES[_ufunc])
register_translation_rule("builtins.abs", UFUNC_RULES[np.absolute])


def divmod_rule(b, x, y, **kwargs):
    """``np.divmod`` (and the builtin ``divmod`` on traced values): the floor quotient and
    the remainder, each as ``np.floor_divide`` and ``np.remainder`` compute them."""
    return (UFUNC_RULES[np.floor_divide](b, x, y, **dict(kwargs)),
            UFUNC_RULES[np.remainder](b, x, y, **dict(kwargs)))


register_translation_rule("numpy.divmod", divmod_rule)
register_translation_rule("builtins.divmod", divmod_rule)


def round_rule(b, a, decimals=0, out=None):
    """``np.round(a, decimals)`` as NumPy computes it: ``rint(a * 10**d) / 10**d`` (or
    ``rint(a / 10**-d) * 10**-d`` for negative ``d``), halves to even; integers are kept
    for ``d >= 0`` and rounded through float64 otherwise; complex values round each part;
    bools become float16 (NumPy's loop)."""
    if out is not None:
        raise b.error(PSCTypeError, "np.round(..., out=...) writes into an array, which PSC "
                      "functions cannot do", "use the returned value")
    x = lift(b, a)
    decimals = static_int(b, decimals, "decimals")
    if x.dtype == dtypes.bool_:   # NumPy rounds bools as float16 (0 decimals only)
        if decimals != 0:
            raise b.error(PSCTypeError, "Cannot cast ufunc 'multiply' output from "
                          "dtype('float64') to dtype('bool') with casting rule 'same_kind'")
        return b.convert(x, np.float16)
    if not _is_float(x) and decimals >= 0:
        return x
    if dtypes.is_complex(x.dtype):   # the real and imaginary parts, each rounded
        return b.complex(round_rule(b, b.real(x), decimals), round_rule(b, b.imag(x), decimals))
    y = x if _is_float(x) else b.convert(x, dtypes.float64)
    factor = full_like_value(b, 10.0 ** abs(decimals), y)
    if decimals >= 0:
        result = b.div(b.round_nearest_even(b.mul(y, factor)), factor)
    else:
        result = b.mul(b.round_nearest_even(b.div(y, factor)), factor)
    result = cast(b, result, x.dtype)
    result.weak = x.weak
    return result


for _name in ("numpy.round", "numpy.around", "numpy.ndarray.round"):
    register_translation_rule(_name, round_rule)
