"""A call of a helper that updates its parameters in place rebinds what it passed.

NumPy's ``pressure_poisson(nit, p, dx, dy, b)`` writes into ``p``; a transpiled helper
gives the final values of the parameters it updates back instead (its build function
returns `runtime.argument_updates.ArgumentUpdates`).  The analysis found which calls
pass arguments to such parameters (`Anno.HELPER_UPDATES`; the subset check accepted them:
names, never views); here the call becomes ``p, = psc.updated_arguments(helper,
('p',), ...)`` as a statement, or ``y, (p,) = psc.result_and_updated_arguments(helper,
('p',), ...)`` on the right of ``y = ...``.  The names tuple lists the helper's parameters
whose new values the caller rebinds, in the order of the targets (an argument that is a
temporary, ``helper(2 * u)``, is updated and dropped, as in NumPy).  When the caller's
name is its own argument, `transpiler.checks` has recorded that argument as updated, and
`rules.argument_updates` writes it back in turn.

>>> from transpiler.doctest_helpers import demo
>>> print(demo(HelperUpdates, '''
... def smooth(field, weight):
...     field[1:-1] = weight * (field[:-2] + field[2:])
...
... def solve(u, v):
...     smooth(u, 0.5)
...     total = smooth(v * 2.0, 0.5)
...     return total
... ''', checked=True))
def solve(u, v):
    u, = psc.updated_arguments(smooth, ('field',), u, 0.5)
    total, () = psc.result_and_updated_arguments(smooth, (), v * 2.0, 0.5)
    return total
"""
from __future__ import annotations

import gast

from ..analysis.walk import walk
from ..anno import Anno, getanno
from .base import Rule, runtime_call, with_origin


def _store(name: str) -> gast.Name:
    return gast.Name(name, gast.Store(), None, None)


class HelperUpdates(Rule):
    """``helper(p)`` -> ``p, = psc.updated_arguments(helper, ('param',), p)``."""

    rewrites = frozenset({gast.Call})

    @staticmethod
    def has_work(function) -> bool:
        return any(getanno(node, Anno.HELPER_UPDATES) for node in walk(function)
                   if isinstance(node, gast.Call))

    def _rewritten(self, call: gast.Call):
        """(the rebound names, the runtime call) for a call of an updating helper."""
        pairs = getanno(call, Anno.HELPER_UPDATES)
        if not pairs:
            return None
        rebound = [(parameter, argument.id) for parameter, argument, _ in pairs
                   if isinstance(argument, gast.Name)]
        names = gast.Tuple([gast.Constant(p, None) for p, _ in rebound], gast.Load())
        targets = gast.Tuple([_store(name) for _, name in rebound], gast.Store())
        return targets, names

    def _updating_call(self, node, runtime_name: str):
        """(the names the call rebinds, ``psc.<runtime_name>(helper, names, ...)``) for a
        statement whose value calls an updating helper; None otherwise."""
        call = node.value
        found = self._rewritten(call) if isinstance(call, gast.Call) else None
        if found is None:
            return None
        targets, names = found
        return targets, runtime_call(self.context.runtime_alias, runtime_name, call.func,
                                     names, *call.args, keywords=call.keywords)

    def visit_Expr(self, node):
        found = self._updating_call(node, "updated_arguments")
        if found is None:
            return node
        targets, value = found
        return with_origin(gast.Assign([targets], value, None), node)

    def visit_Assign(self, node):
        found = self._updating_call(node, "result_and_updated_arguments")
        if found is None:
            return node
        targets, value = found
        both = gast.Tuple([node.targets[0], targets], gast.Store())
        return with_origin(gast.Assign([both], value, None), node)
