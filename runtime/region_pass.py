"""What the passes over a finished computation share (`runtime.if_conversion`,
`runtime.loop_batching`, `runtime.loop_unrolling`): a walk that rewrites chosen ops innermost region first, and
inlining a region's ops."""
from __future__ import annotations

from typing import Callable

from .builder import Builder
from .ir import Operation, Region, Value


def rewrite_innermost_first(root: Region, chosen: Callable[[Operation], bool],
                            rewrite: Callable[[Builder, Operation], list | None]) -> int:
    """Replace every op of ``root`` and its nested regions for which ``chosen`` is true by
    what ``rewrite(b, op)`` appends to its region with builder ``b``, nested regions first
    (a rewritten inner op can make its enclosing one a candidate).  ``rewrite`` returns the
    values that replace the op's results (later ops and the region's outputs are renamed
    to them), or None when the ops it made produce the op's own result values.  Returns
    how many ops were rewritten."""
    seen: set[int] = set()   # a region object may serve two ops (transforms replay an op
    # with its regions): each is rewritten once

    def walk(region: Region) -> int:
        if id(region) in seen:
            return 0
        seen.add(id(region))
        count = sum(walk(nested) for op in region.operations for nested in op.regions)
        plan = [chosen(op) for op in region.operations]
        if not any(plan):
            return count
        operations, region.operations = region.operations, []
        b = Builder.resume(region)
        renamed: dict[Value, Value] = {}
        for op, rewritten in zip(operations, plan):
            if renamed:
                op.operands = tuple(renamed.get(v, v) for v in op.operands)
            if not rewritten:
                region.operations.append(op)
                continue
            new = rewrite(b, op)
            if new is not None:
                renamed.update(zip(op.results, new))
            count += 1
        if renamed:
            region.outputs = [renamed.get(v, v) for v in region.outputs]
        return count
    return walk(root)


def inline_region(b: Builder, region: Region, passed) -> list[Value]:
    """Append copies of ``region``'s ops to ``b``'s region, its parameters bound to
    ``passed``; returns what its outputs became."""
    mapping = dict(zip(region.params, passed))
    for inner in region.operations:
        copy = Operation(inner.name, [mapping[v] for v in inner.operands], inner.attrs,
                         inner.regions, inner.location)
        copy.results = tuple(Value(v.shape, v.dtype, b.region, copy, weak=v.weak)
                             for v in inner.results)
        mapping.update(zip(inner.results, copy.results))
        b.region.operations.append(copy)
    return [mapping[v] for v in region.outputs]
