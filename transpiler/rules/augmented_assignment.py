"""Augmented assignment to a variable becomes a functional update when a value is traced.

NumPy's ``t *= x`` writes into ``t`` (keeping its dtype and shape, refusing a result that
``same_kind`` casting cannot store); a traced array cannot be written into, and NumPy
cannot write a traced value into a NumPy array.  So when the value is traced, the variable
is rebound to what `runtime.augassign` computes with NumPy's in-place rules.  When the
value is static the statement stays as written: a traced target's own in-place operators
(`Value.__iadd__`, ...) follow the same rules, and a static one is Python's.

>>> from transpiler.doctest_helpers import demo
>>> print(demo(AugmentedAssignment, '''
... def f(x, n):
...     t = np.ones(3)
...     t *= x
...     n += 1
...     t -= n
...     return t
... ''', static_argnames=("n",)))
def f(x, n):
    t = np.ones(3)
    t = psc.augassign(t, x, 'mul')
    n += 1
    t -= n
    return t
"""
from __future__ import annotations

import gast

from ..anno import Anno, BindingTime, getanno
from .base import Rule, load, runtime_call, with_origin
from .subscript_assignment import _MODES

_ALL_MODES = {**_MODES, gast.MatMult: "matmul"}


def _static(node) -> bool:
    return getanno(node, Anno.BINDING_TIME) is BindingTime.STATIC


class AugmentedAssignment(Rule):
    """``t op= v`` -> ``t = psc.augassign(t, v, 'op')`` unless ``v`` is static."""

    rewrites = frozenset({gast.AugAssign})

    def visit_AugAssign(self, node):
        target = node.target
        if not isinstance(target, gast.Name):   # elements: SubscriptAssignment's
            return node
        if _static(node.value):
            return node
        call = runtime_call(self.context.runtime_alias, "augassign", load(target.id),
                            node.value, gast.Constant(_ALL_MODES[type(node.op)], None))
        assignment = gast.Assign([gast.Name(target.id, gast.Store(), None, None)], call, None)
        return with_origin(assignment, node)
