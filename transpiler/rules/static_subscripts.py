"""Reading a static container at a computed index goes through `runtime.getitem`.

``OBSERVATIONS[t]`` indexes a NumPy constant; inside a staged loop ``t`` is traced, and
NumPy itself cannot take a traced index.  `runtime.getitem` indexes as Python does when the
index is static, and otherwise lifts the container to a constant array and gathers.
A variable that some assignment makes static counts as static here (``OBS`` below is
traced for the analysis only because a traced ``if`` may rebind it).  Subscripts of traced
arrays, and indices that are literals, stay as written.

>>> from transpiler.doctest_helpers import demo
>>> print(demo(StaticSubscripts, '''
... def f(x, t):
...     OBS = np.arange(5)
...     if x[t] > 0:
...         OBS = OBS * x[0]
...     return x[t] + OBS[t] + OBS[2] + x.shape[0]
... '''))
def f(x, t):
    OBS = np.arange(5)
    if x[t] > 0:
        OBS = OBS * x[0]
    return x[t] + psc.getitem(OBS, t) + OBS[2] + x.shape[0]
"""
from __future__ import annotations

import gast

from ..anno import Anno, BindingTime, getanno
from .base import Rule, runtime_call
from .subscript_assignment import _index_expression


def _literal(index) -> bool:
    """An index made of constants and slices of constants only."""
    return all(isinstance(n, (gast.Constant, gast.Slice, gast.Tuple, gast.UnaryOp,
                              gast.USub, gast.UAdd, gast.Load))
               for n in gast.walk(index))


class StaticSubscripts(Rule):
    """``static[i]`` -> ``psc.getitem(static, i)`` when ``i`` is not a literal."""

    rewrites = frozenset({gast.Subscript})

    def _may_be_static(self, container) -> bool:
        """Static, or a variable that some assignment makes static (``t = np.full(4, .5)``
        then ``t = t * 2`` under a traced ``if``: traced for the analysis, yet a NumPy
        array when the ``if``'s test indexes it)."""
        if getanno(container, Anno.BINDING_TIME) is BindingTime.STATIC:
            return True
        return isinstance(container, gast.Name) and container.id in getanno(
            self.function, Anno.STATIC_BOUND, frozenset())

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if not isinstance(node.ctx, gast.Load) or _literal(node.slice):
            return node
        if not self._may_be_static(node.value):
            return node
        if isinstance(node.value, gast.Attribute) and node.value.attr in ("shape",
                                                                          "strides"):
            return node   # x.shape[i]: a tuple of ints, indexed as Python
        return runtime_call(self.context.runtime_alias, "getitem", node.value,
                            _index_expression(node.slice))
