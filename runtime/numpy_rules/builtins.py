"""Python's builtins on traced values, with Python's semantics on the NumPy scalars (and
Python numbers) that traced 0-d values stand for.

``max(a, b)`` runs Python's algorithm: the first argument is the best so far, and a later
one replaces it only when ``item > best`` (``<`` for ``min``) — so the *first* maximal
argument wins and NaN ordering is Python's (``max(nan, 1.0)`` is nan, ``max(1.0, nan)`` is
1.0, ``max(-0.0, 0.0)`` is -0.0).  A traced comparison becomes a select; the two candidates
must then be one traced type, which NumPy's promotion of the pair gives (``np.where``'s:
a Python number adopts the array's dtype; ``max(int32, float64)`` is float64 where Python
would return whichever argument wins, with its own type).  The candidates must have one
shape; a comparison of arrays with more than one element is NumPy's "truth value ... is
ambiguous" `PSCValueError`.  A single argument is iterated as Python iterates it: a list,
tuple or generator, or a traced array along its first axis (its static length).  ``key=``
is called on each item; ``default=`` is returned for an empty iterable.

``sum(iterable, start=0)`` is Python's left fold ``((start + x0) + x1) + ...`` in that
order (a traced float array's elements are added one by one, in a staged loop past
`UNROLL_LIMIT` elements; integer sums reduce at once, which gives the same bits).
Python 3.12's compensated summation of exact Python floats is not emulated.

``round(x)`` of a traced NumPy float or int is a Python int in Python: here a traced *weak*
int64 (what a Python int is to the transpiler), rounded half to even; ``round(x, n)`` is
``np.round`` (the NumPy scalar's ``__round__``).  ``bool``/``int``/``float``/``complex`` of a
traced 0-d value are traced weak values of Python's types (bool, int64, float64,
complex128): a Python scalar is only known when the program runs.  They cannot raise where
Python raises at run time: ``int(nan)``/``round(inf)`` give int64's minimum (x86's cast),
integers past int64 (``int(np.uint64(2**64 - 1))``) wrap.  ``pow(x, y)`` is ``x ** y``;
``pow(x, y, m)`` needs Python ints (NumPy scalars refuse it), a static exponent >= 0 and
a static modulus of at most 2**31 in magnitude (so no product overflows int64).
``abs`` and ``divmod`` are the operators' rules (`elementwise`).

Every rule runs the Python builtin itself when nothing is traced (after iterating a
generator argument: its items may be traced), so rewriting a call to go through here
never changes a static result.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from .. import dtypes
from ..calls import transpiled
from ..context import current_builder
from ..control_flow import for_stmt, truth
from ..errors import (PSCShapeError, PSCTracedValueError, PSCTypeError,
                      PSCUnsupportedCallError, PSCValueError)
from ..ir import Value
from ..translation import has_traced, register_translation_rule, translate
from ._core import cast, lift, shape_of, static_int
from .elementwise import round_rule

UNROLL_LIMIT = 16   # a float sum over more traced elements than this runs as a staged loop
_NO_DEFAULT = object()


def _register(name: str, rule) -> None:
    # Applied even when no argument is a traced leaf: a generator (or a list filled by
    # appends) may hold traced values; each rule calls the builtin when none is traced.
    register_translation_rule(name, rule, sees_static=True)


def _traced_int(b, value: Value) -> Value:
    """``value`` as a traced Python int: int64 (C's cast: floats truncate), weak."""
    return _weak_copy(b, cast(b, value, dtypes.int64))


def _weak_copy(b, value: Value) -> Value:
    """``value`` as a traced Python number: a weak copy (a rule may return its operand,
    which must keep its own flag)."""
    if value.weak:
        return value
    copy = b.broadcast_in_dim(value, value.shape, range(value.ndim))   # identity
    copy.weak = True
    return copy


def _python_type_name(x) -> str:
    if isinstance(x, Value):
        if x.ndim:
            return "numpy.ndarray"
        if x.weak:
            return {"b": "bool", "i": "int", "u": "int", "f": "float",
                    "c": "complex"}[x.dtype.kind]
        return f"numpy.{x.dtype.name if x.dtype != dtypes.bool_ else 'bool'}"
    module = type(x).__module__
    return type(x).__name__ if module == "builtins" else f"{module}.{type(x).__name__}"


# --- max and min ----------------------------------------------------------------------------

def _items(b, name: str, iterable) -> list:
    """What Python's ``for item in iterable`` gives, with a traced array's static length."""
    if isinstance(iterable, Value):
        if iterable.ndim == 0:
            raise b.error(PSCTypeError, "iteration over a 0-d array",
                          f"{name}() of one argument iterates it; pass several values, or "
                          f"use np.{'sum' if name == 'sum' else name}")
        return [iterable[i] for i in range(iterable.shape[0])]
    try:
        return list(iterable)
    except TypeError as err:
        raise b.error(PSCTypeError, str(err)) from None


def _choose(b, name: str, better, item, best):
    """``item if better else best``; a traced ``better`` selects between the two."""
    if not isinstance(better, Value):
        return item if better else best
    for candidate in (item, best):
        if isinstance(candidate, (list, tuple, dict)):
            raise b.error(PSCTypeError, f"{name}() of {type(candidate).__name__}s holding "
                          "traced values is not supported: Python compares them element "
                          "by element", "compare the arrays or numbers themselves")
    if shape_of(item) != shape_of(best):
        raise b.error(PSCShapeError, f"{name}() of values of shapes {shape_of(best)} and "
                      f"{shape_of(item)}: the result's shape would depend on traced values",
                      "give the arguments one shape")
    return translate(b, np.where, better, item, best)


def _truth(b, name: str, comparison):
    """Python's ``if item > best`` on the comparison's result."""
    if isinstance(comparison, Value) and comparison.size != 1:
        raise b.error(PSCValueError, f"{name}() compares its arguments with "
                      f"{'>' if name == 'max' else '<'}: the truth value of an array with "
                      f"{comparison.size} elements is ambiguous",
                      "use a.any() or a.all(); for element-wise extrema np.maximum/np.minimum, "
                      f"for an array's np.{name}(x, axis=...)")
    return truth(comparison) if isinstance(comparison, Value) else bool(comparison)


def _extremum(name: str, compare):
    python = getattr(builtins, name)

    def rule(b, *args, key=None, default=_NO_DEFAULT):
        if not args:
            raise b.error(PSCTypeError, f"{name} expected at least 1 argument, got 0")
        if len(args) > 1 and default is not _NO_DEFAULT:
            raise b.error(PSCTypeError, f"Cannot specify a default for {name}() with "
                          "multiple positional arguments")
        if len(args) == 1 and key is None and isinstance(args[0], Value) and \
                args[0].ndim == 1 and args[0].shape[0] and \
                not dtypes.is_complex(args[0].dtype):
            return _array_extremum(b, name, args[0])
        items = _items(b, name, args[0]) if len(args) == 1 else list(args)
        if key is None and not has_traced(items):
            return python(items) if default is _NO_DEFAULT else python(items, default=default)
        # With a key, static items may still have traced keys (``key=lambda i: x[i]``):
        # the loop below is Python's, and stays Python where a comparison is static.
        if not items:
            if default is _NO_DEFAULT:
                raise b.error(PSCValueError, f"{name}() arg is an empty sequence")
            return default
        keyed = (lambda v: v) if key is None else transpiled(key)
        best, best_key = items[0], keyed(items[0])
        for item in items[1:]:
            item_key = keyed(item)
            better = _truth(b, name, compare(item_key, best_key) if not has_traced(
                (item_key, best_key)) else translate(b, compare, item_key, best_key))
            best = _choose(b, name, better, item, best)
            best_key = best if key is None else _choose(b, name, better, item_key, best_key)
        return best
    rule.__name__ = f"builtin_{name}"
    return rule


def _array_extremum(b, name: str, x: Value) -> Value:
    """Python's ``max(x)`` over a traced 1-d array, without one select per element.

    Python keeps the first element unless a later one compares greater, so the result is
    ``x[0]`` when it is NaN (nothing compares greater than NaN), and otherwise the first
    element equal to the largest non-NaN one (first: ``-0.0`` and ``0.0`` compare equal)."""
    reduce = np.max if name == "max" else np.min
    if not dtypes.is_floating(x.dtype):
        return translate(b, reduce, x)   # equal integers are the same value
    fill = -np.inf if name == "max" else np.inf
    nan = translate(b, np.isnan, x)
    extreme = translate(b, reduce, translate(b, np.where, nan, fill, x))
    first = translate(b, np.argmax, translate(b, operator.eq, x, extreme))
    head = x[0]
    return translate(b, np.where, translate(b, np.isnan, head), head, x[first])


_register("builtins.max", _extremum("max", operator.gt))
_register("builtins.min", _extremum("min", operator.lt))


# --- sum ------------------------------------------------------------------------------------

def builtin_sum(b, iterable, /, start=0):
    if isinstance(iterable, Value) and iterable.ndim and iterable.shape[0] > UNROLL_LIMIT:
        return _array_sum(b, iterable, start)
    items = _items(b, "sum", iterable)
    if not has_traced((items, start)):
        return builtins.sum(items, start)
    if isinstance(start, (str, bytes, bytearray)):
        raise b.error(PSCTypeError, f"sum() can't sum {type(start).__name__}")
    total = start
    for item in items:
        total = translate(b, operator.add, total, item) if has_traced((total, item)) \
            else total + item
    return total


def _array_sum(b, x: Value, start):
    """``sum(x)`` over a long traced array: ``start + x[0]`` fixes the type, and the rest
    is added in order (a staged loop) unless integer addition makes the order moot."""
    first = translate(b, operator.add, start, x[0])
    if dtypes.is_integer(first.dtype) and not has_traced(start):
        rest = translate(b, np.sum, cast(b, x[1:], first.dtype), axis=0, dtype=first.dtype)
        return translate(b, operator.add, first, rest)

    def body(i, total):   # built on the loop body's builder, not on ``b``
        return (translate(current_builder(), operator.add, total, x[i]),)
    total, = for_stmt(range(1, x.shape[0]), body, (first,), ("sum()",))
    return total


_register("builtins.sum", builtin_sum)


# --- round and pow --------------------------------------------------------------------------

def builtin_round(b, number, ndigits=None):
    if not isinstance(number, Value):
        if isinstance(ndigits, Value):
            raise b.error(PSCTracedValueError, "round()'s ndigits must be known when the "
                          "program is built, but it is a traced value",
                          "pass it as a static argument (static_argnames)")
        return builtins.round(number, ndigits)
    if number.ndim:
        raise b.error(PSCTypeError, "type numpy.ndarray doesn't define __round__ method",
                      "use np.round(x, decimals)")
    kind = number.dtype.kind
    if kind == "c" or kind == "b" and not number.weak:
        raise b.error(PSCTypeError, f"type {_python_type_name(number)} doesn't define "
                      "__round__ method")
    if ndigits is None:   # a Python int: round half to even, then convert
        return _traced_int(b, number if kind in "iub" else b.round_nearest_even(number))
    ndigits = static_int(b, ndigits, "round()'s ndigits")
    if not number.weak:   # a NumPy scalar's __round__ is np.round
        return round_rule(b, number, ndigits)
    if kind == "f":
        raise b.error(PSCUnsupportedCallError, "round(x, ndigits) of a traced Python float "
                      "is not supported: Python rounds the exact decimal value of x "
                      "(round(2.675, 2) is 2.67), which np.round does not",
                      "use np.round(x, ndigits), NumPy's rounding")
    value = _traced_int(b, number)
    return value if ndigits >= 0 else _round_int_half_even(b, value, 10 ** -ndigits)


def _round_int_half_even(b, x: Value, unit: int) -> Value:
    """Python's ``round(n, -k)`` for an int: to a multiple of ``unit``, halves to even."""
    remainder = translate(b, operator.mod, x, unit)           # in [0, unit)
    down = translate(b, operator.sub, x, remainder)
    twice = translate(b, operator.mul, remainder, 2)
    odd = translate(b, operator.ne, translate(b, operator.mod,
                                              translate(b, operator.floordiv, down, unit), 2), 0)
    up = translate(b, operator.or_, translate(b, operator.gt, twice, unit),
                   translate(b, operator.and_, translate(b, operator.eq, twice, unit), odd))
    return translate(b, np.where, up, translate(b, operator.add, down, unit), down)


def builtin_pow(b, base, exp, mod=None):
    if mod is None:
        return translate(b, operator.pow, base, exp)
    if not has_traced((base, exp, mod)):
        return builtins.pow(base, exp, mod)
    operands = (base, exp, mod)
    if any(isinstance(v, Value) and not v.weak or isinstance(v, (np.generic, np.ndarray))
           for v in operands):
        raise b.error(PSCTypeError, "unsupported operand type(s) for ** or pow(): " +
                      ", ".join(f"'{_python_type_name(v)}'" for v in operands))
    if not all(isinstance(v, Value) and v.dtype.kind in "iu" or type(v) is int
               for v in operands):
        raise b.error(PSCTypeError, "pow() 3rd argument not allowed unless all arguments "
                      "are integers")
    if isinstance(exp, Value) or isinstance(mod, Value):
        raise b.error(PSCUnsupportedCallError, "pow(x, y, m) with a traced exponent or "
                      "modulus is not supported", "pass them as static arguments")
    if mod == 0:
        raise b.error(PSCValueError, "pow() 3rd argument cannot be 0")
    if exp < 0 or abs(mod) > 2 ** 31:
        raise b.error(PSCUnsupportedCallError, "pow(x, y, m) on a traced int needs y >= 0 "
                      "and |m| <= 2**31 (so that no product overflows int64)",
                      "compute it with Python ints outside the jit_ps function")
    result, square = 1 % mod, translate(b, operator.mod, base, mod)
    while exp:
        if exp & 1:
            result = translate(b, operator.mod, translate(b, operator.mul, result, square), mod)
        exp >>= 1
        if exp:
            square = translate(b, operator.mod, translate(b, operator.mul, square, square), mod)
    return _traced_int(b, lift(b, result))


_register("builtins.round", builtin_round)
_register("builtins.pow", builtin_pow)


# --- bool, int, float, complex --------------------------------------------------------------

def _scalar_operand(b, name: str, x) -> Value:
    """``x`` as the 0-d value a Python conversion reads (NumPy converts 0-d arrays only)."""
    if x.ndim:
        raise b.error(PSCTypeError, "only 0-dimensional arrays can be converted to Python "
                      "scalars", f"index the element first ({name}(x[i])), or keep an array "
                      f"(x.astype(...))")
    return x


def builtin_bool(b, x=False, /):
    if not isinstance(x, Value):
        return builtins.bool(x)
    if x.size == 0:
        raise b.error(PSCValueError, "The truth value of an empty array is ambiguous. Use "
                      "`array.size > 0` to check that an array is not empty.")
    return _weak_copy(b, truth(x))


def builtin_int(b, x=0, /, *args, **kwargs):
    if not isinstance(x, Value):
        if has_traced((args, kwargs)):
            raise b.error(PSCTypeError, "int() can't convert non-string with explicit base")
        return builtins.int(x, *args, **kwargs)
    if args or kwargs:
        raise b.error(PSCTypeError, "int() can't convert non-string with explicit base")
    x = _scalar_operand(b, "int", x)
    return _traced_int(b, x)    # truncates toward zero, as int() does


def _conversion(name: str, dtype):
    python = getattr(builtins, name)

    def rule(b, x=0, /, *args, **kwargs):
        if not isinstance(x, Value) and not has_traced((args, kwargs)):
            return python(x, *args, **kwargs)
        if args or kwargs:
            raise b.error(PSCUnsupportedCallError, f"{name}() of two traced parts is not "
                          "supported", "write re + im * 1j")
        # float() of a complex NumPy scalar warns (ComplexWarning) and keeps the real
        # part, as the cast does.
        return _weak_copy(b, cast(b, _scalar_operand(b, name, x), dtype))
    rule.__name__ = f"builtin_{name}"
    return rule


_register("builtins.bool", builtin_bool)
_register("builtins.int", builtin_int)
_register("builtins.float", _conversion("float", dtypes.float64))
_register("builtins.complex", _conversion("complex", np.complex128))
