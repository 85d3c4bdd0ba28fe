"""Traced ``and``/``or``/``not``, ``a if c else b`` and chained comparisons.

Python's operators ask for a truth value, which a traced array only has when the program
runs; the runtime functions keep Python's meaning (short-circuit on a static left side,
NumPy's ambiguity error for arrays of more than one element) and select on traced ones.

>>> from transpiler.doctest_helpers import demo
>>> print(demo(LogicalExpressions, '''
... def f(x, y):
...     ok = x > 0 and not y < 1
...     z = x if ok else -x
...     return 0 < x < y
... '''))
def f(x, y):
    ok = psc.and_(x > 0, lambda: psc.not_(y < 1))
    z = psc.ifexp(ok, lambda: x, lambda: -x)
    return psc.and_(0 < x, lambda: x < y)
"""
from __future__ import annotations

import gast

from ..anno import Anno, BindingTime, getanno
from .base import Rule, runtime_call


def _traced(*nodes) -> bool:
    return any(getanno(n, Anno.BINDING_TIME, BindingTime.TRACED) is BindingTime.TRACED
               for n in nodes)


def _thunk(expression) -> gast.Lambda:
    return gast.Lambda(gast.arguments([], [], None, [], [], None, []), expression)


class LogicalExpressions(Rule):
    """Rewrites the four forms when an operand is traced."""

    rewrites = frozenset({gast.BoolOp, gast.UnaryOp, gast.IfExp, gast.Compare})

    def _call(self, attr, *args):
        return runtime_call(self.context.runtime_alias, attr, *args)

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        if not _traced(*node.values):
            return node
        attr = "and_" if isinstance(node.op, gast.And) else "or_"
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = self._call(attr, value, _thunk(result))
        return result

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, gast.Not) and _traced(node.operand):
            return self._call("not_", node.operand)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if not _traced(node.test):
            return node
        return self._call("ifexp", node.test, _thunk(node.body), _thunk(node.orelse))

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) == 1 or not _traced(node.left, *node.comparators):
            return node
        operands = [node.left, *node.comparators]
        pairs = [gast.Compare(left, [op], [right])
                 for left, op, right in zip(operands, node.ops, operands[1:])]
        result = pairs[-1]
        for pair in reversed(pairs[:-1]):
            result = self._call("and_", pair, _thunk(result))
        return result
