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

import gast

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


# Nodes without fields or positions (``Load``, ``Add``...: one per name and operator, a
# third of a function's nodes): visiting one does nothing unless the visitor has a method
# for it or its own ``generic_visit``.
_FIELDLESS = tuple(cls for cls in vars(gast).values() if isinstance(cls, type) and
                   issubclass(cls, (gast.expr_context, gast.boolop, gast.operator,
                                    gast.unaryop, gast.cmpop)) and not cls._fields)


class _Dispatch:
    """``visit`` through a per-class table: node class -> ``visit_<ClassName>`` or None."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._methods = {}   # each visitor class its own: subclasses override methods
        cls._skipped = None

    _methods: dict = {}
    _skipped = None

    @classmethod
    def _fieldless_to_skip(cls) -> frozenset:
        """The field-less node classes whose visit would do nothing for this class."""
        if cls._skipped is None:
            base = NodeTransformer if issubclass(cls, NodeTransformer) else NodeVisitor
            own_generic = cls.generic_visit is not base.generic_visit
            cls._skipped = frozenset() if own_generic else frozenset(
                node for node in _FIELDLESS
                if getattr(cls, "visit_" + node.__name__, None) is None)
        return cls._skipped

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
        skipped = self._skipped or self._fieldless_to_skip()
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, _AST):
                        visit(item)
            elif isinstance(value, _AST) and value.__class__ not in skipped:
                visit(value)


class NodeTransformer(_Dispatch, ast.NodeTransformer):
    """`ast.NodeTransformer`, faster (see the module's docstring)."""

    def generic_visit(self, node):
        visit = self.visit
        skipped = self._skipped or self._fieldless_to_skip()
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
            elif isinstance(old_value, _AST) and old_value.__class__ not in skipped:
                new_node = visit(old_value)
                if new_node is None:
                    delattr(node, field)
                elif new_node is not old_value:
                    setattr(node, field, new_node)
        return node


def fix_missing_locations(node: ast.AST) -> ast.AST:
    """`gast.fix_missing_locations`, without its recursion through generators: a node
    without a position takes its parent's (the nodes rules write).  As gast's (unlike
    `ast`'s), an end position counts as present where the class has a default for it."""
    stack = [(node, 1, 0, 1, 0)]
    while stack:
        node, lineno, col_offset, end_lineno, end_col_offset = stack.pop()
        attributes = node._attributes
        if attributes:
            if "lineno" in attributes:
                if not hasattr(node, "lineno"):
                    node.lineno = lineno
                else:
                    lineno = node.lineno
            if "end_lineno" in attributes:
                if not hasattr(node, "end_lineno"):
                    node.end_lineno = end_lineno
                else:
                    end_lineno = node.end_lineno
            if "col_offset" in attributes:
                if not hasattr(node, "col_offset"):
                    node.col_offset = col_offset
                else:
                    col_offset = node.col_offset
            if "end_col_offset" in attributes:
                if not hasattr(node, "end_col_offset"):
                    node.end_col_offset = end_col_offset
                else:
                    end_col_offset = node.end_col_offset
        location = (lineno, col_offset, end_lineno, end_col_offset)
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, _AST):
                stack.append((value, *location))
            elif isinstance(value, list):
                stack.extend((item, *location) for item in value if isinstance(item, _AST))
    return node
