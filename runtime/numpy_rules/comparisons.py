"""Whole-array comparisons: ``np.isclose``, ``np.allclose``, ``np.array_equal``,
``np.array_equiv``.

``isclose`` is NumPy's formula, ``(|x - y| <= atol + rtol |y|) & isfinite(y) | (x == y)``,
with ``y`` made inexact first (``result_type(y, 1.0)``) and Python-scalar operands weak.
``allclose``, ``array_equal`` and ``array_equiv`` return a traced 0-d bool where NumPy
returns a Python bool (``if np.allclose(a, b):`` stages like any traced condition); what
the shapes decide alone (``array_equal`` of different shapes, ``array_equiv`` of shapes that
do not broadcast) is a static Python ``False``, as in NumPy.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..ir import Value
from ..translation import register_translation_rule
from ._core import lift, result_dtype, shape_of
from .elementwise import UFUNC_RULES

_U = UFUNC_RULES


def _inexact(b: Builder, y):
    """NumPy's ``y = asanyarray(y, dtype=result_type(y, 1.))`` (a Python int: float)."""
    if type(y) is int:
        return float(y)
    if type(y) in (float, complex):
        return y
    if isinstance(y, Value) and y.weak:
        return b.convert(y, dtypes.float64) if not dtypes.is_inexact(y.dtype) else y
    y = lift(b, y)
    return lift(b, y, result_dtype(b, [y, 1.0]))


def _operand(b: Builder, a):
    return a if type(a) in (int, float, complex) or isinstance(a, Value) else lift(b, a)


def isclose(b: Builder, a, b_, rtol=1e-05, atol=1e-08, equal_nan=False):
    x, y = _operand(b, a), _inexact(b, b_)
    rtol, atol = _operand(b, rtol), _operand(b, atol)
    bound = _U[np.add](b, atol, _U[np.multiply](b, rtol, _U[np.absolute](b, y)))
    close = _U[np.less_equal](b, _U[np.absolute](b, _U[np.subtract](b, x, y)), bound)
    result = _U[np.bitwise_or](b, _U[np.bitwise_and](b, close, _U[np.isfinite](b, y)),
                               _U[np.equal](b, x, y))
    if equal_nan:
        both_nan = _U[np.bitwise_and](b, _U[np.isnan](b, x), _U[np.isnan](b, y))
        result = _U[np.bitwise_or](b, result, both_nan)
    return result


def _all(b: Builder, x: Value) -> Value:
    return b.reduce(x, "and", range(x.ndim))


def allclose(b: Builder, a, b_, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _all(b, lift(b, isclose(b, a, b_, rtol, atol, equal_nan)))


def array_equal(b: Builder, a1, a2, equal_nan=False):
    x, y = lift(b, a1), lift(b, a2)
    if x.shape != y.shape:
        return False
    same = _U[np.equal](b, x, y)
    if equal_nan:
        same = _U[np.logical_or](b, same, _U[np.logical_and](b, _U[np.isnan](b, x),
                                                                _U[np.isnan](b, y)))
    return _all(b, same)


def _broadcastable(*shapes) -> bool:
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        return False
    return True


def array_equiv(b: Builder, a1, a2):
    if not _broadcastable(shape_of(a1), shape_of(a2)):
        return False
    return _all(b, _U[np.equal](b, lift(b, a1), lift(b, a2)))


for _name, _rule in (("isclose", isclose), ("allclose", allclose),
                     ("array_equal", array_equal), ("array_equiv", array_equiv)):
    register_translation_rule(f"numpy.{_name}", _rule)
