"""NumPy semantics on top of the strict builder: promotion, broadcasting, axes.

Promotion asks NumPy itself: ``ufunc.resolve_dtypes`` implements NumPy 2's rules, with
Python scalars (and traced values that came from them, `Value.weak`) as *weak* operands,
so ``float32_array * 2.0`` stays float32 and ``int8_array + 1`` stays int8, exactly as the
plain-NumPy oracle computes.

This is the bottom of `numpy_rules`: the rule modules import it, it imports none of them
(so ``np.array`` of a list holding traced values, which `lift` needs, lives here).
"""
from __future__ import annotations

import operator
from typing import Sequence

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..errors import (PSCError, PSCOverflowError, PSCShapeError, PSCTracedValueError,
                      PSCTypeError, PSCValueError)
from ..ir import Value
from ..translation import translate_numpy

_WEAK_TYPES = {bool: None, int: int, float: float, complex: complex}
_WEAK_DEFAULTS = {int: dtypes.int64, float: dtypes.float64, complex: np.dtype(np.complex128)}


def is_traced(x) -> bool:
    return isinstance(x, Value)


def is_weak(x) -> bool:
    """A Python number, or a traced value that came from one."""
    return (x.weak if isinstance(x, Value) else
            type(x) in (int, float, complex))


def dtype_key(x):
    """What ``resolve_dtypes`` should see for operand ``x``: a dtype, or a Python type for
    a weak scalar."""
    if isinstance(x, Value):
        if x.weak and not dtypes.is_bool(x.dtype):
            return {"i": int, "u": int, "f": float, "c": complex}[x.dtype.kind]
        return x.dtype
    if type(x) in _WEAK_TYPES and _WEAK_TYPES[type(x)] is not None:
        return type(x)
    if is_traced_sequence(x):
        return sequence_dtype(x)
    return np.asarray(x).dtype


def is_traced_sequence(x) -> bool:
    """A (nested) list or tuple holding a traced value: an array operand to NumPy."""
    return isinstance(x, (list, tuple)) and any(
        isinstance(e, Value) or is_traced_sequence(e) for e in x)


def sequence_dtype(x) -> np.dtype:
    """The dtype ``np.array(x)`` gives a (nested) list holding traced values.  Array
    coercion treats Python scalars as strong (``np.array([np.int8(1), 2])`` is int64),
    so a weak traced value counts as the Python number it stands for."""
    found = []

    def visit(element):
        if isinstance(element, (list, tuple)) and not isinstance(element, Value):
            for item in element:
                visit(item)
        elif isinstance(element, Value):
            found.append(_WEAK_DEFAULTS[_PYTHON_TYPE_OF_KIND[element.dtype.kind]]
                         if element.weak and element.dtype.kind in _PYTHON_TYPE_OF_KIND
                         else element.dtype)
        else:
            found.append(np.asarray(element).dtype)
    visit(x)
    return np.result_type(*found) if found else np.dtype(np.float64)


_PYTHON_TYPE_OF_KIND = {"i": int, "u": int, "f": float, "c": complex}


def shape_of(x) -> tuple:
    if isinstance(x, Value):
        return x.shape
    if is_traced_sequence(x):
        shapes = {shape_of(e) for e in x}
        inner = shapes.pop() if len(shapes) == 1 else ()   # ragged: `array` says so
        return (len(x),) + tuple(inner)
    return np.shape(x)


def resolve_ufunc_dtypes(b: Builder, ufunc: np.ufunc, args) -> tuple[list, list]:
    """(input loop dtypes, output dtypes) NumPy picks for ``ufunc`` on ``args``."""
    keys = [dtype_key(a) for a in args]
    if all(isinstance(k, type) for k in keys):   # only weak scalars: use their defaults
        keys = [_WEAK_DEFAULTS[k] for k in keys]
    try:
        loop = ufunc.resolve_dtypes(tuple(keys) + (None,) * ufunc.nout)
    except (TypeError, np.exceptions.DTypePromotionError) as err:
        raise b.error(PSCTypeError, f"np.{ufunc.__name__} does not support operands of "
                      f"type {', '.join(_describe(a) for a in args)}: {err}") from None
    return list(loop[:ufunc.nin]), list(loop[ufunc.nin:])


def _describe(x) -> str:
    if isinstance(x, Value):
        return f"{x.dtype}{list(x.shape)}" + (" (weak)" if x.weak else "")
    return type(x).__name__


def cast(b: Builder, x: Value, dtype) -> Value:
    """``x.astype(dtype)`` as NumPy computes it on x86-64 (unsafe casting).

    XLA's float->int ``convert`` saturates (NaN -> 0, +inf -> INT_MAX), while NumPy runs
    C casts, which x86's truncating conversions (``cvttsd2si``) make: NaN and values out
    of range become the "integer indefinite" INT_MIN of a 32- or 64-bit conversion, and
    narrower types keep the low bits of one (int8/int16/uint8/uint16 of the 32-bit one,
    uint32 of the 64-bit one; uint64 converts ``x - 2**63`` above 2**63).  In-range
    values convert exactly: the extra ops are compares and selects."""
    dtype = np.dtype(dtype)
    to_int = dtypes.is_integer(dtype) or dtypes.is_bool(dtype)
    if not (to_int and dtypes.is_inexact(x.dtype)):
        return b.convert(x, dtype)
    if dtypes.is_bool(dtype):   # NaN is truthy, and so is an imaginary part, as in NumPy
        return b.ne(x, full_like_value(b, 0, x))
    if dtypes.is_complex(x.dtype):   # NumPy drops the imaginary part (ComplexWarning)
        x = b.convert(x, dtypes.real_dtype(x.dtype))
    if x.dtype == dtypes.bfloat16:
        return _bfloat16_to_int(b, x, dtype)
    if x.dtype.itemsize < 4:    # float16: exactly as float32, as NumPy does
        x = b.convert(x, dtypes.float32)
    if dtype == np.uint64:
        return _float_to_uint64(b, x)
    via = dtypes.int32 if dtype.itemsize < 4 or dtype == np.int32 else dtypes.int64
    return b.convert(_truncating_convert(b, x, via), dtype)


def _bfloat16_to_int(b: Builder, x: Value, dtype) -> Value:
    """ml_dtypes' bfloat16 cast: a truncated value outside ``dtype``'s range (NaN and
    infinities included) becomes 0."""
    x = b.convert(x, dtypes.float32)
    info = np.iinfo(dtype)
    whole = b.select(b.lt(x, full_like_value(b, 0, x)), b.ceil(x), b.floor(x))
    in_range = b.and_(b.ge(whole, full_like_value(b, float(info.min), x)),
                      b.lt(whole, full_like_value(b, float(info.max) + 1.0, x)))
    return b.select(in_range, b.convert(x, dtype), full_like_value(b, 0, x, dtype))


def _truncating_convert(b: Builder, x: Value, dtype) -> Value:
    """x86's ``cvtts*2si`` to the 32- or 64-bit signed ``dtype``: truncation towards zero,
    INT_MIN for NaN and out-of-range values."""
    bits = np.dtype(dtype).itemsize * 8
    in_range = b.and_(b.ge(x, full_like_value(b, -2.0 ** (bits - 1), x)),
                      b.lt(x, full_like_value(b, 2.0 ** (bits - 1), x)))   # False for NaN
    indefinite = full_like_value(b, np.iinfo(dtype).min, x, dtype)
    return b.select(in_range, b.convert(x, dtype), indefinite)


def _float_to_uint64(b: Builder, x: Value) -> Value:
    """C's float->uint64 on x86-64: below 2**63 the signed conversion, above it the signed
    conversion of ``x - 2**63`` with the top bit added back (wrapping)."""
    top = full_like_value(b, 2.0 ** 63, x)
    low = b.convert(_truncating_convert(b, x, dtypes.int64), np.uint64)
    high = b.add(b.convert(_truncating_convert(b, b.sub(x, top), dtypes.int64), np.uint64),
                 full_like_value(b, 2 ** 63, x, np.uint64))
    return b.select(b.ge(x, top), high, low)


def result_dtype(b: Builder, args) -> np.dtype:
    """``np.result_type`` with weak Python scalars, as NumPy 2 promotes them."""
    keys = [dtype_key(a) for a in args]
    if all(isinstance(k, type) for k in keys):
        keys = [np.asarray(k(0)).dtype for k in keys]
    try:
        return np.result_type(*[k(0) if isinstance(k, type) else k for k in keys])
    except (TypeError, np.exceptions.DTypePromotionError) as err:
        raise b.error(PSCTypeError, f"no common dtype: {err}") from None


def array(b: Builder, obj, dtype=None) -> Value:
    """``np.array`` of a (nested) list/tuple holding traced values: stack the elements."""
    if isinstance(obj, (list, tuple)):
        if not obj:
            return b.constant(np.array([], dtype=dtype or np.float64))
        elements = [array(b, e) if isinstance(e, (list, tuple)) else e for e in obj]
        # NumPy's array coercion: Python scalars are strong here, unlike in operators
        dtype = np.dtype(dtype) if dtype is not None else sequence_dtype(elements)
        values = [lift(b, e, dtype) for e in elements]
        if len({v.shape for v in values}) != 1:
            raise b.error(PSCValueError, "setting an array element with a sequence: the "
                          "nested lists have different shapes")
        return b.concatenate([b.reshape(v, (1,) + v.shape) for v in values], 0)
    return lift(b, obj, dtype)


def lift(b: Builder, x, dtype=None) -> Value:
    """``x`` as a Value of ``dtype`` (a constant for static ``x``), cast as NumPy casts."""
    if isinstance(x, Value):
        return cast(b, x, dtype) if dtype is not None else x
    if is_traced_sequence(x):
        return array(b, x, dtype)
    try:
        value = np.asarray(x, dtype=dtype) if dtype is not None else x
        if dtype is not None and type(x) is int and value != x:
            raise OverflowError
    except PSCError:   # a PSCTypeError is a TypeError too: not to be reworded below
        raise
    except OverflowError:
        raise b.error(PSCOverflowError,   # NumPy 2's OverflowError
                      f"Python integer {x} is out of bounds for {np.dtype(dtype)}") from None
    except (TypeError, ValueError) as err:
        raise b.error(PSCTypeError, f"cannot use {x!r} as an array: {err}") from None
    return b.constant(value, dtype=dtype if dtype is not None else None)


def broadcast_shapes(b: Builder, *shapes) -> tuple:
    """NumPy's broadcast of ``shapes``, or a PSCShapeError naming them."""
    ndim = max((len(s) for s in shapes), default=0)
    result = []
    for axis in range(ndim):
        sizes = {s[axis - ndim + len(s)] for s in shapes if axis - ndim + len(s) >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            shown = " ".join(str(tuple(s)) for s in shapes)
            raise b.error(PSCShapeError, f"operands could not be broadcast together with "
                          f"shapes {shown}")
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def broadcast_to(b: Builder, x: Value, shape) -> Value:
    """Broadcast ``x`` to ``shape`` by NumPy's rules (aligned on the trailing axes)."""
    shape = tuple(shape)
    if x.shape == shape:
        return x
    if len(shape) < x.ndim or broadcast_shapes(b, x.shape, shape) != shape:
        raise b.error(PSCShapeError, f"cannot broadcast an array of shape {x.shape} to "
                      f"shape {shape}")
    offset = len(shape) - x.ndim
    return b.broadcast_in_dim(x, shape, range(offset, len(shape)))


def promote_and_broadcast(b: Builder, args, dtypes_) -> list[Value]:
    """Lift ``args`` to ``dtypes_`` and broadcast them to their common shape."""
    values = [lift(b, a, d) for a, d in zip(args, dtypes_)]
    shape = broadcast_shapes(b, *(v.shape for v in values))
    return [broadcast_to(b, v, shape) for v in values]


def full_like_value(b: Builder, value, like: Value, dtype=None) -> Value:
    """A constant broadcast to ``like``'s shape, of ``like``'s dtype by default."""
    dtype = like.dtype if dtype is None else np.dtype(dtype)
    return b.broadcast_in_dim(b.constant(np.asarray(value, dtype)), like.shape, ())


def normalize_axis(b: Builder, axis, ndim: int) -> int:
    try:
        if isinstance(axis, (bool, np.bool_)):   # NumPy refuses them, as not integers
            raise TypeError
        axis = operator.index(axis)
    except PSCError:   # a traced axis: its PSCTracedValueError says what to do
        raise
    except TypeError:
        raise b.error(PSCTypeError, f"axis must be an integer, got {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise b.error(PSCValueError, f"axis {axis} is out of bounds for array of dimension "
                      f"{ndim}")
    return axis % ndim


def normalize_axes(b: Builder, axis, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(b, a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise b.error(PSCValueError, f"duplicate value in 'axis': {axis}")
        return tuple(sorted(axes))
    return (normalize_axis(b, axis, ndim),)


def reduction_axes(b: Builder, axis, ndim: int) -> tuple[int, ...]:
    """The axes of a ufunc-style reduction (sum, max, any, squeeze...): `normalize_axes`,
    except that NumPy lets a 0-d operand take the integer axis 0 or -1, which then reduces
    nothing (``np.sum(np.float64(1), axis=0)``; a tuple ``(0,)`` is still refused)."""
    if ndim == 0 and axis is not None and not isinstance(axis, (tuple, list)):
        if _is_0_or_minus_1(axis):
            return ()
    return normalize_axes(b, axis, ndim)


def _is_0_or_minus_1(axis) -> bool:
    try:
        return not isinstance(axis, (bool, np.bool_)) and operator.index(axis) in (0, -1)
    except TypeError:
        return False   # normalize_axes says what is wrong with it


def raveled_if_0d(b: Builder, x: Value) -> Value:
    """``x`` as NumPy's axis functions on one axis (argmax, cumsum, argsort) see it: a 0-d
    operand becomes 1-d (``PyArray_CheckAxis``), so axis 0 and -1 are valid for it."""
    return b.reshape(x, (1,)) if x.ndim == 0 else x


def static_int(b: Builder, x, what: str) -> int:
    """``x`` as a static Python int, or a PSCTracedValueError explaining why not."""
    if isinstance(x, Value):
        raise b.error(PSCTracedValueError, f"{what} must be known when the program is built, "
                      "but it is a traced value", "pass it as a static argument "
                      "(static_argnames) or compute it from shapes")
    try:
        return operator.index(x)
    except TypeError:
        raise b.error(PSCTypeError, f"{what} must be an integer, got {x!r}") from None


def static_shape(b: Builder, shape, what: str = "shape") -> tuple[int, ...]:
    if isinstance(shape, Value):
        static_int(b, shape, what)
    if isinstance(shape, (tuple, list)):
        return tuple(static_int(b, s, what) for s in shape)
    return (static_int(b, shape, what),)


def ufunc_outer(b: Builder, ufunc: np.ufunc, x, y, **kwargs) -> Value:
    """``ufunc.outer(x, y)`` for a binary ufunc with a rule: ``ufunc(x[..., None...], y)``,
    shape ``x.shape + y.shape``.  NumPy turns both operands into arrays first, so a Python
    scalar is strong here (``np.add.outer(float32_array, 2.0)`` is float64)."""
    if ufunc.nin != 2:
        raise b.error(PSCValueError, "outer product only supported for binary functions")
    x, y = _strong_operand(b, x), _strong_operand(b, y)
    x = b.reshape(x, x.shape + (1,) * y.ndim)
    return translate_numpy(b, ufunc, x, y, **kwargs)


def _strong_operand(b: Builder, x) -> Value:
    """``np.asarray(x)`` of an operand: a weak traced value as the Python number's dtype."""
    if isinstance(x, Value):
        if not x.weak:
            return x
        kind = _PYTHON_TYPE_OF_KIND.get(x.dtype.kind)
        strong = b.convert(x, _WEAK_DEFAULTS[kind] if kind is not None else x.dtype)
        if strong is x:
            strong = b.broadcast_in_dim(x, x.shape, range(x.ndim))
        strong.weak = False
        return strong
    return lift(b, x if is_traced_sequence(x) else np.asarray(x))


def as_values(b: Builder, args: Sequence) -> list[Value]:
    return [lift(b, a) for a in args]


def rule_table():
    """``(RULES, rule)``: a family module's table of rules by qualified name, and the
    decorator ``@rule("numpy.a", "numpy.b")`` that fills it; the module registers the table
    at its end, in one place."""
    rules = {}

    def rule(*names):
        def register(fn):
            for name in names:
                rules[name] = fn
            return fn
        return register
    return rules, rule
