"""In-place updates of a variable as functional ones: what the front end writes for
``t op= v`` (`augassign`) and for the in-place array methods ``x.sort()`` / ``x.fill(v)``.

A traced array cannot be written into, so the variable is rebound to the updated array.
When nothing is traced, Python runs the statement as written (so a static NumPy array is
really updated in place, aliases included).  Otherwise the update follows NumPy's in-place
rules: an array keeps its dtype and shape, and a result NumPy's ``same_kind`` casting would
refuse is a `PSCTypeError` where NumPy raises its ``UFuncTypeError``.  A scalar (a Python
or NumPy number, a 0-d traced value) has no in-place form: ``t op= v`` is ``t = t op v``.
"""
from __future__ import annotations

import operator

import numpy as np

from .context import current_builder
from .errors import PSCShapeError, PSCTypeError
from .ir import Value
from .translation import has_traced, translate

# mode -> (Python's in-place operator, the binary operator, NumPy's ufunc for messages)
_OPERATORS = {
    "add": (operator.iadd, operator.add, np.add),
    "sub": (operator.isub, operator.sub, np.subtract),
    "mul": (operator.imul, operator.mul, np.multiply),
    "truediv": (operator.itruediv, operator.truediv, np.true_divide),
    "floordiv": (operator.ifloordiv, operator.floordiv, np.floor_divide),
    "mod": (operator.imod, operator.mod, np.remainder),
    "pow": (operator.ipow, operator.pow, np.power),
    "matmul": (operator.imatmul, operator.matmul, np.matmul),
    "and": (operator.iand, operator.and_, np.bitwise_and),
    "or": (operator.ior, operator.or_, np.bitwise_or),
    "xor": (operator.ixor, operator.xor, np.bitwise_xor),
    "lshift": (operator.ilshift, operator.lshift, np.left_shift),
    "rshift": (operator.irshift, operator.rshift, np.right_shift),
}


def augassign(target, value, mode: str):
    """The new value of ``target`` after ``target <mode>= value``.

    Only a NumPy array meeting a traced value needs this: NumPy cannot write a traced value
    into it.  Everything else is Python's own in-place operator (a traced target's is
    `update`, through `Value.__i<mode>__`)."""
    inplace = _OPERATORS[mode][0]
    if isinstance(target, np.ndarray) and has_traced(value):
        return update(target, value, mode)
    return inplace(target, value)


def update(target, value, mode: str):
    """``target <mode>= value`` for an array ``target`` with a traced operand, as NumPy
    computes it: the dtype and shape of ``target`` are kept, and a result that
    ``same_kind`` casting cannot store is a `PSCTypeError` (NumPy's ``UFuncTypeError``).
    A 0-d traced value stands for a NumPy scalar (reductions and indexing give those),
    which has no in-place form: its update is the binary operator."""
    _, binary, ufunc = _OPERATORS[mode]
    b = current_builder()
    result = translate(b, binary, target, value)
    if isinstance(target, Value) and target.ndim == 0:
        return result
    if result.dtype != target.dtype and not np.can_cast(result.dtype, target.dtype,
                                                        "same_kind"):
        raise b.error(PSCTypeError, f"Cannot cast ufunc '{ufunc.__name__}' output from "
                      f"dtype('{result.dtype}') to dtype('{target.dtype}') with casting rule "
                      "'same_kind' (NumPy's in-place operators keep the array's dtype)",
                      "write `t = t <op> v` for a new array, or convert first with "
                      ".astype")
    if result.shape != tuple(target.shape):
        raise b.error(PSCShapeError, f"non-broadcastable output operand with shape "
                      f"{tuple(target.shape)} doesn't match the broadcast shape "
                      f"{result.shape}", "write `t = t <op> v` for a new array")
    return result if result.dtype == target.dtype else result.astype(target.dtype)


def inplace_sort(target, *args, **kwargs):
    """``target`` after ``target.sort(*args, **kwargs)``: ``np.sort`` along the same axis
    (default -1) for a traced array, the method itself otherwise."""
    if not has_traced((target, args, kwargs)):
        target.sort(*args, **kwargs)
        return target
    b = current_builder()
    axis = args[0] if args else kwargs.pop("axis", -1)
    if axis is None:   # np.sort flattens for None; the method takes only an axis
        raise b.error(PSCTypeError, "'NoneType' object cannot be interpreted as an integer",
                      "sort() sorts along one axis: give an int, or use np.sort(x, axis=None)")
    return translate(b, np.sort, target, axis, *args[1:], **kwargs)


def inplace_fill(target, value):
    """``target`` after ``target.fill(value)``: every element ``value``, cast to the
    array's dtype (as ``fill`` casts)."""
    if not has_traced((target, value)):
        target.fill(value)
        return target
    b = current_builder()
    if not isinstance(target, (np.ndarray, Value)):
        raise b.error(PSCTypeError, f"a {type(target).__name__} has no fill() method")
    return translate(b, np.full_like, target, value)


def inplace_shape(target, shape):
    """``target`` after ``target.shape = shape``.  A static array is reshaped in place by
    NumPy itself (aliases see it; NumPy raises when its data would need a copy).  A traced
    array is reshaped functionally: its layout is XLA's, so the copy NumPy refuses to make
    (``x.T.shape = n``) never arises, and such a program runs where NumPy raises."""
    if not has_traced((target, shape)):
        target.shape = shape
        return target
    b = current_builder()
    if not isinstance(target, Value):
        raise b.error(PSCTypeError, "a shape must be known when the program is built, but "
                      "it is a traced value", "compute it from shapes and static arguments")
    return translate(b, "numpy.reshape", target, shape)


def inplace_numpy(name: str, target, *args, **kwargs):
    """``target`` after ``np.put(target, ...)`` (or ``put_along_axis``, ``fill_diagonal``,
    ``place``, ``copyto``: ``name`` is the function's qualified name), which the front end
    writes for such a statement.  With nothing traced NumPy updates the static array in
    place; otherwise the functional form (`numpy_rules.index_functions`) gives the updated
    array, of ``target``'s dtype and shape."""
    from .numpy_rules.index_functions import FUNCTIONAL_FORMS
    from .translation import _resolve_object
    function = _resolve_object(name)
    if isinstance(function, np.ufunc):
        return ufunc_into(function, target, *args, **kwargs)
    if not has_traced((target, args, kwargs)):
        function(target, *args, **kwargs)
        return target
    return FUNCTIONAL_FORMS[name](current_builder(), target, *args, **kwargs)


def ufunc_into(ufunc: np.ufunc, *args, **kwargs):
    """The new value of ``out`` after ``ufunc(*inputs, out, where=..., casting=...)`` (or
    ``out=out``), which writes the result into ``out`` as NumPy does: the inputs broadcast
    to ``out``'s shape, the result is cast to ``out``'s dtype under ``casting`` (default
    ``same_kind``), and where ``where`` is False ``out`` keeps its value."""
    inputs, out = list(args[:ufunc.nin]), args[ufunc.nin:]
    out = out[0] if out else kwargs.pop("out")
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    where = kwargs.pop("where", True)
    if not has_traced((inputs, out, where, kwargs)):
        ufunc(*inputs, out=out, where=where, **kwargs)
        return out
    b = current_builder()
    if not isinstance(out, (np.ndarray, Value)):
        raise b.error(PSCTypeError, f"np.{ufunc.__name__}: the out argument must be an "
                      f"array, not {type(out).__name__}", "pass an array, or use the result")
    casting = kwargs.pop("casting", "same_kind")
    result = translate(b, ufunc, *inputs, **kwargs)
    if not np.can_cast(result.dtype, out.dtype, casting):
        raise b.error(PSCTypeError, f"Cannot cast ufunc '{ufunc.__name__}' output from "
                      f"dtype('{result.dtype}') to dtype('{out.dtype}') with casting rule "
                      f"'{casting}'", "give an out array of the result's dtype")
    shape = tuple(out.shape)
    if np.broadcast_shapes(result.shape, shape) != shape:
        raise b.error(PSCShapeError, f"non-broadcastable output operand with shape {shape} "
                      f"doesn't match the broadcast shape "
                      f"{np.broadcast_shapes(result.shape, shape)}")
    result = translate(b, np.broadcast_to, result.astype(out.dtype), shape)
    if where is not True:
        result = translate(b, np.where, where, result, out)
    return result
