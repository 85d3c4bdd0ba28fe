"""Threading the run-time checks of a finished computation into one output.

`runtime.checks` records each guard as a ``check`` op in the region where it was built (a
loop body, a branch).  Regions are closed, so a failure seen inside a loop body can only
leave it through the loop's state.  `thread_checks` runs once, on the finished
computation, and makes that explicit: a *failure code* (int32, 0 while nothing failed,
else the number of the first site that failed) starts as 0 at the top, and every
``check`` op becomes ``code = failed and code == 0 ? site : code``.  A ``while`` holding
guards carries the code as one more state leaf (its test also stops the loop once the
code is set: the call raises anyway), and its test's guards, which cannot give anything
back, are evaluated again on the final state after the loop (a copy of the test's ops:
the test stopped the loop at that state if one of them failed).  A ``case`` holding
guards takes the code as one more operand and gives it back as one more result.  The
final code is appended to the computation's outputs; `StagedFunction` reads it.

Operations without guards in them are left exactly as they were.
"""
from __future__ import annotations

import numpy as np

from .builder import Builder
from .checks import CheckSite
from .ir import Computation, Operation, Region, Value

_CODE = np.dtype(np.int32)
_THREADED = ("check", "debug_callback")


def thread_checks(computation: Computation) -> tuple[CheckSite, ...] | None:
    """Replace the ``check`` ops of ``computation`` (changed in place) by a failure code,
    appended to its outputs, and chain its ``debug_callback`` ops on that code; return
    the site table (code n is ``sites[n - 1]``).  A computation with neither is left
    alone and gives None."""
    root = computation.region
    threading = _Threading()
    if not threading.has_checks(root):
        return None
    operations, root.operations = root.operations, []
    b = Builder.resume(root)
    code = threading.fold(b, operations, b.constant(0, _CODE))
    root.outputs.append(code)
    return tuple(threading.sites)


class _Threading:
    def __init__(self):
        self.sites: list[CheckSite] = []
        self._has: dict[int, bool] = {}
        # regions already given a code parameter (a region object may serve two ops:
        # transforms replay an op with its regions); kept alive so their ids stay theirs
        self._done: dict[tuple, tuple] = {}

    def has_checks(self, region: Region, names=_THREADED) -> bool:
        """Whether ``region`` (or a region nested in it) holds an op named in ``names``."""
        key = (id(region), names)
        found = self._has.get(key)
        if found is None:
            found = any(op.name in names or any(self.has_checks(r, names) for r in op.regions)
                        for op in region.operations)
            self._has[key] = found
        return found

    def _op_has_checks(self, op: Operation) -> bool:
        return any(self.has_checks(r) for r in op.regions)

    def fold(self, b: Builder, operations, code: Value) -> Value:
        """Append ``operations`` to ``b``'s region, each ``check`` replaced by the code
        update; returns the code after them."""
        for op in operations:
            if op.name == "check":
                code = self._site(b, op, code)
            elif op.name == "debug_callback":   # takes the code and gives it back: ordered
                op.operands = (code, *op.operands)
                op.attrs["threaded"] = True
                b.region.operations.append(op)
                code = op.results[0]
            elif op.name == "while" and self._op_has_checks(op):
                code = self._while(b, op, code)
            elif op.name == "case" and self._op_has_checks(op):
                code = self._case(b, op, code)
            else:
                b.region.operations.append(op)
        return code

    def _site(self, b: Builder, op: Operation, code: Value) -> Value:
        self.sites.append(CheckSite(op.attrs["kind"], op.attrs["message"], op.location))
        number = b.constant(len(self.sites), _CODE)
        first = b.and_(op.operands[0], b.eq(code, b.constant(0, _CODE)))
        return b.select(first, number, code)

    def _nested(self, region: Region, position: int) -> tuple[Builder, Value]:
        """Give ``region`` a code parameter at ``position`` and fold its ops; returns its
        builder and its code after them."""
        operations, region.operations = region.operations, []
        param = Value((), _CODE, region)
        region.params.insert(position, param)
        sub = Builder.resume(region)
        return sub, self.fold(sub, operations, param)

    def _while(self, b: Builder, op: Operation, code: Value) -> Value:
        n = op.attrs["num_state"]
        cond, body = op.regions
        key = (id(cond), id(body))
        if key not in self._done:
            test_copy = (_copy_region(cond, prints=False)
                         if self.has_checks(cond, ("check",)) else None)
            sub, test_code = self._nested(cond, n)
            ok = sub.eq(test_code, sub.constant(0, _CODE))
            cond.outputs = [sub.and_(cond.outputs[0], ok)]
            _, body_code = self._nested(body, n)
            body.outputs.insert(n, body_code)
            self._done[key] = (cond, body, test_copy)
        test_copy = self._done[key][2]
        _insert_operand(op, n, code)
        op.attrs["num_state"] = n + 1
        result = _insert_result(op, n, b.region)
        b.region.operations.append(op)
        if test_copy is None:
            return result
        # The test's guards on the final state: the loop stopped there if one failed.
        outer = list(op.results[:n]) + list(op.operands[n + 1:])
        mapping = dict(zip(test_copy.params, outer))
        return self.fold(b, _copy_operations(test_copy.operations, mapping, b.region), result)

    def _case(self, b: Builder, op: Operation, code: Value) -> Value:
        key = tuple(id(r) for r in op.regions)
        if key not in self._done:
            for region in op.regions:
                _, branch_code = self._nested(region, len(region.params))
                region.outputs.append(branch_code)
            self._done[key] = tuple(op.regions)
        _insert_operand(op, len(op.operands), code)
        result = _insert_result(op, len(op.results), b.region)
        b.region.operations.append(op)
        return result


def _insert_operand(op: Operation, position: int, value: Value) -> None:
    operands = list(op.operands)
    operands.insert(position, value)
    op.operands = tuple(operands)


def _insert_result(op: Operation, position: int, region: Region) -> Value:
    avals = list(op.attrs["result_avals"])
    avals.insert(position, ((), _CODE))
    op.attrs["result_avals"] = tuple(avals)
    result = Value((), _CODE, region, op)
    results = list(op.results)
    results.insert(position, result)
    op.results = tuple(results)
    return result


def _copy_region(region: Region, mapping: dict | None = None,
                 parent: Region | None = None, prints: bool = True) -> Region:
    """A deep copy of ``region`` (fresh values throughout), nested in ``parent``; without
    its ``debug_callback`` ops unless ``prints`` (a copy of a loop test, run once more
    for its checks, must not print again)."""
    mapping = {} if mapping is None else mapping
    copy = Region(region.name, parent if parent is not None else region.parent)
    for param in region.params:
        mapping[param] = Value(param.shape, param.dtype, copy, weak=param.weak)
        copy.params.append(mapping[param])
    copy.operations = _copy_operations(region.operations, mapping, copy, prints)
    copy.outputs = [mapping[v] for v in region.outputs]
    copy.captures = {mapping.get(outer, outer): mapping[inner]
                     for outer, inner in region.captures.items() if inner in mapping}
    return copy


def _copy_operations(operations, mapping: dict, target: Region,
                     prints: bool = True) -> list[Operation]:
    copies = []
    for op in operations:
        if op.name == "debug_callback" and not prints:
            continue   # nothing reads its result before threading
        regions = [_copy_region(r, mapping, target, prints) for r in op.regions]
        copy = Operation(op.name, [mapping[v] for v in op.operands], op.attrs, regions,
                         op.location)
        copy.results = tuple(Value(v.shape, v.dtype, target, copy, weak=v.weak)
                             for v in op.results)
        mapping.update(zip(op.results, copy.results))
        copies.append(copy)
    return copies
