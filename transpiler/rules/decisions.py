"""Which statements become staged control flow, and what they carry.

Shared by the lowering rules (which only lower ``break``/``continue``/``return`` where the
construct around them will be staged) and the conversion rules.  A statement is *staged*
unless the annotations prove it static; nodes written by earlier rules carry no
annotation, so they stage, and the runtime then decides from the actual values (see
`runtime.control_flow`): staging is always correct, keeping Python is only more readable.
"""
from __future__ import annotations

import gast

from runtime.public_names import STATIC_RANGE

from ..analysis.liveness import assigned_variables, carried  # noqa: F401  (carried: for rules)
from ..analysis.resolve import range_call  # noqa: F401  (for rules)
from ..anno import Anno, BindingTime, getanno


def _traced(node) -> bool:
    return getanno(node, Anno.BINDING_TIME, BindingTime.TRACED) is BindingTime.TRACED


def is_staged_if(node: gast.If) -> bool:
    return _traced(node.test)


def is_staged_while(node: gast.While) -> bool:
    return _traced(node.test)


def branch_outputs(node: gast.If, variables=None) -> list[str]:
    """What a staged ``if`` gives back: variables its branches assign that are live after
    it.  (Unlike a loop's state, a value only read inside is not unified: after
    ``if c: return x`` the rest, ``x = x.sum()``..., is an ``if`` that must not make ``x``
    one type on both paths.)"""
    if variables is None:
        variables = assigned_variables(node)
    return sorted(variables & set(getanno(node, Anno.LIVE_OUT, frozenset())))


def branch_inputs(node: gast.If, variables=None) -> list[str]:
    """What a staged ``if``'s branches read before assigning (so their functions take it
    as a parameter) but nothing reads after the ``if``."""
    read_first = set(getanno(node, Anno.BRANCHES_LIVE_IN, frozenset()))
    if variables is None:   # (`assigned_variables` of ``node``, where the caller has it)
        variables = assigned_variables(node)
    return sorted((variables & read_first) - set(branch_outputs(node, variables)))


def is_staged_for(node: gast.For, function: gast.FunctionDef, state=None) -> bool:
    """``state``: `carried` of ``node``, where the caller has it."""
    kind = range_call(node.iter)
    if kind == STATIC_RANGE:
        return False
    if _traced(node.iter):
        # `for W, b in params` unpacks tuples: params is a container, which unrolls as
        # Python.  A single target may walk a traced array's rows: staged (the runtime
        # still unrolls it if the value turns out to be a list).
        return isinstance(node.target, gast.Name)
    if kind != "range":
        return False   # a static container: the loop unrolls as Python
    times = getanno(function, Anno.VARIABLE_TIMES, {})
    return any(times.get(name, BindingTime.TRACED) is BindingTime.TRACED
               for name in (carried(node) if state is None else state))


def is_staged_loop(node, function) -> bool:
    return is_staged_while(node) if isinstance(node, gast.While) else \
        is_staged_for(node, function)
