"""Early ``return`` inside staged code becomes a flag and a result variable.

A staged branch or loop body is a function of its carried variables, so a ``return``
inside it cannot leave the PSC function.  Instead it records the result and sets a flag;
what follows runs only while the flag is unset; a loop it sits in stops (through a
``break``, lowered next); the function ends with one ``return``.  Functions whose returns
are all outside loops and traced branches are left alone (the exit analysis).

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

from ..anno import Anno, setanno
from .base import Rule, demo  # noqa: F401  (demo: used by the doctest)
from .decisions import is_staged_if
from .flags import assign, fresh_name, guarded, load, with_origin


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

    def visit_FunctionDef(self, node):
        if not _needs_lowering(node):
            return node
        alias = self.context.runtime_alias
        self.flag = fresh_name("do_return", node)
        self.value = fresh_name("retval", node)
        self.context.return_flag = self.flag
        self.context.exit_variables |= {self.flag, self.value}
        body, _ = self._block(node.body, in_loop=False)
        prologue = [assign(self.flag, gast.Constant(False, None), node.body[0]),
                    assign(self.value, gast.Attribute(load(alias), "UNDEFINED", gast.Load()),
                           node.body[0])]
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

    def _block(self, statements, in_loop):
        new = []
        for index, statement in enumerate(statements):
            if isinstance(statement, gast.Return):
                return new + self._return(statement, in_loop), True
            returns = False
            if isinstance(statement, gast.If):
                statement.body, in_body = self._block(statement.body, in_loop)
                statement.orelse, in_else = self._block(statement.orelse, in_loop)
                returns = in_body or in_else
            elif isinstance(statement, (gast.For, gast.While)):
                statement.body, returns = self._block(statement.body, True)
                if returns:   # BreakContinue: the loop may stage, carrying the result
                    setanno(statement, Anno.RETURNS_INSIDE, True)
                statement.orelse, in_else = self._block(statement.orelse, in_loop)
                returns = returns or in_else
            new.append(statement)
            if returns and in_loop and isinstance(statement, (gast.For, gast.While)):
                # a return in an inner loop also ends this loop
                new.append(with_origin(gast.If(load(self.flag), [gast.Break()], []),
                                       statement))
            if returns:
                rest, _ = self._block(statements[index + 1:], in_loop)
                if rest and in_loop:
                    new.extend(rest)   # the `break` just written guards them
                elif rest:
                    new.append(guarded(self.context.runtime_alias, self.flag, rest))
                return new, True
        return new, False
