"""Tracing a Python function into a closed IR region, and replaying regions.

Autodiff transforms *regions*: `trace` runs a function on fresh parameters in a child
region of the current builder, so every value it reads from outside becomes a capture
(treated as a constant by the transforms) and the region records exactly the function's
ops.  `replay` re-emits one recorded op into a builder on new operands.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from jax import tree_util

from ..context import building
from ..errors import PSCTypeError
from ..ir import Operation, Region, Value


@dataclasses.dataclass
class Traced:
    region: Region
    in_treedef: Any
    out_treedef: Any
    outputs: list          # output leaves: Values of the region, or static constants


def trace(b, fn, args) -> Traced:
    """Run ``fn(*args)`` on parameters of ``args``' types in a child region of ``b``."""
    leaves, treedef = tree_util.tree_flatten(args)
    sub = b.child("traced")
    params = []
    for leaf in leaves:
        if not isinstance(leaf, Value):
            raise b.error(PSCTypeError, "differentiated arguments must be arrays, got "
                          f"{type(leaf).__name__}")
        params.append(sub.add_parameter(leaf.shape, leaf.dtype, leaf.weak))
    with building(sub):
        out = fn(*tree_util.tree_unflatten(treedef, params))
    out_leaves, out_treedef = tree_util.tree_flatten(out)
    region = sub.finish_region([v for v in out_leaves if isinstance(v, Value)])
    captured = iter(region.outputs)
    outputs = [next(captured) if isinstance(v, Value) else v for v in out_leaves]
    return Traced(region, treedef, out_treedef, outputs)


def replay(b, op: Operation, operands) -> list[Value]:
    """Emit ``op`` again in builder ``b`` on ``operands`` (same attributes and regions)."""
    results = b.emit(op.name, operands, op.regions, **op.attrs)
    for new, old in zip(results, op.results):
        new.weak = old.weak
    return results
