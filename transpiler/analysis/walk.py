"""`walk`: every node of a gast tree, faster than `gast.walk` (`ast.walk`).

The analyses walk whole statements many times (names read and written per statement,
per fixpoint round).  `ast.walk` pays for two generator layers per node (`iter_child_nodes`
over `iter_fields`) and a deque; this walk reads ``_fields`` directly with one stack.  It
visits the same nodes, depth first instead of breadth first: use it where the order of
the nodes does not matter.
"""
from __future__ import annotations

import ast
from typing import Iterator


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and all nodes below it, in no particular order."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, ast.AST):
                stack.append(value)
            elif isinstance(value, list):
                # lists of nodes, but `global`/`nonlocal` list names (strings)
                stack.extend(item for item in value if isinstance(item, ast.AST))
