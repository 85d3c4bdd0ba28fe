"""``scipy.special`` functions common in NumPy code: ``erf``, ``erfc``, ``erfinv``,
``gammaln``, ``digamma``/``psi``, ``xlogy``, ``xlog1py``, ``expit``, ``logit``, ``ndtr``,
``ndtri``, ``logsumexp``, ``softmax``, ``log_softmax``.

The ufuncs take scipy's loop dtypes (`apply_ufunc` asks the scipy ufunc itself: float32
stays float32, integers and bools become float64); their complex loops are refused (XLA's
``erf`` & co. are real).  ``xlogy``/``xlog1py`` are 0 where ``x == 0`` and ``y`` is not NaN,
with JAX's derivative (``d/dx = log(y)`` there too).  ``ndtri`` starts from
``sqrt(2) erfinv(2p - 1)`` and takes two Newton steps on ``ndtr`` (computed through
``erfc``, accurate in the tails).  ``logsumexp``/``softmax``/``log_softmax`` are
`runtime.nn`'s (jax's formulas), with scipy's default ``axis=None``.
Derivatives are the primitives' (``digamma``'s through ``polygamma``).
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special

from .. import dtypes
from ..builder import Builder
from ..errors import PSCTypeError
from ..translation import register_translation_rule
from ._core import full_like_value, resolve_ufunc_dtypes
from .elementwise import apply_ufunc

_SQRT2 = math.sqrt(2.0)


def _c(b, value, like):
    return full_like_value(b, value, like)


def _xlog(log):
    def impl(b, x, y):
        zero_case = b.and_(b.eq(x, _c(b, 0, x)), b.eq(y, y))
        logs = log(b, y)
        # where x == 0 the log is kept when finite, so that d/dx is log(y) (JAX's rule)
        safe = b.select(zero_case, b.select(b.is_finite(logs), logs, _c(b, 0, logs)), logs)
        return b.add(b.mul(x, safe), _c(b, 0, x))   # (+ 0: 0 * negative is 0, not -0)
    return impl


def _logit(b, p):
    return b.log(b.div(p, b.sub(_c(b, 1, p), p)))


def _ndtr(b, x):
    return b.mul(_c(b, 0.5, x), b.erfc(b.mul(x, _c(b, -1 / _SQRT2, x))))


def _ndtri(b, p):
    """The lower tail ``m = min(p, 1 - p)``: Abramowitz & Stegun's 26.2.23 (error below
    4.5e-4), then Newton on ``log ndtr(x) = log m`` (quadratic: four steps reach float64
    precision, far into the tail), in float64; mirrored for ``p > 1/2``."""
    q = b.convert(p, dtypes.float64)
    m = b.min(q, b.sub(_c(b, 1, q), q))
    t = b.sqrt(b.mul(_c(b, -2, m), b.log(m)))
    numerator = _polynomial(b, t, (2.515517, 0.802853, 0.010328))
    denominator = _polynomial(b, t, (1.0, 1.432788, 0.189269, 0.001308))
    x = b.neg(b.sub(t, b.div(numerator, denominator)))
    x = b.select(b.eq(m, _c(b, 0, m)), _c(b, -np.inf, x), x)
    finite = b.is_finite(x)
    log_m = b.log(m)
    for _ in range(4):
        safe = b.select(finite, x, _c(b, -1, x))
        tail = _ndtr(b, safe)
        density = b.mul(_c(b, 1 / math.sqrt(2 * math.pi), x),
                        b.exp(b.mul(_c(b, -0.5, x), b.mul(safe, safe))))
        step = b.div(b.mul(b.sub(b.log(tail), log_m), tail), density)
        x = b.select(finite, b.sub(safe, step), x)
    x = b.select(b.gt(q, _c(b, 0.5, q)), b.neg(x), x)
    # p = 1/2: exactly 0, with the slope sqrt(2 pi) there
    half = b.mul(b.sub(q, _c(b, 0.5, q)), _c(b, math.sqrt(2 * math.pi), q))
    x = b.select(b.eq(q, _c(b, 0.5, q)), half, x)
    return b.convert(x, p.dtype)


def _polynomial(b, t, coefficients):
    total = _c(b, coefficients[-1], t)
    for c in reversed(coefficients[:-1]):
        total = b.add(b.mul(total, t), _c(b, c, t))
    return total


def _digamma(b, x):
    """scipy's poles: ``psi(+0) = -inf``, ``psi(-0) = +inf`` (XLA gives NaN)."""
    at_zero = b.eq(x, _c(b, 0, x))
    return b.select(at_zero, b.div(_c(b, -1, x), x), b.digamma(x))


_IMPLS = {
    "erf": lambda b, x: b.erf(x),
    "erfc": lambda b, x: b.erfc(x),
    "erfinv": lambda b, x: b.erf_inv(x),
    "gammaln": lambda b, x: b.lgamma(x),
    "digamma": _digamma,
    "psi": _digamma,
    "xlogy": _xlog(lambda b, y: b.log(y)),
    "xlog1py": _xlog(lambda b, y: b.log1p(y)),
    "expit": lambda b, x: b.logistic(x),
    "logit": _logit,
    "ndtr": _ndtr,
    "ndtri": _ndtri,
}


def _special_ufunc(name, impl):
    ufunc = getattr(scipy.special, name)

    def rule(b: Builder, *args, **kwargs):
        if len(args) == ufunc.nin:
            in_dtypes, _ = resolve_ufunc_dtypes(b, ufunc, args)
            if any(dtypes.is_complex(d) for d in in_dtypes):
                raise b.error(PSCTypeError, f"scipy.special.{name} of complex values is not "
                              "supported", "only its real loops (float32, float64) are")
        return apply_ufunc(b, ufunc, impl, args, dict(kwargs))
    rule.__name__ = f"scipy_special_{name}"
    return rule


def logsumexp(builder: Builder, a, axis=None, b=None, keepdims=False, return_sign=False):
    from .. import nn   # (runtime.nn is written against the NumPy mirror: imported late)
    return nn.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)


def softmax(builder: Builder, x, axis=None):
    from .. import nn
    return nn.softmax(x, axis=axis)


def log_softmax(builder: Builder, x, axis=None):
    from .. import nn
    return nn.log_softmax(x, axis=axis)


for _name, _impl in _IMPLS.items():
    register_translation_rule(getattr(scipy.special, _name), _special_ufunc(_name, _impl),
                              name=f"scipy.special.{_name}")
for _name, _rule in (("logsumexp", logsumexp), ("softmax", softmax),
                     ("log_softmax", log_softmax)):
    register_translation_rule(getattr(scipy.special, _name), _rule,
                              name=f"scipy.special.{_name}")

COVERAGE_NOTES = {f"scipy.special.{n}": "partial: complex arguments are refused (XLA's "
                  "erf/erfc/digamma/log are used on reals only)"
                  for n in ("erf", "erfc", "digamma", "psi", "ndtr", "xlogy", "xlog1py")}
