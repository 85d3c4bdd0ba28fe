"""In-place array methods on a local variable become a functional update of it.

``x.sort()`` and ``x.fill(v)`` write into ``x``; a traced array cannot be written into, so
the variable is rebound to the updated array (`runtime.inplace_sort` is ``np.sort`` along
the method's axis, `runtime.inplace_fill` ``np.full_like`` keeping ``x``'s dtype).  When
nothing is traced they call the method itself, so a static array or list is updated in
place as in Python.  On an argument or a global, the subset check has refused them already
(`transpiler.checks`): there the update would have to reach the caller.

>>> from transpiler.doctest_helpers import demo
>>> print(demo(InPlaceMethods, '''
... def f(x, v):
...     y = x * 2.0
...     y.sort(axis=0)
...     z = np.zeros(3, np.int32)
...     z.fill(v)
...     return y, z, np.sort(x)
... '''))
def f(x, v):
    y = x * 2.0
    y = psc.inplace_sort(y, axis=0)
    z = np.zeros(3, np.int32)
    z = psc.inplace_fill(z, v)
    return (y, z, np.sort(x))
"""
from __future__ import annotations

import gast

from ..analysis.binding_time import (inplace_function_target, is_inplace_function_call,
                                     is_inplace_method_call)
from ..analysis.resolve import resolution_of
from .base import Rule, load, runtime_call, with_origin


class InPlaceMethods(Rule):
    """``x.sort(...)`` -> ``x = psc.inplace_sort(x, ...)``; ``fill`` likewise;
    ``np.put(x, ...)`` -> ``x = psc.inplace_numpy("numpy.put", x, ...)``."""

    rewrites = frozenset({gast.Expr})   # only calls whose result is unused

    def visit_Expr(self, node):
        call = node.value
        if is_inplace_function_call(call):
            name = inplace_function_target(call).id
            qualname = gast.Constant(resolution_of(call.func).qualname, None)
            helper = runtime_call(self.context.runtime_alias, "inplace_numpy", qualname,
                                  *call.args, keywords=call.keywords)
        elif is_inplace_method_call(call):
            name = call.func.value.id
            helper = runtime_call(self.context.runtime_alias, f"inplace_{call.func.attr}",
                                  load(name), *call.args, keywords=call.keywords)
        else:
            return node
        assignment = gast.Assign([gast.Name(name, gast.Store(), None, None)], helper, None)
        return with_origin(assignment, node)
