"""Complex parts: ``np.real``, ``np.imag``, ``np.conj``/``np.conjugate``, ``np.angle``,
``np.isreal``, ``np.iscomplex``, ``np.isrealobj``, ``np.iscomplexobj``.

NumPy's dtypes are kept: ``np.real`` of a real array is the array itself, ``np.imag`` of a
real array is zeros of its dtype (bool included), ``np.conjugate`` is a ufunc (its loop
dtypes: bool becomes int8), ``np.angle`` is ``arctan2(imag, real)`` with NumPy's weak
``0`` for real input (so int8 gives float16, as NumPy), ``np.iscomplex`` of a real 0-d
array is a scalar False, and ``isrealobj``/``iscomplexobj`` look at the dtype only (a
static Python bool).
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..translation import register_translation_rule
from ._core import full_like_value, lift
from .elementwise import UFUNC_RULES, apply_ufunc


def real(b: Builder, val):
    x = lift(b, val)
    return b.real(x) if dtypes.is_complex(x.dtype) else x


def imag(b: Builder, val):
    x = lift(b, val)
    return b.imag(x) if dtypes.is_complex(x.dtype) else full_like_value(b, 0, x)


def conjugate(b: Builder, *args, **kwargs):
    return apply_ufunc(b, np.conjugate, lambda b, z: b.conj(z) if dtypes.is_complex(z.dtype)
                       else z, args, kwargs)


def angle(b: Builder, z, deg=False):
    x = lift(b, z)
    if dtypes.is_complex(x.dtype):
        a = UFUNC_RULES[np.arctan2](b, b.imag(x), b.real(x))
    else:
        a = UFUNC_RULES[np.arctan2](b, 0, x)
    if deg:   # NumPy's ``a *= 180/pi``: in place, so the dtype stays
        a = b.mul(a, full_like_value(b, 180 / math.pi, a))
    return a


def isreal(b: Builder, x):
    return UFUNC_RULES[np.equal](b, imag(b, x), 0)


def iscomplex(b: Builder, x):
    x = lift(b, x)
    if dtypes.is_complex(x.dtype):
        return UFUNC_RULES[np.not_equal](b, b.imag(x), 0)
    return full_like_value(b, False, x, dtypes.bool_)


def iscomplexobj(b: Builder, x) -> bool:
    return dtypes.is_complex(lift(b, x).dtype)


def isrealobj(b: Builder, x) -> bool:
    return not iscomplexobj(b, x)


for _names, _rule in ((("numpy.real",), real), (("numpy.imag",), imag),
                      (("numpy.conj", "numpy.conjugate"), conjugate),
                      (("numpy.angle",), angle), (("numpy.isreal",), isreal),
                      (("numpy.iscomplex",), iscomplex), (("numpy.isrealobj",), isrealobj),
                      (("numpy.iscomplexobj",), iscomplexobj)):
    for _name in _names:
        register_translation_rule(_name, _rule)
