"""Which values carry derivatives, and zeros made explicit.

A tangent or cotangent of ``None`` is a *symbolic zero*: integer and bool values,
constants and values captured from outside a differentiated region have one, so unused
derivatives cost nothing.  Rules that need an actual array ask for `zeros_like`.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes


def is_float(value) -> bool:
    """Whether ``value`` carries a derivative (a floating or complex dtype)."""
    return dtypes.is_inexact(value.dtype)


def zeros(b, shape, dtype):
    return b.broadcast_in_dim(b.constant(np.zeros((), dtype)), shape, ())


def zeros_like(b, value):
    return zeros(b, value.shape, value.dtype)


def tangent_or_zeros(b, tangent, primal):
    return tangent if tangent is not None else zeros_like(b, primal)
