"""NumPy's questions about arrays and dtypes, asked of traced values: ``np.shape``,
``np.ndim``, ``np.size``, ``np.iterable``, ``np.isscalar``, ``np.result_type``,
``np.can_cast``, ``np.promote_types``, ``np.isdtype``, ``np.issubdtype``.

The answers are static (shapes and dtypes are known when the program is built), so these
rules return Python values.  A traced value counts as the array it stands for, a weak one
(from a Python number) as that number.  ``np.isscalar`` of a strong 0-d traced value is
refused: NumPy answers True for a NumPy scalar and False for a 0-d array, and tracing
does not keep that difference.  ``promote_types``/``isdtype``/``issubdtype`` take dtypes;
given an array they raise NumPy's TypeError (the hint says to pass ``x.dtype``).
"""
from __future__ import annotations

import math

import numpy as np

from ..builder import Builder
from ..errors import PSCTracedValueError, PSCTypeError
from ..ir import Value
from ..translation import register_translation_rule
from ._core import dtype_key, normalize_axes, shape_of


def shape(b: Builder, a):
    return tuple(shape_of(a))


def ndim(b: Builder, a):
    return len(shape_of(a))


def size(b: Builder, a, axis=None):
    dims = shape_of(a)
    if axis is None:
        return math.prod(dims)
    return math.prod(dims[i] for i in normalize_axes(b, axis, len(dims)))


def iterable(b: Builder, y):
    return len(shape_of(y)) > 0


def isscalar(b: Builder, element):
    if not isinstance(element, Value):
        return False   # a list or tuple holding traced values
    if element.weak:
        return True
    if element.ndim > 0:
        return False
    raise b.error(PSCTracedValueError, "np.isscalar of a traced 0-d value: NumPy answers "
                  "True for a NumPy scalar and False for a 0-d array, which tracing does not "
                  "tell apart", "ask np.ndim(x) == 0 instead")


_WEAK_SAMPLES = {int: 0, float: 0.0, complex: 0j}


def _as_numpy_operand(x):
    """What NumPy's dtype functions would see for ``x``: a dtype for a traced array, a
    Python number for a weak traced value."""
    if isinstance(x, Value) or isinstance(x, (list, tuple)):
        key = dtype_key(x)
        return _WEAK_SAMPLES[key] if isinstance(key, type) else key
    return x


def _numpy_call(b: Builder, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except TypeError as err:
        raise b.error(PSCTypeError, f"np.{fn.__name__}: {err}",
                      "pass dtypes (x.dtype) where NumPy asks for a dtype") from None


def result_type(b: Builder, *arrays_and_dtypes):
    return _numpy_call(b, np.result_type, *(_as_numpy_operand(a) for a in arrays_and_dtypes))


def can_cast(b: Builder, from_, to, casting="safe"):
    return _numpy_call(b, np.can_cast, _as_numpy_operand(from_), _refused_array(to), casting)


def _refused_array(x):
    """Where NumPy wants a dtype, an array is what NumPy refuses: keep it one."""
    return np.zeros(x.shape, x.dtype) if isinstance(x, Value) else x


def _dtype_only(fn):
    def rule(b: Builder, *args, **kwargs):
        return _numpy_call(b, fn, *(_refused_array(a) for a in args),
                           **{k: _refused_array(v) for k, v in kwargs.items()})
    rule.__name__ = fn.__name__
    return rule


for _name, _rule in (("shape", shape), ("ndim", ndim), ("size", size),
                     ("iterable", iterable), ("isscalar", isscalar),
                     ("result_type", result_type), ("can_cast", can_cast),
                     ("promote_types", _dtype_only(np.promote_types)),
                     ("isdtype", _dtype_only(np.isdtype)),
                     ("issubdtype", _dtype_only(np.issubdtype))):
    register_translation_rule(f"numpy.{_name}", _rule)
