"""Reading a generated module's ``# file.py:LINE`` comments back into a line map."""
from __future__ import annotations

import ast
import io
import re
import tokenize

_COMMENT = re.compile(r"#\s*(?P<file>[^\s:#]+):(?P<line>\d+)\s*$")


def _comments(text: str) -> dict[int, int]:
    found = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            match = _COMMENT.match(token.string)
            if match:
                found[token.start[0]] = int(match.group("line"))
    return found


def line_map(text: str) -> dict[int, int]:
    """Generated line -> source line, for every line of every commented statement."""
    comments = _comments(text)
    mapping: dict[int, int] = {}

    def visit(statements):
        for node in statements:
            compound = any(isinstance(getattr(node, f, None), list) and getattr(node, f)
                           and isinstance(getattr(node, f)[0], ast.stmt)
                           for f in ("body", "orelse", "finalbody"))
            comment_line = node.lineno if compound else node.end_lineno
            source_line = comments.get(comment_line)
            if source_line is not None:
                last = node.lineno if compound else node.end_lineno
                for line in range(node.lineno, last + 1):
                    mapping[line] = source_line
            for field in ("body", "orelse", "finalbody"):
                children = getattr(node, field, None)
                if isinstance(children, list) and children and isinstance(children[0],
                                                                          ast.stmt):
                    visit(children)
    visit(ast.parse(text).body)
    return mapping
