"""Functions that call a user function: ``apply_along_axis``, ``apply_over_axes``,
``fromfunction``.

The user function is traced like any function a PSC function calls (`runtime.calls.
transpiled`: a NumPy function's rule, a jit_ps function, or Python source transpiled on
first use).  ``apply_along_axis(func1d, axis, arr, *args, **kwargs)`` is one batched
program, not a loop: ``func1d`` is mapped with `runtime.vmap.vmap` over the vectors of
``arr`` along ``axis`` (``args`` passed unmapped), and its result's dimensions take the
place of ``axis``, as in NumPy; the result's dtype is the one ``func1d`` gives (NumPy
casts every vector's result to the first one's dtype, which is the same here, the vectors
being traced alike).  ``apply_over_axes`` calls ``func(a, axis)`` axis by axis with NumPy's
rank rule.  ``fromfunction`` calls ``function`` on ``np.indices(shape, dtype)``, static
index arrays, so a function of the indices alone is computed while the program is built.
"""
from __future__ import annotations

import functools

import numpy as np

from ..calls import transpiled
from ..errors import PSCValueError
from ..translation import register_translation_rule
from ._core import lift, normalize_axis, static_shape
from .shapes import expand_dims, moveaxis


def apply_along_axis(b, func1d, axis, arr, *args, **kwargs):
    from ..vmap import vmap   # vmap builds on the rules: imported when first needed
    x = lift(b, arr)
    if x.ndim == 0:
        raise b.error(PSCValueError, f"axis {axis} is out of bounds for array of dimension 0")
    axis = normalize_axis(b, axis, x.ndim)
    moved = moveaxis(b, x, axis, -1)
    outer = moved.shape[:-1]
    if 0 in outer:
        raise b.error(PSCValueError, "Cannot apply_along_axis when any iteration dimensions "
                      "are 0")
    count = int(np.prod(outer))
    vectors = b.reshape(moved, (count, moved.shape[-1]))
    fn = functools.partial(func1d, **kwargs) if kwargs else func1d
    result = vmap(fn, in_axes=(0,) + (None,) * len(args))(vectors, *args)
    result = lift(b, result)
    inner = result.shape[1:]
    result = b.reshape(result, outer + inner)
    order = (list(range(axis)) + list(range(len(outer), len(outer) + len(inner)))
             + list(range(axis, len(outer))))
    return b.transpose(result, order)


def apply_over_axes(b, func, a, axes):
    val = lift(b, a)
    n = val.ndim
    if np.ndim(axes) == 0:
        axes = (axes,)
    call = transpiled(func)
    for axis in axes:
        if axis < 0:
            axis = n + axis
        res = lift(b, call(val, axis))
        if res.ndim != val.ndim:
            res = expand_dims(b, res, axis)
            if res.ndim != val.ndim:
                raise b.error(PSCValueError, "function is not returning an array of the "
                              "correct shape")
        val = res
    return val


def fromfunction(b, function, shape, *, dtype=float, like=None, **kwargs):
    shape = static_shape(b, shape)
    indices = np.indices(shape, dtype=dtype)
    return transpiled(function)(*indices, **kwargs)


register_translation_rule("numpy.apply_along_axis", apply_along_axis)
register_translation_rule("numpy.apply_over_axes", apply_over_axes)
register_translation_rule("numpy.fromfunction", fromfunction, sees_static=True)
