"""Reading a generated module's ``# file.py:LINE`` comments back into a line map."""
from __future__ import annotations

import ast
import re

# A source comment closes a line: the last ``# file.py:LINE`` on it.
_COMMENT = re.compile(r"#\s*(?P<file>[^\s:#]+):(?P<line>\d+)\s*$")


def _comment_on(lines: list[str], line: int, after: int) -> int | None:
    """The source line named by the comment closing generated ``line`` (1-based), looking
    only past UTF-8 byte offset ``after`` (the statement's code: a string there is not a
    comment)."""
    text = lines[line - 1]
    if not text.isascii():   # ast counts columns in UTF-8 bytes
        after = len(text.encode("utf-8")[:after].decode("utf-8", errors="ignore"))
    match = _COMMENT.search(text, after)
    return int(match.group("line")) if match else None


def _is_compound(node) -> bool:
    return any(isinstance(getattr(node, f, None), list) and getattr(node, f)
               and isinstance(getattr(node, f)[0], ast.stmt)
               for f in ("body", "orelse", "finalbody"))


def line_map(text: str, tree: ast.Module | None = None) -> dict[int, int]:
    """Generated line -> source line, for every line of every commented statement.

    ``tree`` is ``ast.parse(text)`` when the caller has it.  A simple statement's comment
    follows its last line; a compound statement's follows its header line.  Comments are
    read with a regular expression from where the statement's code ends (the emitter
    writes them there; tokenizing the module to find them cost more than compiling it).
    """
    lines = text.splitlines()
    mapping: dict[int, int] = {}

    def visit(statements):
        for node in statements:
            compound = _is_compound(node)
            if compound:   # the header: the comment is after the first line's code
                source_line = _comment_on(lines, node.lineno, node.col_offset)
                last = node.lineno
            else:
                last = node.end_lineno
                source_line = _comment_on(lines, last, node.end_col_offset)
            if source_line is not None:
                for line in range(node.lineno, last + 1):
                    mapping[line] = source_line
            for field in ("body", "orelse", "finalbody"):
                children = getattr(node, field, None)
                if isinstance(children, list) and children and isinstance(children[0],
                                                                          ast.stmt):
                    visit(children)
    visit((tree or ast.parse(text)).body)
    return mapping
