"""A function that updates its array arguments in place gives their final values back.

NumPy's ``u[1:-1] = ...``, ``data -= mean`` or ``x.sort()`` on a parameter write into the
caller's array.  The rules before this one made those updates functional (the parameter is
rebound to the updated array); `transpiler.checks` recorded which traced parameters are
updated while still bound to the argument (`Anno.ARGUMENT_UPDATES`).  This rule makes
every exit of the function say so: ``return value`` becomes ``return
psc.with_argument_updates(value, {'u': u})``, and a function that can end without a
``return`` gets one.  The caller's wrapper (`runtime.argument_updates.write_back`) copies
the final values into the caller's arrays; an inlined helper's caller rebinds the names it
passed (`rules.helper_updates`).  Parameters updated only by augmented assignment go in
``augmented=``: for a scalar argument, Python's ``n += 1`` rebinds ``n`` and the caller
keeps its value.

>>> from transpiler.doctest_helpers import demo
>>> print(demo(ArgumentWriteBack, '''
... def step(u, n, scale):
...     u[1:-1] = 0.5 * (u[:-2] + u[2:])
...     n += 1
...     if scale > 1.0:
...         return u.sum()
...     u *= scale
... ''', checked=True))
def step(u, n, scale):
    u[1:-1] = 0.5 * (u[:-2] + u[2:])
    n += 1
    if scale > 1.0:
        return psc.with_argument_updates(u.sum(), {'u': u}, augmented={'n': n})
    u *= scale
    return psc.with_argument_updates(None, {'u': u}, augmented={'n': n})
"""
from __future__ import annotations

import gast

from ..anno import Anno, getanno
from .base import Rule, load, runtime_call, with_origin


def _names_dict(names) -> gast.Dict:
    return gast.Dict([gast.Constant(name, None) for name in names],
                     [load(name) for name in names])


class ArgumentWriteBack(Rule):
    """``return v`` -> ``return psc.with_argument_updates(v, {'u': u})`` in a function
    that updates its parameter ``u`` in place."""

    # an update is an element assignment, an augmented one, or a call (sort, a helper)
    rewrites = frozenset({gast.Subscript, gast.AugAssign, gast.Call})

    @staticmethod
    def has_work(function) -> bool:
        return bool(getanno(function, Anno.ARGUMENT_UPDATES))

    def visit_FunctionDef(self, node):
        updated = getanno(node, Anno.ARGUMENT_UPDATES) or {}
        if not updated:
            return node
        self.full = [name for name, augmented in updated.items() if not augmented]
        self.augmented = [name for name, augmented in updated.items() if augmented]
        # after a lowered `return`, the branches must still give back the updated values
        self.context.exit_variables |= set(updated)
        node.body = [self.visit(statement) for statement in node.body]
        if not isinstance(node.body[-1], gast.Return):
            ending = gast.Return(self._wrapped(gast.Constant(None, None)))
            node.body.append(with_origin(ending, node.body[-1]))
        return node

    def _wrapped(self, value):
        keywords = []
        if self.augmented:
            keywords.append(gast.keyword("augmented", _names_dict(self.augmented)))
        return runtime_call(self.context.runtime_alias, "with_argument_updates", value,
                            _names_dict(self.full), keywords=keywords)

    def visit_Return(self, node):
        value = node.value if node.value is not None else gast.Constant(None, None)
        return with_origin(gast.Return(self._wrapped(value)), node)

    def visit_Lambda(self, node):
        return node   # a nested function's returns are its own

    def visit_nested(self, node):
        return node

    visit_AsyncFunctionDef = visit_nested

    def generic_visit(self, node):
        for field, old in gast.iter_fields(node):
            if isinstance(old, list):
                new = []
                for item in old:
                    if isinstance(item, gast.FunctionDef):
                        new.append(item)   # a nested def: not this function's exits
                    elif isinstance(item, gast.AST):
                        new.append(self.visit(item))
                    else:
                        new.append(item)
                old[:] = new
            elif isinstance(old, gast.AST):
                setattr(node, field, self.visit(old))
        return node
