"""Early ``return`` inside staged code becomes a flag and a result variable.

A staged branch or loop body is a function of its carried variables, so a ``return``
inside it cannot leave the PSC function.  Instead it records the result and sets a flag;
what follows runs only while the flag is unset; a loop it sits in stops (through a
``break``, lowered next); the function ends with one ``return``.  Functions whose returns
are all outside loops and traced branches are left alone (the exit analysis).

>>> from transpiler.doctest_helpers import demo
>>> print(demo(ReturnStatements, '''
... def clip_sum(x, limit):
...     total = 0.0
...     for v in x:
...         if total > limit:
...             return limit
...         total = total + v
...     return total
... '''))
def clip_sum(x, limit):
    do_return = False
    retval = psc.UNDEFINED
    total = 0.0
    for v in x:
        if total > limit:
            retval = limit
            do_return = True
            break
        total = total + v
    if psc.not_(do_return):
        retval = total
        do_return = True
    return retval
"""
from __future__ import annotations

import gast

from .base import Rule, load, runtime_attribute, with_origin
from .decisions import is_staged_if
from .flags import assign, fresh_name, lower_exits


def _needs_lowering(function) -> bool:
    """Is a ``return`` inside a loop or a staged ``if`` (of this function, not nested)?"""
    def walk(statements, inside):
        for node in statements:
            if isinstance(node, gast.Return) and inside:
                return True
            if isinstance(node, (gast.For, gast.While)):
                if walk(node.body, True) or walk(node.orelse, inside):
                    return True
            elif isinstance(node, gast.If):
                staged = inside or is_staged_if(node)
                if walk(node.body, staged) or walk(node.orelse, staged):
                    return True
        return False
    return walk(function.body, False)


class ReturnStatements(Rule):
    """Lowers the returns of the top-level function when the exit analysis requires it."""

    # a return is lowered only inside a loop or a staged `if`
    rewrites = frozenset({gast.For, gast.While, gast.If})
    tracks_rewrites = True

    def visit_FunctionDef(self, node):
        if not _needs_lowering(node):
            return node
        self.rewrote_something()
        alias = self.context.runtime_alias
        self.flag = fresh_name("do_return", node)
        self.value = fresh_name("retval", node)
        self.context.return_flag = self.flag
        self.context.exit_variables |= {self.flag, self.value}
        body, _ = lower_exits(node.body, lambda s: isinstance(s, gast.Return), self._return,
                              self.flag, alias, through_loops=True)
        prologue = [assign(self.flag, gast.Constant(False, None), node.body[0]),
                    assign(self.value, runtime_attribute(alias, "UNDEFINED"), node.body[0])]
        ending = with_origin(gast.Return(load(self.value)), node.body[-1])
        node.body = prologue + body + [ending]
        return node

    def _return(self, statement, in_loop):
        value = statement.value if statement.value is not None else gast.Constant(None, None)
        lowered = [assign(self.value, value, statement),
                   assign(self.flag, gast.Constant(True, None), statement)]
        if in_loop:
            lowered.append(with_origin(gast.Break(), statement))
        return lowered
