"""What a traced `Value` offers user code: NumPy's operators, attributes and methods.

Generated code keeps the source's expressions (``np.dot(x, w) + b``, ``x.sum(axis=0)``,
``x.T``, ``x[i]``), so a `Value` behaves like an ``ndarray`` at build time: each operator or
method goes through the translation rule registered for NumPy's meaning of it, on the
current builder (`runtime.context`).  Shapes, dtypes and sizes are static Python values.
Anything that needs the *contents* (``bool(x)``, ``float(x)``, ``np.asarray(x)``) is a
`PSCTracedValueError` explaining what to do instead.  An ndarray method or attribute
without a rule (``x.tofile``, ``x.nonzero()``) is a `PSCUnsupportedCallError` at the line,
which is also an ``AttributeError`` so that ``hasattr`` probing keeps its meaning.

The IR (`runtime.ir`) knows nothing of NumPy, and the translation rules need the IR, so
`Value` is defined bare and this module, above both, installs the members of
`ArrayMethods` on it when it is imported (``runtime/__init__`` imports it, and importing
any ``runtime`` module runs that first).  JAX does the same: ``jax/_src/numpy/
array_methods.py`` sets the NumPy methods on its tracer and array types at import.  So the
imports go one way: ``ir`` <- ``translation`` <- ``inplace`` <- ``array_api``.
"""
from __future__ import annotations

import operator

import numpy as np

from .context import current_builder, has_builder
from .errors import PSCTracedValueError, PSCTypeError, PSCUnsupportedCallError
from .index_facts import note_arithmetic, note_negated
from .inplace import update
from .ir import Value
from ._mirror import apply_ufunc_method
from .translation import lookup_rule, translate, translate_numpy


class PSCUnsupportedAttributeError(PSCUnsupportedCallError, AttributeError):
    """An ndarray method or attribute that traced arrays do not offer.  Also an
    `AttributeError`, so ``hasattr``/``getattr(x, name, default)`` probing keeps working."""


def _apply(fn, *args, **kwargs):
    return translate(current_builder(), fn, *args, **kwargs)


def _binary(op):
    def method(self, other):
        result = _apply(op, self, other)
        note_arithmetic(op, self, other, result)   # `i + K` remembers it is i shifted
        return result
    return method


def _reflected(op):
    def method(self, other):
        result = _apply(op, other, self)
        note_arithmetic(op, other, self, result)
        return result
    return method


def _inplace(mode):
    def method(self, other):
        return update(self, other, mode)
    return method


def _unary(op):
    def method(self):
        result = _apply(op, self)
        if op is operator.neg:
            note_negated(self, result)
        return result
    return method


def _method(name):
    qualified = f"numpy.ndarray.{name}"

    def method(self, *args, **kwargs):
        return _apply(qualified, self, *args, **kwargs)
    method.__name__ = name
    return method


def _needs_contents(what: str, hint: str):
    def method(self, *args, **kwargs):
        raise PSCTracedValueError(f"{what} of a traced array is only known when the program "
                                  "runs", hint=hint)
    return method


def _error(cls, message: str, hint: str):
    error = cls(message, hint=hint)
    return error.with_location(current_builder().location) if has_builder() else error


def _unsupported_attribute(value, name: str) -> AttributeError:
    """The error for ``x.name`` on a traced array ``x``, at the user's line."""
    if hasattr(np.ndarray, name):
        message = f"ndarray.{name} is not supported on traced arrays"
        hint = (f"use np.{name}(x, ...) instead" if _has_numpy_rule(name) else
                "use a supported NumPy function (runtime.registered_names() lists them)")
    else:
        message = f"'ndarray' object has no attribute '{name}'"
        hint = "traced arrays offer the attributes and methods of numpy.ndarray"
    error = PSCUnsupportedAttributeError(message, hint=hint)
    error.name, error.obj = name, value
    return error.with_location(current_builder().location) if has_builder() else error


def _has_numpy_rule(name: str) -> bool:
    return lookup_rule(f"numpy.{name}") is not None


class ArrayMethods:
    """The members `install` puts on `runtime.ir.Value` (a namespace, not a base class)."""

    __hash__ = object.__hash__     # values are graph nodes: identity, not contents

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # A NumPy ufunc reached without the mirror (a global ``OPS = (np.add, np.sin)``
        # indexed in PSC code, ``ndarray + Value``): its rule, as through the mirror.
        if kwargs.get("out") is not None:
            raise _error(PSCTypeError, f"np.{ufunc.__name__}(..., out=...) writes into an "
                         "array, which PSC functions cannot do", "use the returned value")
        if method == "__call__":
            return translate_numpy(current_builder(), ufunc, *inputs, **kwargs)
        return apply_ufunc_method(current_builder(), ufunc, method,
                                  f"numpy.{ufunc.__name__}.{method}", *inputs, **kwargs)

    def __getattr__(self, name: str):
        # Only reached when ordinary lookup fails.  Private and special names (NumPy's and
        # Python's protocol probes: __array_interface__, __deepcopy__, _fields...) stay
        # plain AttributeErrors; a public name is user code asking for an ndarray feature.
        if name.startswith("_"):
            raise AttributeError(f"'Value' object has no attribute '{name}'")
        raise _unsupported_attribute(self, name)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __round__(self, ndigits=None):
        # Python's round() as `numpy_rules.builtins` gives it: a NumPy scalar's __round__
        # (a traced Python int for ndigits=None); arrays have none.
        return _apply("builtins.round", self, ndigits)

    def __divmod__(self, other):
        return _apply("numpy.divmod", self, other)

    def __rdivmod__(self, other):
        return _apply("numpy.divmod", other, self)

    @property
    def real(self):
        return _apply("numpy.real", self)

    @property
    def imag(self):
        return _apply("numpy.imag", self)

    @property
    def flat(self):
        # read-only: `x.flat[i]` and iteration see the C-order elements; NumPy's flatiter
        # also assigns (`x.flat[i] = v`), which the functional rewrite of `x[...] = v`
        # does not reach
        return _apply("numpy.ravel", self)

    @property
    def T(self):
        return _apply("numpy.transpose", self)

    @property
    def mT(self):
        return _apply("numpy.matrix_transpose", self)

    def __len__(self):
        if not self.shape:
            raise PSCTypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __getitem__(self, index):
        return _apply(operator.getitem, self, index)

    def __setitem__(self, index, value):
        raise PSCTypeError("traced arrays cannot be changed in place",
                           hint="the transpiler rewrites `x[i] = v` into a functional update; "
                                "in hand-written build code use runtime.setitem(x, i, v)")

    __bool__ = _needs_contents(
        "the truth value", "use np.where, or a staged conditional, instead of Python `if`")
    __float__ = _needs_contents("the Python float", "keep it an array")
    __int__ = _needs_contents("the Python int", "keep it an array, or make the argument "
                              "static with static_argnames")
    __index__ = _needs_contents("the integer value", "make it static (static_argnames) or "
                                "use a traced index: x[i] works with traced i")
    __complex__ = _needs_contents("the Python complex", "keep it an array")
    __array__ = _needs_contents("the NumPy array", "use NumPy functions through the "
                                "transpiler instead of converting")
    item = _needs_contents("item()", "keep it an array")
    tolist = _needs_contents("tolist()", "keep it an array")


_OPERATORS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
    "pow": operator.pow, "matmul": operator.matmul, "and": operator.and_,
    "or": operator.or_, "xor": operator.xor, "lshift": operator.lshift,
    "rshift": operator.rshift,
}
for _name, _op in _OPERATORS.items():
    setattr(ArrayMethods, f"__{_name}__", _binary(_op))
    setattr(ArrayMethods, f"__r{_name}__", _reflected(_op))
    setattr(ArrayMethods, f"__i{_name}__", _inplace(_name))   # NumPy's in-place rules
for _name, _op in {"lt": operator.lt, "le": operator.le, "gt": operator.gt,
                   "ge": operator.ge, "eq": operator.eq, "ne": operator.ne}.items():
    setattr(ArrayMethods, f"__{_name}__", _binary(_op))
for _name, _op in {"neg": operator.neg, "pos": operator.pos, "invert": operator.invert,
                   "abs": operator.abs}.items():
    setattr(ArrayMethods, f"__{_name}__", _unary(_op))

METHODS = ("sum", "mean", "prod", "max", "min", "argmax", "argmin", "all", "any", "std",
           "var", "cumsum", "cumprod", "reshape", "transpose", "swapaxes", "squeeze", "ravel",
           "flatten", "astype", "clip", "copy", "dot", "trace", "repeat", "argsort", "round")
# issue 13: methods that forward to their NumPy function (`numpy_rules.methods`)
METHODS += ("diagonal", "take", "conj", "conjugate", "nonzero", "searchsorted",
            "argpartition", "choose", "compress")
for _name in METHODS:
    setattr(ArrayMethods, _name, _method(_name))


# What a class body defines for the class itself, not for its instances.
_CLASS_BOOKKEEPING = frozenset({"__module__", "__qualname__", "__doc__", "__dict__",
                                "__weakref__", "__firstlineno__", "__static_attributes__"})


def install(cls) -> None:
    """Give ``cls`` (`runtime.ir.Value`) the operators, attributes and methods above."""
    members = {name: member for name, member in vars(ArrayMethods).items()
               if name not in _CLASS_BOOKKEEPING}
    clash = sorted(set(members) & set(vars(cls)))
    if clash:   # a member of the IR's own would silently be replaced
        raise TypeError(f"{cls.__name__} already defines {clash}")
    for name, member in members.items():
        setattr(cls, name, member)


install(Value)
