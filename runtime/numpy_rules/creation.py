"""Array creation with a traced operand: ``*_like`` of a traced array, ``full`` with a
traced fill value, ``linspace`` between traced end points.

Creation calls whose arguments are all static never reach these rules: `translate` runs
NumPy itself and the result is a build-time constant.  Shapes must be static here, so a
traced size (``np.zeros(n)`` with ``n`` traced) is a `PSCTracedValueError` with a hint.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import PSCValueError
from ..translation import register_translation_rule
from ._core import cast, lift, result_dtype, static_int, static_shape


def _filled(b, shape, value, dtype):
    return b.broadcast_in_dim(lift(b, value, dtype), shape, ())


def _like(fill):
    def rule(b, a, dtype=None, order="K", subok=True, shape=None, **kwargs):
        x = lift(b, a)
        dtype = np.dtype(dtype) if dtype is not None else x.dtype
        shape = static_shape(b, shape) if shape is not None else x.shape
        return _filled(b, shape, fill, dtype)
    return rule


def full_like(b, a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    x = lift(b, a)
    dtype = np.dtype(dtype) if dtype is not None else x.dtype
    shape = static_shape(b, shape) if shape is not None else x.shape
    return _filled(b, shape, fill_value, dtype)


def full(b, shape, fill_value, dtype=None, order="C", **kwargs):
    shape = static_shape(b, shape)
    dtype = np.dtype(dtype) if dtype is not None else result_dtype(b, [fill_value])
    return _filled(b, shape, fill_value, dtype)


def _static_sized(name):
    def rule(b, shape, *args, **kwargs):
        static_shape(b, shape)   # raises: the only traced argument can be the size
        raise AssertionError("unreachable")
    rule.__name__ = name
    return rule


def linspace(b, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    num = static_int(b, num, "num")
    if retstep or axis != 0:
        raise b.error(PSCValueError, "np.linspace with traced end points supports only "
                      "retstep=False and axis=0")
    calc = result_dtype(b, [start, stop, 1.0])
    first, last = lift(b, start, calc), lift(b, stop, calc)
    shape = first.shape
    div = (num - 1) if endpoint else num
    steps = b.iota((num,) + shape, calc, 0)
    if div > 0:
        fraction = b.div(steps, _filled(b, steps.shape, float(div), calc))
    else:
        fraction = b.mul(steps, _filled(b, steps.shape, 0.0, calc))
    span = b.sub(last, first)
    dims = range(1, len(shape) + 1)
    out = b.add(b.broadcast_in_dim(first, steps.shape, dims),
                b.mul(fraction, b.broadcast_in_dim(span, steps.shape, dims)))
    if endpoint and num > 1:   # NumPy sets the last sample to `stop` exactly
        out = b.concatenate([b.slice(out, (0,) * out.ndim, (num - 1,) + shape),
                             b.reshape(last, (1,) + shape)], 0)
    out_dtype = np.dtype(dtype) if dtype is not None else calc
    if dtypes.is_integer(out_dtype):
        out = b.floor(out)
    return cast(b, out, out_dtype)


RULES = {
    "numpy.zeros_like": _like(0), "numpy.ones_like": _like(1), "numpy.empty_like": _like(0),
    "numpy.full_like": full_like, "numpy.full": full, "numpy.linspace": linspace,
    "numpy.zeros": _static_sized("zeros"), "numpy.ones": _static_sized("ones"),
    "numpy.empty": _static_sized("empty"), "numpy.eye": _static_sized("eye"),
    "numpy.identity": _static_sized("identity"), "numpy.arange": _static_sized("arange"),
}
for _name, _rule in RULES.items():
    register_translation_rule(_name, _rule)
