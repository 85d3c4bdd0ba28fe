"""Walking gast trees fast: `walk`, and the `NodeVisitor` / `NodeTransformer` bases.

The analyses walk whole statements many times (names read and written per statement,
per fixpoint round), and every analysis and rule is a visitor over the whole function, so
the cost of one step from a node to its children is paid a few times per node of the
user's code on every transpile.  `ast.walk` pays for two generator layers per node
(`iter_child_nodes` over `iter_fields`) and a deque; `walk` reads ``_fields`` directly with
one stack.  It visits the same nodes, depth first instead of breadth first: use it where
the order of the nodes does not matter.

`NodeVisitor` and `NodeTransformer` behave exactly as `ast`'s (same dispatch on
``visit_<ClassName>``, same traversal order, same handling of lists, ``None`` and lists
returned by a transformer), minus their per-node costs: the method for a node class is
looked up once per visitor class (not by building its name and a `getattr` per node), and
children are read from ``_fields`` without `iter_fields`' generator.
"""
from __future__ import annotations

import ast
from typing import Iterator

_AST = ast.AST


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and all nodes below it, in no particular order."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, _AST):
                stack.append(value)
            elif isinstance(value, list):
                # lists of nodes, but `global`/`nonlocal` list names (strings)
                stack.extend(item for item in value if isinstance(item, _AST))


class _Dispatch:
    """``visit`` through a per-class table: node class -> ``visit_<ClassName>`` or None."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._methods = {}   # each visitor class its own: subclasses override methods

    _methods: dict = {}

    def visit(self, node):
        node_class = node.__class__
        try:
            method = self._methods[node_class]
        except KeyError:
            method = self._methods[node_class] = getattr(
                type(self), "visit_" + node_class.__name__, None)
        if method is None:
            return self.generic_visit(node)
        return method(self, node)


class NodeVisitor(_Dispatch, ast.NodeVisitor):
    """`ast.NodeVisitor`, faster (see the module's docstring)."""

    def generic_visit(self, node):
        visit = self.visit
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, _AST):
                        visit(item)
            elif isinstance(value, _AST):
                visit(value)


class NodeTransformer(_Dispatch, ast.NodeTransformer):
    """`ast.NodeTransformer`, faster (see the module's docstring)."""

    def generic_visit(self, node):
        visit = self.visit
        for field in node._fields:
            try:
                old_value = getattr(node, field)
            except AttributeError:
                continue
            if isinstance(old_value, list):
                if not old_value:
                    continue
                new_values = []
                for value in old_value:
                    if isinstance(value, _AST):
                        value = visit(value)
                        if value is None:
                            continue
                        if not isinstance(value, _AST):
                            new_values.extend(value)
                            continue
                    new_values.append(value)
                old_value[:] = new_values
            elif isinstance(old_value, _AST):
                new_node = visit(old_value)
                if new_node is None:
                    delattr(node, field)
                elif new_node is not old_value:
                    setattr(node, field, new_node)
        return node
