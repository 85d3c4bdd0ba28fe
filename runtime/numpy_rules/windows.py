"""Windows and spaced sequences with traced operands: ``kaiser`` with a traced ``beta``,
``logspace`` between traced exponents, ``piecewise`` of a traced array; and the window
functions' static length.

``bartlett``, ``blackman``, ``hamming``, ``hanning`` and ``kaiser`` take a length ``M``
that shapes the result: it must be static (with a static ``M`` NumPy itself computes the
window at build time), so a traced ``M`` is a `PSCTracedValueError` with a hint.
``kaiser(M, beta)`` runs NumPy's formula, ``i0(beta * sqrt(1 - ((n - alpha) / alpha)**2))
/ i0(beta)``, with ``i0`` as NumPy evaluates it (Cephes' Chebyshev series, NumPy's own
coefficients, ``x <= 8`` or not).

``logspace`` is NumPy's ``power(base, linspace(start, stop, num, endpoint))`` with a
scalar base and ``axis=0`` (the `linspace` rule's limits).

``piecewise(x, condlist, funclist)``: NumPy applies each function to ``x[cond]``, a
data-dependent selection; here each function is applied to all of ``x`` and the results
are selected with the conditions, which is the same for element-wise functions (the
documented deviation: a function that is not element-wise, ``lambda v: v.sum()``, sees
all of ``x``).  Constants are allowed; the result has ``x``'s dtype (values cast as
NumPy's assignment casts them), an extra condition is the "otherwise" case.
"""
from __future__ import annotations

import numpy as np
import numpy.lib._function_base_impl as _numpy_impl

from .. import dtypes
from ..builder import Builder
from ..errors import PSCTypeError, PSCValueError
from ..ir import Value
from ..translation import register_translation_rule, translate_numpy
from ._core import _strong_operand, broadcast_to, cast, lift, static_int

_I0_SMALL, _I0_LARGE = tuple(_numpy_impl._i0A), tuple(_numpy_impl._i0B)   # float64


def _np(b: Builder, fn, *args):
    return translate_numpy(b, fn, *args)


def _chbevl(b: Builder, x: Value, coefficients) -> Value:
    """NumPy's ``_chbevl`` operation for operation (its coefficients are strong float64
    scalars, its start ``0.0`` a Python float), so the dtypes and roundings are NumPy's."""
    b0, b1, b2 = lift(b, np.float64(coefficients[0])), 0.0, None
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = _np(b, np.add, _np(b, np.subtract, _np(b, np.multiply, x, b1), b2), c)
    return _np(b, np.multiply, 0.5, _np(b, np.subtract, b0, b2))


def i0(b: Builder, x) -> Value:
    """NumPy's ``i0``: a float array, Chebyshev series below and above 8."""
    x = _strong_operand(b, x)
    if dtypes.is_complex(x.dtype):
        raise b.error(PSCTypeError, "i0 not supported for complex values")
    if not dtypes.is_floating(x.dtype):
        x = b.convert(x, dtypes.float64)
    x = _np(b, np.absolute, x)
    small = _np(b, np.multiply, _np(b, np.exp, x),
                _chbevl(b, _np(b, np.subtract, _np(b, np.true_divide, x, 2.0), 2), _I0_SMALL))
    safe = _np(b, np.maximum, x, 8.0)   # the large-x series, kept finite where unused
    large = _np(b, np.true_divide, _np(b, np.multiply, _np(b, np.exp, x), _chbevl(
        b, _np(b, np.subtract, _np(b, np.true_divide, 32.0, safe), 2.0), _I0_LARGE)),
        _np(b, np.sqrt, safe))
    return cast(b, _np(b, np.where, _np(b, np.less_equal, x, 8.0), small, large), x.dtype)


def kaiser(b: Builder, M, beta):
    M = static_int(b, M, "the window length M")
    beta = _strong_operand(b, beta)
    dtype = np.result_type(np.float64, beta.dtype)   # NumPy: np.array([0.0, M, beta])
    beta = cast(b, beta, dtype)
    if M < 1:
        return b.constant(np.array([], dtype=dtype))
    if M == 1:
        return b.constant(np.ones(1, dtype=dtype))
    n = np.arange(0, M)
    alpha = (M - 1) / 2.0
    ramp = 1 - ((n - alpha) / alpha) ** 2.0
    argument = _np(b, np.multiply, beta, np.sqrt(ramp))
    return _np(b, np.true_divide, i0(b, argument), i0(b, beta))


def _static_window(name: str):
    def rule(b: Builder, M):
        static_int(b, M, "the window length M")
        raise AssertionError("unreachable: a static M is NumPy's own call")
    rule.__name__ = name
    return rule


def logspace(b: Builder, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    if not isinstance(base, (int, float)):
        raise b.error(PSCValueError, "np.logspace with traced end points supports only a "
                      "Python number base", "compute np.power(base, np.linspace(...))")
    y = translate_numpy(b, np.linspace, start, stop, num, endpoint, False, None, axis)
    result = _np(b, np.power, base, y)
    return result if dtype is None else cast(b, result, np.dtype(dtype))


def _row(b: Builder, x: Value, i: int) -> Value:
    return b.reshape(b.slice(x, (i,) + (0,) * (x.ndim - 1), (i + 1,) + x.shape[1:]),
                     x.shape[1:])


def piecewise(b: Builder, x, condlist, funclist, *args, **kw):
    x = _strong_operand(b, x)
    if isinstance(condlist, Value):   # NumPy iterates an array's rows when they are arrays
        rows = condlist.ndim > 1 or (condlist.ndim == 1 and x.ndim == 0)
        condlist = [_row(b, condlist, i) for i in range(condlist.shape[0])] if rows \
            else [condlist]
    elif not isinstance(condlist, (list, tuple)):
        condlist = [condlist]
    elif not isinstance(condlist[0], (list, tuple, Value, np.ndarray)) and x.ndim != 0:
        condlist = [condlist]
    conditions = [broadcast_to(b, cast(b, lift(b, c), dtypes.bool_), x.shape)
                  for c in condlist]
    funcs = list(funclist)
    if len(conditions) == len(funcs) - 1:
        anything = conditions[0]
        for c in conditions[1:]:
            anything = b.or_(anything, c)
        conditions.append(b.not_(anything))
    elif len(conditions) != len(funcs):
        raise b.error(PSCValueError, f"with {len(conditions)} condition(s), either "
                      f"{len(conditions)} or {len(conditions) + 1} functions are expected")
    y = b.broadcast_in_dim(lift(b, 0, x.dtype), x.shape, ())
    for cond, func in zip(conditions, funcs):
        value = func(x, *args, **kw) if callable(func) else func
        value = broadcast_to(b, cast(b, _strong_operand(b, value), x.dtype), x.shape)
        y = b.select(cond, value, y)
    return y


for _name, _rule in [("numpy.kaiser", kaiser), ("numpy.logspace", logspace),
                     ("numpy.piecewise", piecewise)]:
    register_translation_rule(_name, _rule)
for _name in ("bartlett", "blackman", "hamming", "hanning"):
    register_translation_rule(f"numpy.{_name}", _static_window(_name))

COVERAGE_NOTES = {
    "numpy.logspace": "partial: traced start/stop with a Python-number base and axis=0",
    "numpy.piecewise": "partial: functions must be element-wise (applied to all of x)",
}
UNSUPPORTED: dict = {}
