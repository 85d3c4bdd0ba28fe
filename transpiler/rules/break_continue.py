"""``break`` and ``continue`` in staged loops become flags (as AutoGraph does).

A staged loop's body is a function, where ``break`` cannot appear; and a ``break`` under a
traced ``if`` cannot stop a Python loop.  So the exit sets a flag, what follows it runs
only while the flag is unset, and the loop's test (or `for_stmt`'s ``stop``) checks it.
Loops that stay Python and exit under static conditions keep their ``break``.

>>> from transpiler.doctest_helpers import demo
>>> print(demo(BreakContinue, '''
... def first_negative(x):
...     i = 0
...     while i < x.shape[0]:
...         if x[i] < 0:
...             break
...         i = i + 1
...     return i
... '''))
def first_negative(x):
    i = 0
    break_L3 = False
    while psc.and_(i < x.shape[0], lambda: psc.not_(break_L3)):
        if x[i] < 0:
            break_L3 = True
        if psc.not_(break_L3):
            i = i + 1
    return i
"""
from __future__ import annotations

import gast

from ..anno import Anno, getanno, setanno
from .base import Rule, load, runtime_call
from .decisions import is_staged_if, is_staged_loop
from .flags import assign, fresh_name, guarded, lower_exits


def _own_exits(loop, kind) -> list:
    """``kind`` statements of this loop (not of loops or functions nested in it), each
    with whether a staged ``if`` encloses it."""
    found = []

    def walk(statements, under_staged_if):
        for node in statements:
            if isinstance(node, kind):
                found.append(under_staged_if)
            elif isinstance(node, gast.If):
                staged = under_staged_if or is_staged_if(node)
                walk(node.body, staged)
                walk(node.orelse, staged)
    walk(loop.body, False)
    return found


class BreakContinue(Rule):
    """Lowers ``continue`` then ``break`` of every loop that needs it, innermost first."""

    rewrites = frozenset({gast.Break, gast.Continue})

    def _lowers_exits(self, loop) -> bool:
        """Does this loop's ``break``/``continue`` need flags?  When one exit does, all do:
        a lowered exit makes the loop a body function (a ``break`` flag is `for_stmt`'s
        ``stop``; a flag set under a traced ``if`` is traced state that stages the loop),
        where a ``break`` or ``continue`` left as Python would not compile.  A lowered
        ``return`` inside makes the loop carry the result, which may be traced: the same."""
        exits = _own_exits(loop, gast.Break) + _own_exits(loop, gast.Continue)
        return bool(exits) and (any(exits) or is_staged_loop(loop, self.function) or
                                getanno(loop, Anno.RETURNS_INSIDE, False))

    def _loop(self, node):
        self.generic_visit(node)
        alias = self.context.runtime_alias
        line = getattr(getanno(node, Anno.ORIGIN), "line", node.lineno)
        before = []
        if not self._lowers_exits(node):
            return node
        if _own_exits(node, gast.Continue):
            flag = fresh_name(f"continue_L{line}", self.function)
            self.context.exit_variables.add(flag)
            body, _ = lower_exits(node.body, lambda s: isinstance(s, gast.Continue),
                                  lambda s, _: [assign(flag, gast.Constant(True, None), s)],
                                  flag, alias)
            node.body = [assign(flag, gast.Constant(False, None), node)] + body
        if _own_exits(node, gast.Break):
            flag = fresh_name(f"break_L{line}", self.function)
            self.context.exit_variables.add(flag)
            node.body, _ = lower_exits(node.body, lambda s: isinstance(s, gast.Break),
                                       lambda s, _: [assign(flag, gast.Constant(True, None), s)],
                                       flag, alias)
            before.append(assign(flag, gast.Constant(False, None), node))
            if isinstance(node, gast.While):
                still = gast.Lambda(_no_arguments(), runtime_call(alias, "not_", load(flag)))
                node.test = runtime_call(alias, "and_", node.test, still)
            else:
                setanno(node, Anno.STOP_FLAG, flag)
            if node.orelse:   # `else:` runs only when the loop did not break
                after = guarded(alias, flag, node.orelse)
                node.orelse = []
                return before + [node, after]
        return before + [node] if before else node

    visit_While = visit_For = _loop


def _no_arguments() -> gast.arguments:
    return gast.arguments([], [], None, [], [], None, [])
