"""One stdlib parse per version of a source file, shared by source lookup and imports.

A function's source (`transpiler.source`) and the imports its generated module needs
(`transpiler.loading`) both come from the file a function was defined in.  The stdlib
parser (C) reads the whole file once per `FileVersion`; what the two need of it is kept in
a `FileOutline`: the file's lines, its top-level imports, and the lines each top-level
function spans.
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import os
import tokenize


@dataclasses.dataclass(frozen=True)
class FileVersion:
    """One version of a source file: a cached parse is reused only while the file keeps
    its modification time and size (an edit changes at least one)."""

    path: str
    mtime_ns: int
    size: int

    @classmethod
    def of(cls, path: str) -> "FileVersion":
        status = os.stat(path)
        return cls(os.path.abspath(path), status.st_mtime_ns, status.st_size)


@dataclasses.dataclass(frozen=True)
class FunctionSpan:
    name: str
    first_line: int   # 1-based, of its first decorator or of `def`
    last_line: int    # where `inspect.getsourcelines` ends it (see `_last_line`)


@dataclasses.dataclass(frozen=True, eq=False)
class FileOutline:
    lines: list[str]                      # as `linecache` reads them (`tokenize.open`)
    imports: list[ast.stmt]               # top-level `import` / `from ... import`
    functions: dict[int, FunctionSpan]    # top-level `def`s by `first_line`


def outline_of(path: str) -> FileOutline | None:
    """The outline of the file at ``path`` as it is now, or None if it cannot be parsed."""
    try:
        return file_outline(FileVersion.of(path))
    except (OSError, SyntaxError, ValueError):   # ValueError: null bytes, bad encoding
        return None


@functools.lru_cache(maxsize=64)
def file_outline(version: FileVersion) -> FileOutline:
    with tokenize.open(version.path) as handle:   # decodes as linecache (and inspect) do
        lines = handle.readlines()
    module = ast.parse("".join(lines))
    imports = [node for node in module.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    functions = {}
    for node, after in zip(module.body, module.body[1:] + [None]):
        if isinstance(node, ast.FunctionDef):
            span = _span(node, after, lines)
            functions[span.first_line] = span
    return FileOutline(lines, imports, functions)


def _first_line(node) -> int:
    decorators = getattr(node, "decorator_list", [])   # of a def or a class
    return min([node.lineno] + [decorator.lineno for decorator in decorators])


def _span(node: ast.FunctionDef, after, lines) -> FunctionSpan:
    return FunctionSpan(node.name, _first_line(node), last_line(node, after, lines))


def last_line(node, after, lines) -> int:
    """The last line of top-level function ``node`` (stdlib ast or gast) followed by the
    top-level statement ``after`` (None at the end of the file), as `inspect` ends it."""
    next_line = _first_line(after) if after is not None else len(lines) + 1
    return _last_line(node, next_line, lines)


def _last_line(node: ast.FunctionDef, next_line: int, lines) -> int:
    """The function's last line as `inspect.getblock` finds it: its last statement, or a
    comment after it (before the next top-level statement) indented at least as deep as
    the body; a body on the ``def`` line takes no comments."""
    last = node.end_lineno
    body = node.body[0]
    if lines[body.lineno - 1][:body.col_offset].strip():
        return last       # `def f(x): return x`: no indented block
    for number in range(last + 1, next_line):
        text = lines[number - 1]
        stripped = text.lstrip()
        if stripped.startswith("#") and len(text) - len(stripped) >= body.col_offset:
            last = number
    return last
