"""Call signatures: what decides whether a cached executable can run a call.

A `Signature` is the pytree structure of the traced arguments, each leaf's shape, dtype and
weakness (a Python scalar is weak: it adapts to the arrays it meets, as in NumPy), and the
values of the static arguments.  Two calls with equal signatures share one executable.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from jax import tree_util
from jaxlib import _jax

from . import dtypes
from .errors import PSCTypeError

# Python scalar types are weakly typed; their dtype is NumPy's default for them.
_WEAK_SCALARS = {bool: dtypes.bool_, int: dtypes.int64, float: dtypes.float64,
                 complex: np.dtype(np.complex128)}


@dataclasses.dataclass(frozen=True)
class LeafSpec:
    """Abstract value of one traced argument leaf."""

    shape: tuple[int, ...]
    dtype: np.dtype
    weak: bool = False

    def __str__(self) -> str:
        return f"{self.dtype}{list(self.shape)}{' (weak)' if self.weak else ''}"


@dataclasses.dataclass(frozen=True)
class Signature:
    """The cache key of a staged function call."""

    treedef: Any                       # PyTreeDef of the traced arguments
    leaves: tuple[LeafSpec, ...]
    static: tuple[tuple[str, Any], ...] = ()   # (argument name, value), hashable values


def leaf_spec(value, where: str = "argument") -> LeafSpec:
    """The `LeafSpec` of a traced argument leaf (array, NumPy scalar or Python scalar)."""
    scalar_dtype = _WEAK_SCALARS.get(type(value))
    if scalar_dtype is not None:
        if type(value) is int and not -2**63 <= value < 2**63:
            raise PSCTypeError(f"{where}: Python integer {value} does not fit in int64")
        return LeafSpec((), scalar_dtype, True)
    if isinstance(value, (np.ndarray, np.generic, _jax.ArrayImpl)):
        try:
            dtype = dtypes.canonical(value.dtype)
        except TypeError:
            raise PSCTypeError(f"{where}: dtype {value.dtype} is not supported") from None
        return LeafSpec(tuple(value.shape), dtype, False)
    raise PSCTypeError(
        f"{where} is a {type(value).__name__}, which cannot be traced",
        hint="pass arrays, numbers, or tuples/lists/dicts of them; mark other arguments "
             "static with static_argnames")


def signature_of(traced_args, static: tuple = ()) -> tuple[Signature, list]:
    """The signature of a call and its flat list of traced leaves."""
    leaves, treedef = tree_util.tree_flatten(traced_args)
    specs = tuple(leaf_spec(leaf, f"argument leaf {i}") for i, leaf in enumerate(leaves))
    return Signature(treedef, specs, static), leaves
