"""One stdlib parse per version of a source file, shared by source lookup and imports.

A function's source (`transpiler.source`) and the imports its generated module needs
(`transpiler.loading`) both come from the file a function was defined in.  The stdlib
parser (C) reads the whole file once per `FileVersion`; what the two need of it is kept in
a `FileOutline`: the file's lines, its top-level imports, and the lines each top-level
function spans.
"""
from __future__ import annotations

import ast
import copy
import dataclasses
import functools
import os
import re
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
    # the function's stdlib tree from the file's parse (file line numbers): its transpile
    # converts it instead of parsing the function's text again
    node: ast.FunctionDef | None = dataclasses.field(default=None, compare=False,
                                                     repr=False)


@dataclasses.dataclass(frozen=True, eq=False)
class FileOutline:
    lines: list[str]                      # as `linecache` reads them (`tokenize.open`)
    imports: list[ast.stmt]               # `effective_imports`: what generated code copies
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
    imports = effective_imports(module.body, "".join(lines))
    functions = {}
    for node, after in zip(module.body, module.body[1:] + [None]):
        if isinstance(node, ast.FunctionDef):
            span = _span(node, after, lines)
            functions[span.first_line] = span
    return FileOutline(lines, imports, functions)


_GLOBAL = re.compile(r"\bglobal\b")
_SCOPES = ("FunctionDef", "AsyncFunctionDef", "ClassDef", "Lambda")


def effective_imports(body, text: str) -> list:
    """The module's top-level import statements (stdlib ast or gast nodes, the same for
    both), less every name that something else in the module binds too.

    A generated module copies these imports, and they run after the names it reads from
    the user's globals are filled in: an import whose name the module rebinds (``from
    numpy import sin as trig`` and later ``def trig``, a second import of the name, a
    ``global trig`` in a function, any ``from m import *``) would replace the value the
    user's code sees.  Such names are left to the user's globals (read at build time,
    NumPy objects mapped to their mirrors).  Copies are returned; ``body`` is unchanged.
    """
    imports = [node for node in body if type(node).__name__ in ("Import", "ImportFrom")]
    counts: dict[str, int] = {}
    for node in imports:
        for alias in node.names:
            if alias.name == "*":
                return []          # binds names no one can list statically
            name = alias.asname or alias.name.split(".")[0]
            counts[name] = counts.get(name, 0) + 1
    if not imports:
        return []
    others = _other_bindings([n for n in body if n not in imports],
                             inside_functions=_GLOBAL.search(text) is not None)
    rebound = {name for name, count in counts.items() if count > 1 or name in others}
    result = []
    for node in imports:
        kept = [a for a in node.names if (a.asname or a.name.split(".")[0]) not in rebound]
        if kept:
            node = copy.copy(node)
            node.names = kept
            result.append(node)
    return result


def _other_bindings(statements, inside_functions: bool) -> set[str]:
    """Names the module-level code of ``statements`` binds (assignments, defs, classes,
    loops, ``with``, ``except``, ``match``, nested imports, ``del``), and with
    ``inside_functions`` those a ``global`` statement in a function or class declares."""
    names, pending, scopes = set(), list(statements), []
    while pending:
        node = pending.pop()
        kind = type(node).__name__
        if kind in _SCOPES:
            if kind != "Lambda":
                names.add(node.name)
            pending.extend(getattr(node, "decorator_list", ()))
            scopes.append(node)
            continue
        if kind == "Name" and type(node.ctx).__name__ in ("Store", "Del"):
            names.add(node.id)
        elif kind in ("Import", "ImportFrom"):
            names.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif kind in ("ExceptHandler", "MatchAs", "MatchStar") and getattr(node, "name", None):
            names.add(node.name)
        elif kind == "MatchMapping" and node.rest:
            names.add(node.rest)
        pending.extend(ast.iter_child_nodes(node))
    if inside_functions:
        for scope in scopes:
            names.update(name for node in ast.walk(scope) if type(node).__name__ == "Global"
                         for name in node.names)
    return names


def _first_line(node) -> int:
    decorators = getattr(node, "decorator_list", [])   # of a def or a class
    return min([node.lineno] + [decorator.lineno for decorator in decorators])


def _span(node: ast.FunctionDef, after, lines) -> FunctionSpan:
    return FunctionSpan(node.name, _first_line(node), last_line(node, after, lines), node)


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
