"""Subscript assignment becomes a functional update of the variable.

NumPy writes into the array; a PSC function cannot mutate, so the variable is rebound to a
new array with the element replaced (augmented forms combine as NumPy's ``x[i] op= v``).
`runtime.setitem` is NumPy's assignment for static arrays and lists, and the indexing rule
for traced ones.

>>> from transpiler.doctest_helpers import demo
>>> print(demo(SubscriptAssignment, '''
... def f(x, v):
...     y = np.zeros(3)
...     y[0] = v
...     y[1:] += 2 * v
...     m = np.eye(3)
...     m[0][1] = v
...     m[1, 1] = m[2, 2] = 2 * v
...     return y, m
... '''))
def f(x, v):
    y = np.zeros(3)
    y = psc.setitem(y, 0, v)
    y = psc.setitem(y, slice(1, None, None), 2 * v, 'add')
    m = np.eye(3)
    m = psc.setitem(m, 0, psc.setitem(m[0], 1, v))
    chained_value = 2 * v
    m = psc.setitem(m, (1, 1), chained_value)
    m = psc.setitem(m, (2, 2), chained_value)
    return (y, m)
"""
from __future__ import annotations

import gast

from runtime.errors import PSCSyntaxError

from .base import Rule, load, runtime_call, with_origin
from .flags import fresh_name

_MODES = {gast.Add: "add", gast.Sub: "sub", gast.Mult: "mul", gast.Div: "truediv",
          gast.FloorDiv: "floordiv", gast.Mod: "mod", gast.Pow: "pow", gast.BitAnd: "and",
          gast.BitOr: "or", gast.BitXor: "xor", gast.LShift: "lshift",
          gast.RShift: "rshift"}


def _index_expression(node):
    """A subscript's index as an expression (``1:`` becomes ``slice(1, None, None)``)."""
    if isinstance(node, gast.Slice):
        parts = [p if p is not None else gast.Constant(None, None)
                 for p in (node.lower, node.upper, node.step)]
        return gast.Call(gast.Name("slice", gast.Load(), None, None), parts, [])
    if isinstance(node, gast.Tuple):
        return gast.Tuple([_index_expression(e) for e in node.elts], gast.Load())
    return node


def _load(node):
    """A copy of a store target usable as an expression."""
    if isinstance(node, gast.Name):
        return gast.Name(node.id, gast.Load(), None, None)
    if isinstance(node, gast.Subscript):
        return gast.Subscript(_load(node.value), node.slice, gast.Load())
    return node


def _unpacks_into_elements(target) -> bool:
    """A tuple or list target with an element assignment in it (``a[0], b[0] = v``)."""
    if not isinstance(target, (gast.Tuple, gast.List)):
        return False
    return any(isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store)
               for n in gast.walk(target))


def _as_list(statements):
    return statements if isinstance(statements, list) else [statements]


class SubscriptAssignment(Rule):
    """``x[i] = v`` -> ``x = psc.setitem(x, i, v)``; ``x[i] += v`` adds a mode."""

    # only assignments whose target is an element (a Subscript)
    rewrites = frozenset({gast.Subscript})

    def _update(self, target: gast.Subscript, value, mode: str | None):
        args = [_load(target.value), _index_expression(target.slice), value]
        if mode is not None:
            args.append(gast.Constant(mode, None))
        updated = runtime_call(self.context.runtime_alias, "setitem", *args)
        if isinstance(target.value, gast.Subscript):      # x[i][j] = v: update x[i] first
            return self._update(target.value, updated, None)
        if not isinstance(target.value, gast.Name):
            raise PSCSyntaxError("only variables (and their elements) can be assigned to",
                                 self.context.source.location(target),
                                 "assign the expression to a variable first")
        return gast.Name(target.value.id, gast.Store(), None, None), updated

    def visit_Assign(self, node):
        if len(node.targets) == 1 and _unpacks_into_elements(node.targets[0]):
            return self._unpacked(node)
        if not any(isinstance(t, gast.Subscript) for t in node.targets):
            return node
        if len(node.targets) != 1:
            return self._chained(node)
        target, value = self._update(node.targets[0], node.value, None)
        return with_origin(gast.Assign([target], value, None), node)

    def _chained(self, node):
        """``a[i] = b[j] = v``: ``v`` once (into a fresh variable unless it is a name or a
        constant), then each target from left to right, as Python assigns them."""
        statements, value = [], node.value
        if not isinstance(value, (gast.Name, gast.Constant)):
            name = fresh_name("chained_value", self.function)
            statements.append(with_origin(
                gast.Assign([gast.Name(name, gast.Store(), None, None)], value, None), node))
            value = load(name)
        for target in node.targets:
            if isinstance(target, gast.Subscript):
                store, updated = self._update(target, _load(value), None)
                statements.append(with_origin(gast.Assign([store], updated, None), node))
            else:
                statements.append(with_origin(gast.Assign([target], _load(value), None), node))
        return statements

    def _unpacked(self, node, prefix: str = "unpacked"):
        """``a[0], b[0] = v``: unpack ``v`` into fresh variables, then assign each target
        from left to right, as Python does (so ``i, x[i] = v`` indexes with the new ``i``).
        A nested target unpacks its variable likewise (names ``prefix_k_j``)."""
        target = node.targets[0]
        temporaries, statements = [], []
        for k, element in enumerate(target.elts):
            name = fresh_name(f"{prefix}_{k}", self.function)
            starred = isinstance(element, gast.Starred)
            store = gast.Name(name, gast.Store(), None, None)
            temporaries.append(gast.Starred(store, gast.Store()) if starred else store)
            inner = with_origin(gast.Assign([element.value if starred else element],
                                            load(name), None), node)
            if _unpacks_into_elements(inner.targets[0]):
                statements.extend(self._unpacked(inner, name))
            else:
                statements.extend(_as_list(self.visit_Assign(inner)))
        unpack = gast.Assign([type(target)(temporaries, gast.Store())], node.value, None)
        return [with_origin(unpack, node)] + statements

    def visit_AugAssign(self, node):
        if not isinstance(node.target, gast.Subscript):
            return node
        target, value = self._update(node.target, node.value, _MODES[type(node.op)])
        return with_origin(gast.Assign([target], value, None), node)
