"""Call signatures: what decides whether a cached executable can run a call.

A `Signature` is the pytree structure of the traced arguments, each leaf's shape, dtype and
weakness (a Python scalar is weak: it adapts to the arrays it meets, as in NumPy), the
static arguments, and the device the call runs on (`runtime.placement`), or for an SPMD
call its mesh and shardings (`runtime.spmd.SpmdLayout`, frozen dataclasses of jax's
hashable ``Mesh``/``NamedSharding``).  Two calls with
equal signatures share one executable.

A static argument is keyed by its value *and its type*, recursively through containers
(`static_key`), as JAX keys them: ``1``, ``1.0`` and ``True`` are equal in Python but
``isinstance`` tells them apart, so each gets its own build.

Leaves are checked here for what the executable cannot see: a non-native byte order is
keyed (and later moved) as the native dtype, since the values are what count; an
``ndarray`` subclass is refused unless it is plain data (``np.memmap``), because its
meaning (a mask, matrix semantics) would be lost.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
from jax import tree_util
from jaxlib import _jax

from . import dtypes
from .errors import PSCOverflowError, PSCTypeError

# Python scalar types are weakly typed; their dtype is NumPy's default for them.
_WEAK_SCALARS = {bool: dtypes.bool_, int: dtypes.int64, float: dtypes.float64,
                 complex: np.dtype(np.complex128)}

# ndarray subclasses that are nothing but their data: traced as the plain array they view.
PLAIN_DATA_SUBCLASSES = (np.memmap,)

_SUBCLASS_HINTS = {
    np.ma.MaskedArray: "the mask would be ignored; pass np.ma.filled(x, fill_value), or "
                       "the data and the mask (np.ma.getmaskarray(x)) as two arrays",
    np.matrix: "matrix semantics (2-D results, * as a matrix product) would be lost; "
               "pass np.asarray(x) and use @ for matrix products",
}


@dataclasses.dataclass(frozen=True)
class LeafSpec:
    """Abstract value of one traced argument leaf."""

    shape: tuple[int, ...]
    dtype: np.dtype
    weak: bool = False

    def __str__(self) -> str:
        return f"{self.dtype}{list(self.shape)}{' (weak)' if self.weak else ''}"


@dataclasses.dataclass(frozen=True)
class StaticArg:
    """One static argument in a signature: compared by `static_key`, built with ``value``."""

    name: str
    key: Any
    value: Any = dataclasses.field(compare=False)


@dataclasses.dataclass(frozen=True)
class Signature:
    """The cache key of a staged function call."""

    treedef: Any                       # PyTreeDef of the traced arguments
    leaves: tuple[LeafSpec, ...]
    static: tuple[StaticArg, ...] = ()
    checks: frozenset = frozenset()    # the run-time checks compiled in (runtime.checks)
    device: Any = None                 # the jax Device it runs on (runtime.placement)
    layout: Any = None                 # an SPMD call's `runtime.spmd.SpmdLayout`

    def static_values(self) -> dict:
        return {arg.name: arg.value for arg in self.static}


def static_key(value) -> Any:
    """``value`` with its type, recursively through tuples (named ones too) and frozensets:
    equal keys mean equal values of equal types (``(1, 2)`` and ``(1.0, 2)`` differ).
    Raises ``TypeError`` for an unhashable value."""
    kind = type(value)
    if kind is tuple or (isinstance(value, tuple) and hasattr(value, "_fields")):
        return (kind, tuple(static_key(v) for v in value))
    if kind is frozenset:
        return (kind, frozenset(static_key(v) for v in value))
    hash(value)
    return (kind, value)


def native(dtype: np.dtype) -> np.dtype:
    """``dtype`` in the machine's byte order (the order XLA's buffers have)."""
    return dtype if dtype.isnative else dtype.newbyteorder("=")


def leaf_spec(value, where: str | Callable[[], str] = "argument") -> LeafSpec:
    """The `LeafSpec` of a traced argument leaf (array, NumPy scalar or Python scalar).
    ``where`` names the leaf in errors (a callable: computed only for an error)."""
    if callable(where):
        try:
            return leaf_spec(value)
        except (PSCTypeError, PSCOverflowError):
            pass
        return leaf_spec(value, where())   # raises again, now naming the leaf
    scalar_dtype = _WEAK_SCALARS.get(type(value))
    if scalar_dtype is not None:
        if type(value) is int and not -2**63 <= value < 2**63:
            raise PSCOverflowError(
                f"{where}: Python integer {value} is out of bounds for int64",
                hint="a traced Python int is an int64; pass a float or np.uint64, or make "
                     "the argument static (static_argnames)")
        return LeafSpec((), scalar_dtype, True)
    if isinstance(value, np.ndarray) and type(value) is not np.ndarray:
        check_array_subclass(value, where)
    if isinstance(value, (np.ndarray, np.generic, _jax.ArrayImpl)):
        try:
            dtype = dtypes.canonical(native(value.dtype))
        except TypeError:
            raise PSCTypeError(f"{where}: dtype {value.dtype} is not supported") from None
        return LeafSpec(tuple(value.shape), dtype, False)
    raise PSCTypeError(
        f"{where} is a {type(value).__name__}, which cannot be traced",
        hint="pass arrays, numbers, or tuples/lists/dicts of them; mark other arguments "
             "static with static_argnames")


def check_array_subclass(value: np.ndarray, where: str) -> None:
    """Refuse an ``ndarray`` subclass whose meaning the executable would drop."""
    if isinstance(value, PLAIN_DATA_SUBCLASSES):
        return
    kind = type(value)
    hint = next((h for cls, h in _SUBCLASS_HINTS.items() if isinstance(value, cls)),
                "only plain arrays are traced; pass np.asarray(x) if the subclass adds "
                "nothing to its data")
    raise PSCTypeError(f"{where} is a {kind.__module__}.{kind.__qualname__}, an ndarray "
                       "subclass, which cannot be traced", hint=hint)


def signature_of(traced_args, static: tuple = (),
                 describe: Callable[[int], str] | None = None,
                 device=None) -> tuple[Signature, list]:
    """The signature of a call on ``device`` and its flat list of traced leaves.
    ``static`` holds (name, value) pairs; ``describe(i)`` names leaf ``i`` in errors."""
    leaves, treedef = tree_util.tree_flatten(traced_args)
    describe = describe or (lambda i: f"argument leaf {i}")
    specs = [leaf_spec(leaf, lambda i=i: describe(i)) for i, leaf in enumerate(leaves)]
    static_args = tuple(StaticArg(name, static_key(value), value) for name, value in static)
    return Signature(treedef, tuple(specs), static_args, device=device), leaves
