"""Staged ``while`` and ``for`` loops become `while_stmt` / `for_stmt` over body functions.

The carried state is every variable the body assigns that is live at the loop's head or
after it (liveness), passed explicitly as a tuple; the body function returns it updated.
Loops over static containers, ``static_range`` loops and loops with static tests and
static state stay Python (they unroll when the program is built) -- unless a ``break`` or
``return`` under a traced ``if`` was lowered into a flag: then the loop becomes
``for_stmt(..., stop=flag, unroll=True)``, which still unrolls but builds each iteration
after the flag turns traced under it (`runtime.control_flow.for_stmt`).

>>> from transpiler.doctest_helpers import demo
>>> print(demo(Loops, '''
... def halve(x, n):
...     i = 0
...     while np.abs(x).max() > 1.0:
...         x = x * 0.5
...         i = i + 1
...     total = 0.0
...     for k in range(n):
...         total = total + x[k]
...     return x, i, total
... '''))
def halve(x, n):
    i = 0
<BLANKLINE>
    def while_test_L3(i, x):
        return np.abs(x).max() > 1.0
<BLANKLINE>
    def while_body_L3(i, x):
        x = x * 0.5
        i = i + 1
        return (i, x)
    i, x = psc.while_stmt(while_test_L3, while_body_L3, (i, x), ('i', 'x'))
    total = 0.0
<BLANKLINE>
    def for_body_L7(k, total):
        total = total + x[k]
        return (total,)
    total, = psc.for_stmt(psc.range_(n), for_body_L7, (total,), ('total',))
    return (x, i, total)
"""
from __future__ import annotations

import gast

from ..anno import Anno, getanno
from ..analysis.liveness import assigned_variables, bindings_in, writes
from .base import Rule, load, runtime_call, with_origin
from .control_flow_functions import (FunctionNames, body_function, initial_values,
                                     names_constant, reject_container_mutation,
                                     result_assignment)
from .decisions import carried, is_staged_for, is_staged_while, range_call


class Loops(Rule):

    rewrites = frozenset({gast.For, gast.While})
    reads_liveness = True   # what a staged construct carries
    # body functions, their calls and the state tuples (`control_flow_functions`)
    writes = frozenset({gast.FunctionDef, gast.arguments, gast.Name, gast.Param, gast.Load,
                        gast.Store, gast.Return, gast.Tuple, gast.Assign, gast.Expr,
                        gast.Call, gast.Attribute, gast.Constant, gast.keyword, gast.Pass})

    def __init__(self, context):
        super().__init__(context)
        self.names = FunctionNames()

    def visit_While(self, node):
        self.generic_visit(node)
        if not is_staged_while(node):
            return node
        calls = []
        body_bindings = bindings_in(node.body, calls)
        reject_container_mutation(node.body, self.context.source, "while loop",
                                  body_bindings[0], calls)
        alias = self.context.runtime_alias
        state = carried(node, assigned_variables(node, body_bindings))
        defined = getanno(node, Anno.DEFINED_IN, frozenset())
        test = body_function(self.names("while_test", node), state,
                             [with_origin(gast.Return(node.test), node)], None, node)
        body = body_function(self.names("while_body", node), state, node.body, state, node)
        call = runtime_call(alias, "while_stmt", load(test.name), load(body.name),
                            initial_values(state, defined, alias), names_constant(state))
        return [test, body, result_assignment(state, call, node), *node.orelse]

    def visit_For(self, node):
        self.generic_visit(node)
        stop = getanno(node, Anno.STOP_FLAG)
        # what the body binds, found once: the body does not change below
        calls = []
        body_bindings = bindings_in(node.body, calls)
        self._body_assigned = body_bindings[0]
        state = carried(node, assigned_variables(node, body_bindings))
        staged = is_staged_for(node, self.function, state)
        if not staged and stop is None:
            return node
        if staged and range_call(node.iter) == "range":
            # staged for sure (other iterables may unroll)
            reject_container_mutation(node.body, self.context.source, "for loop",
                                      self._body_assigned, calls)
        if not staged:   # unrolled, but the iterations after a traced exit are conditional
            reject_container_mutation(node.body, self.context.source,
                                      "for loop (the iterations after a traced break or "
                                      "return run conditionally)", self._body_assigned,
                                      calls)
        alias = self.context.runtime_alias
        if self._unpacks_target(node):
            # the body binds the target itself: names of it used after the loop are state
            state = sorted(set(state) | (writes(node.target) &
                                         getanno(node, Anno.LIVE_OUT, frozenset())))
        if stop is not None and stop not in state:
            state = sorted(state + [stop])
        defined = getanno(node, Anno.DEFINED_IN, frozenset())
        target, unpack = self._target(node)
        body = body_function(self.names("for_body", node), [target] + state,
                             unpack + node.body, state, node)
        iterable = node.iter
        if range_call(iterable) == "range":
            iterable = runtime_call(alias, "range_", *iterable.args)
        args = [iterable, load(body.name), initial_values(state, defined, alias),
                names_constant(state)]
        results = list(state)
        if not self._unpacks_target(node) and node.target.id in getanno(
                node, Anno.LIVE_OUT, frozenset()):
            args.append(initial_values([node.target.id], defined, alias).elts[0])
            results = [node.target.id] + results
        call = runtime_call(alias, "for_stmt", *args)
        if stop is not None:
            call.keywords.append(gast.keyword("stop", gast.Constant(stop, None)))
        if not staged:
            # A loop that unrolls as Python but breaks under a traced condition (a lowered
            # `break` or `return`): only `for_stmt` can skip the iterations after that
            # exit, so it is converted, and told to unroll (`static_range` stays static).
            call.keywords.append(gast.keyword("unroll", gast.Constant(True, None)))
        return [body, result_assignment(results, call, node), *node.orelse]

    def _unpacks_target(self, node) -> bool:
        """Whether the body function binds the loop target from a parameter ``target_``:
        for a tuple target, and for a name the body assigns again (after the loop it
        holds the body's value, not the element: it is state, not the loop variable)."""
        return not isinstance(node.target, gast.Name) or \
            node.target.id in self._body_assigned

    def _target(self, node):
        if not self._unpacks_target(node):
            return node.target.id, []
        unpack = with_origin(gast.Assign([node.target], load("target_"), None), node)
        return "target_", [unpack]
