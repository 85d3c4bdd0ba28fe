"""A staged ``if`` becomes `if_stmt` over two branch functions.

Each branch takes the carried variables (assigned in a branch and live after the ``if``)
and returns them; a variable a branch reads before assigning it, but that nothing reads
after the ``if``, is passed in only (``inputs=``), so its types on the two paths are never
unified.  A branch that ends in a lowered ``return`` gives back ``psc.UNDEFINED`` for
every variable but the exit variables (after a return they are dead), so they take the
other branch's type.  A variable assigned in only one branch, undefined before the ``if``
and used after it is an error naming both places, unless the other branch returned.
Ifs with static tests stay Python (only the taken branch is built).

>>> from transpiler.doctest_helpers import demo
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

``x`` is read and rebound in a branch but dead after the ``if``: an input only.

>>> print(demo(Conditionals, '''
... def halve_then_shift(x):
...     if x.sum() > 0:
...         x = x * 0.5
...         y = x + 1
...     else:
...         y = x
...     return y
... '''))
def halve_then_shift(x):
<BLANKLINE>
    def if_true_L2(y, x):
        x = x * 0.5
        y = x + 1
        return (y,)
<BLANKLINE>
    def if_false_L2(y, x):
        y = x
        return (y,)
    y, = psc.if_stmt(x.sum() > 0, if_true_L2, if_false_L2, (psc.UNDEFINED,), ('y',), inputs=(x,))
    return y
"""
from __future__ import annotations

import gast

from ..analysis.liveness import bindings_in
from ..anno import Anno, getanno
from .base import Rule, load, runtime_call
from .control_flow_functions import (FunctionNames, body_function, initial_values,
                                     names_constant, reject_container_mutation,
                                     result_assignment, undefined_in_one_branch)
from .decisions import branch_inputs, branch_outputs, is_staged_if


class Conditionals(Rule):

    rewrites = frozenset({gast.If})
    reads_liveness = True   # what a staged construct carries

    def __init__(self, context):
        super().__init__(context)
        self.names = FunctionNames()

    def visit_If(self, node):
        # Before the branches' own ifs are converted: which branch ends in a return.
        returned = (self._has_returned(node.body),
                    self._is_return_guard(node) or self._has_returned(node.orelse))
        self.generic_visit(node)
        if not is_staged_if(node):
            return node
        # what each branch binds, found once: the branches do not change below
        calls = []
        (in_body, body_functions), (in_else, else_functions) = \
            bindings_in(node.body, calls), bindings_in(node.orelse, calls)
        reject_container_mutation(node.body + node.orelse, self.context.source, "if",
                                  in_body | in_else, calls)
        alias = self.context.runtime_alias
        variables = (in_body | in_else) - (body_functions | else_functions)
        state, inputs = branch_outputs(node, variables), branch_inputs(node, variables)
        defined = getanno(node, Anno.DEFINED_IN, frozenset())
        live_after = getanno(node, Anno.LIVE_OUT, frozenset())
        for name in state:
            # a branch that returned needs no value for it: after a return it is dead
            unset = (name not in in_body and not returned[0]) or \
                (name not in in_else and not returned[1])
            if name not in defined and name in live_after and unset:
                undefined_in_one_branch(node, name, self.context.source, self.function)
        dead = [name for name in state if name not in self.context.exit_variables]
        true_fn = body_function(self.names("if_true", node), state + inputs, node.body, state,
                                node, dead if returned[0] else (), alias)
        false_fn = body_function(self.names("if_false", node), state + inputs, node.orelse,
                                 state, node.orelse[0] if node.orelse else node,
                                 dead if returned[1] else (), alias)
        # A variable both branches assign before reading starts UNDEFINED: its value before
        # the `if` may not exist where the call is (a body function the `if` sits in).
        needed = defined & getanno(node, Anno.LIVE_IN, frozenset())
        call = runtime_call(alias, "if_stmt", node.test, load(true_fn.name),
                            load(false_fn.name), initial_values(state, needed, alias),
                            names_constant(state))
        if inputs:
            call.keywords.append(gast.keyword("inputs", initial_values(inputs, defined, alias)))
        return [true_fn, false_fn, result_assignment(state, call, node)]

    def _has_returned(self, statements) -> bool:
        """Does this block always end in a lowered ``return`` (``do_return = True``)?  Then
        only the exit variables (the result, the flags) are live after it."""
        flag = self.context.return_flag
        for statement in statements:
            if isinstance(statement, gast.Assign) and _assigns_true(statement, flag):
                return True
            if isinstance(statement, gast.If) and statement.orelse and \
                    self._has_returned(statement.body) and self._has_returned(statement.orelse):
                return True
        return False

    def _is_return_guard(self, node) -> bool:
        """``if psc.not_(do_return): <rest>`` (ReturnStatements): its else has returned."""
        test, flag = node.test, self.context.return_flag
        return flag is not None and not node.orelse and isinstance(test, gast.Call) and \
            isinstance(test.func, gast.Attribute) and test.func.attr == "not_" and \
            len(test.args) == 1 and isinstance(test.args[0], gast.Name) and \
            test.args[0].id == flag


def _assigns_true(statement, name) -> bool:
    return name is not None and len(statement.targets) == 1 and \
        isinstance(statement.targets[0], gast.Name) and statement.targets[0].id == name and \
        isinstance(statement.value, gast.Constant) and statement.value.value is True
