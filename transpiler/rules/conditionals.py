"""A staged ``if`` becomes `if_stmt` over two branch functions.

Each branch takes the carried variables (assigned in a branch and live at the ``if`` or
after it) and returns them; a variable assigned in only one branch, undefined before the
``if`` and used after it is an error naming both places.  Ifs with static tests stay
Python (only the taken branch is built).

>>> print(demo(Conditionals, '''
... def relu_or_scale(x, s):
...     if x.sum() > 0:
...         y = x
...     else:
...         y = x * s
...     return y
... '''))
def relu_or_scale(x, s):
<BLANKLINE>
    def if_true_L2(y):
        y = x
        return (y,)
<BLANKLINE>
    def if_false_L2(y):
        y = x * s
        return (y,)
    y, = psc.if_stmt(x.sum() > 0, if_true_L2, if_false_L2, (psc.UNDEFINED,), ('y',))
    return y
"""
from __future__ import annotations

import gast

from ..analysis.liveness import assigned_in
from ..anno import Anno, getanno
from .base import Rule, demo  # noqa: F401  (demo: used by the doctest)
from .control_flow_functions import (FunctionNames, body_function, initial_values,
                                     names_constant, reject_container_mutation,
                                     result_assignment, undefined_in_one_branch)
from .decisions import carried, is_staged_if
from .flags import load, runtime_call


class Conditionals(Rule):

    rewrites = frozenset({gast.If})
    reads_liveness = True   # what a staged construct carries

    def __init__(self, context):
        super().__init__(context)
        self.names = FunctionNames()

    def visit_If(self, node):
        self.generic_visit(node)
        if not is_staged_if(node):
            return node
        reject_container_mutation(node.body + node.orelse, self.context.source, "if")
        alias = self.context.runtime_alias
        state = carried(node)
        defined = getanno(node, Anno.DEFINED_IN, frozenset())
        live_after = getanno(node, Anno.LIVE_OUT, frozenset())
        in_body, in_else = assigned_in(node.body), assigned_in(node.orelse)
        for name in state:
            if name not in defined and name in live_after and not (name in in_body and
                                                                   name in in_else):
                undefined_in_one_branch(node, name, self.context.source, self.function)
        true_fn = body_function(self.names("if_true", node), state, node.body, state, node)
        false_fn = body_function(self.names("if_false", node), state, node.orelse, state,
                                 node.orelse[0] if node.orelse else node)
        # A variable both branches assign before reading starts UNDEFINED: its value before
        # the `if` may not exist where the call is (a body function the `if` sits in).
        needed = defined & getanno(node, Anno.LIVE_IN, frozenset())
        call = runtime_call(alias, "if_stmt", node.test, load(true_fn.name),
                            load(false_fn.name), initial_values(state, needed, alias),
                            names_constant(state))
        return [true_fn, false_fn, result_assignment(state, call, node)]
