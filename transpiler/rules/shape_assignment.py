"""``x.shape = n`` on a local array becomes ``x = psc.inplace_shape(x, n)``.

NumPy's shape assignment reshapes the array object in place.  A traced array cannot change,
so the variable is rebound to the reshaped array (`runtime.inplace_shape`; a static array
is reshaped in place by NumPy itself, which raises when its data would need a copy).  The
subset check (`transpiler.checks`) allows it only on a variable of the function's own that
no other name may alias (``y = x`` would see the new shape in NumPy, not here); other
attribute assignments, and ``.shape`` on arguments and globals, stay errors there.  A chain
``a.shape = b.shape = n`` evaluates ``n`` once, into a fresh variable, and assigns the
targets left to right as Python does.

>>> from transpiler.doctest_helpers import demo
>>> print(demo(ShapeAssignment, '''
... def f(n):
...     a, b = np.mgrid[0:n, 0:3]
...     c = a + b
...     c.shape = n * 3
...     a.shape = b.shape = (3, n)
...     return a, b, c
... ''', static_argnames=("n",)))
def f(n):
    a, b = np.mgrid[0:n, 0:3]
    c = a + b
    c = psc.inplace_shape(c, n * 3)
    shape_L5 = (3, n)
    a = psc.inplace_shape(a, shape_L5)
    b = psc.inplace_shape(b, shape_L5)
    return (a, b, c)
"""
from __future__ import annotations

import gast

from ..analysis.binding_time import is_shape_target
from .base import AttributeStore, Rule, load, runtime_call, with_origin
from .flags import fresh_name


class ShapeAssignment(Rule):
    """``x.shape = n`` -> ``x = psc.inplace_shape(x, n)``."""

    rewrites = frozenset({AttributeStore})

    def visit_Assign(self, node):
        if not any(is_shape_target(t) for t in node.targets):
            return node
        statements, value = [], lambda: node.value   # noqa: E731
        if len(node.targets) > 1:
            name = fresh_name(f"shape_L{node.lineno}", self.function)
            statements.append(self._assign(gast.Name(name, gast.Store(), None, None),
                                           node.value, node))
            value = lambda: load(name)   # noqa: E731  (a node of its own per use)
        for target in node.targets:
            if is_shape_target(target):
                variable = target.value.id
                call = runtime_call(self.context.runtime_alias, "inplace_shape",
                                    load(variable), value())
                statements.append(self._assign(gast.Name(variable, gast.Store(), None, None),
                                               call, node))
            else:
                statements.append(self._assign(target, value(), node))
        return statements

    @staticmethod
    def _assign(target, value, origin):
        return with_origin(gast.Assign([target], value, None), origin)
