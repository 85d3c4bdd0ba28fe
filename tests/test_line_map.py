"""`emit.fileformat.line_map`: generated line -> source line, read from the ``# file.py:LINE``
comments the emitter writes.

The oracle is the tokenizer: a reference implementation that finds comments as Python
does (so a ``#`` inside a string is never one) and maps statements the same way.  It must
agree with the fast, regular-expression reader on every generated module we have (the
golden files and the generated module of every corpus function) and on hand-made edge
cases.
"""
from __future__ import annotations

import ast
import glob
import io
import os
import re
import tokenize

import pytest

from emit.fileformat import line_map

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
_COMMENT = re.compile(r"#\s*(?P<file>[^\s:#]+):(?P<line>\d+)\s*$")


def reference_line_map(text: str) -> dict[int, int]:
    comments = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            match = _COMMENT.match(token.string)
            if match:
                comments[token.start[0]] = int(match.group("line"))
    mapping = {}

    def visit(statements):
        for node in statements:
            blocks = [getattr(node, f, None) for f in ("body", "orelse", "finalbody")]
            blocks = [b for b in blocks if isinstance(b, list) and b and
                      isinstance(b[0], ast.stmt)]
            last = node.lineno if blocks else node.end_lineno
            if last in comments:
                for line in range(node.lineno, last + 1):
                    mapping[line] = comments[last]
            for block in blocks:
                visit(block)
    visit(ast.parse(text).body)
    return mapping


def generated_modules():
    paths = sorted(glob.glob(os.path.join(ROOT, "examples", "__psc__", "*.py")) +
                   glob.glob(os.path.join(HERE, "golden", "generated", "*.py")))
    return [pytest.param(path, id=os.path.relpath(path, ROOT)) for path in paths]


@pytest.mark.parametrize("path", generated_modules())
def test_agrees_with_the_tokenizer_on_generated_modules(path):
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    expected = reference_line_map(text)
    assert expected, "a generated module without source comments"
    assert line_map(text) == expected
    assert line_map(text, ast.parse(text)) == expected


EDGE_CASES = {
    "hash in a string": 'x = "# a.py:3"  # m.py:7\ny = "# a.py:4"\n',
    "non-ASCII before the comment": 'x = "ééé"  # m.py:5\n',
    "statement over lines": 'x = f(1,\n      2)  # m.py:9\n',
    "compound header": 'if x:  # m.py:2\n    y = 1  # m.py:3\nelse:\n    y = 2  # m.py:5\n',
    "string ending like a comment": 'x = "a # m.py:3"\n',
    "no comments": 'x = 1\n',
    "def and loop": ('def build(b, x):  # m.py:1\n'
                     '    for i in range(3):  # m.py:2\n'
                     '        x = x + i  # m.py:3\n'
                     '    return x  # m.py:4\n'),
}


@pytest.mark.parametrize("text", EDGE_CASES.values(), ids=EDGE_CASES.keys())
def test_agrees_with_the_tokenizer_on_edge_cases(text):
    assert line_map(text) == reference_line_map(text)
