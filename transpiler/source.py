"""Getting a function's source and parsing it with gast, keeping file positions."""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.machinery
import inspect
import linecache
import os
import textwrap
import types

import gast

from runtime.errors import PSCSyntaxError, SourceLocation

from .file_outline import last_line, outline_of
from .gast_conversion import parse as parse_gast, to_gast
from .version import __version__


@dataclasses.dataclass(frozen=True)
class FunctionSource:
    """A function's source text, where it sits in its file, and its content hash."""

    file: str
    first_line: int          # 1-based line of ``def`` (or of its first decorator) in `file`
    text: str                # dedented source of the function, decorators included
    indent: int              # columns removed by dedenting
    lambda_at: tuple | None = None   # (line, col) of a lambda in `text` (the whole file)
    # The function's stdlib tree from its file's parse (`file_outline`), numbered as in
    # the file, where the source came from there: `parse` converts it instead of parsing
    # `text` again (the same tree, `text` being that function's lines).
    parsed: object = dataclasses.field(default=None, compare=False, repr=False)

    def digest(self, static_argnames=(), module_ast=None) -> str:
        """Hash of everything the generated code depends on: the transpiler version, the
        function's text and position (its line comments), the static argument names
        (binding times), and the top-level imports of its module (``module_ast``: the
        generated module copies them, and they decide what a name such as ``trig`` in
        ``from numpy import sin as trig`` denotes); a stale module never matches.

        Module-level values other than imports are read when the computation is built,
        so they are not part of it.  The CLI (from the parsed file) and the decorator
        (from the file's import statements alone) compute the same hash.
        """
        data = (f"{__version__}\n{self.first_line}:{self.indent}\n"
                f"{','.join(sorted(static_argnames))}\n{imports_key(module_ast)}\n"
                f"{self.text}")
        return hashlib.sha256(data.encode()).hexdigest()[:16]

    def location(self, node) -> SourceLocation:
        """The file position of a node parsed from `text`."""
        line = self.first_line + getattr(node, "lineno", 1) - 1
        col = getattr(node, "col_offset", 0) + self.indent
        return SourceLocation(self.file, line, col)

    def parse(self) -> gast.FunctionDef:
        if self.parsed is not None and self.indent == 0:
            return to_gast(self.parsed, self.first_line - 1)
        module = parse_gast(self.text)
        if self.lambda_at is not None:
            return _lambda_as_function(module, self.lambda_at)
        node = module.body[0]
        if not isinstance(node, gast.FunctionDef):
            raise PSCSyntaxError("jit_ps applies to functions defined with `def`",
                                 SourceLocation(self.file, self.first_line))
        return node


def imports_key(module_ast) -> str:
    """The top-level ``import`` statements of ``module_ast`` (a gast or stdlib ast module,
    or None) as canonical text, one per line: the same for the same statements however the
    module was parsed and whatever else it holds."""
    if module_ast is None:
        return ""
    lines = []
    for node in module_ast.body:
        kind = type(node).__name__
        if kind not in ("Import", "ImportFrom"):
            continue
        names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in node.names)
        if kind == "Import":
            lines.append(f"import {names}")
        else:
            lines.append(f"from {'.' * (node.level or 0)}{node.module or ''} import {names}")
    return "\n".join(lines)


def _lambda_as_function(module, position) -> gast.FunctionDef:
    """The lambda at ``position`` as ``def lambda_L<line>(...): return <body>``."""
    for node in gast.walk(module):
        if isinstance(node, gast.Lambda) and (node.lineno, node.col_offset) == position:
            function = gast.FunctionDef(f"lambda_L{node.lineno}", node.args,
                                        [gast.Return(node.body)], [], None, None)
            for new in (function, function.body[0]):
                gast.copy_location(new, node)
                new.end_lineno, new.end_col_offset = node.end_lineno, node.end_col_offset
            return function
    raise PSCSyntaxError("cannot find the lambda's source")


def _lambda_source(fn) -> FunctionSource:
    """A lambda's source: its whole file, and where in it the lambda is.  Several lambdas
    can share a line; the columns its bytecode comes from tell which one it is."""
    file = inspect.getsourcefile(fn)
    if file is None:
        raise OSError
    text = "".join(linecache.getlines(file))
    if not text:
        raise OSError
    positions = [(line, col) for line, _, col, _ in fn.__code__.co_positions()
                 if line is not None and col is not None]
    best, best_count = None, 0
    for node in gast.walk(parse_gast(text)):
        if isinstance(node, gast.Lambda):
            begin = (node.body.lineno, node.body.col_offset)
            end = (node.body.end_lineno, node.body.end_col_offset)
            count = sum(begin <= p <= end for p in positions)
            if count > best_count:
                best, best_count = (node.lineno, node.col_offset), count
    if best is None:
        raise OSError
    return FunctionSource(file, 1, text, 0, lambda_at=best)


def function_source(fn) -> FunctionSource:
    """The source of a live function object (the decorator's path)."""
    if fn.__name__ == "<lambda>":
        try:
            return _lambda_source(fn)
        except (OSError, TypeError, SyntaxError):
            raise PSCSyntaxError("the source of this lambda is not available",
                                 hint="define it in a .py file") from None
    # The function's own code, not what functools.wraps says it wraps: a wrapper's body is
    # what runs, and it names its own globals.
    target = getattr(fn, "__code__", fn)
    found = _module_level_source(target)
    if found is not None:
        return found
    try:
        file = inspect.getsourcefile(target) or inspect.getfile(target)
        lines, first_line = inspect.getsourcelines(target)
    except (OSError, TypeError):
        raise PSCSyntaxError(
            f"the source of {getattr(fn, '__qualname__', fn)!r} is not available",
            hint="define PSC functions in a .py file (not in an interactive session or exec)"
        ) from None
    return _from_lines(file, first_line, lines)


def _module_level_source(code) -> FunctionSource | None:
    """A module-level function's source, from its file's cached outline: what
    `inspect.getsourcelines` returns, without tokenizing the function.  None for anything
    else (nested functions, methods, a file that changed or cannot be read), which
    `function_source` leaves to inspect."""
    if not isinstance(code, types.CodeType) or \
            getattr(code, "co_qualname", code.co_name) != code.co_name:   # 3.11+
        return None
    file = code.co_filename
    if os.path.splitext(file)[1] not in importlib.machinery.SOURCE_SUFFIXES:
        return None
    outline = outline_of(file)
    span = outline.functions.get(code.co_firstlineno) if outline is not None else None
    if span is None or span.name != code.co_name:
        return None
    return _from_lines(file, span.first_line,
                       outline.lines[span.first_line - 1:span.last_line], span.node)


def _from_lines(file: str, first_line: int, lines, parsed=None) -> FunctionSource:
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = len(lines[0]) - len(lines[0].lstrip()) if dedented != text else 0
    return FunctionSource(file, first_line, dedented, indent, parsed=parsed)


def module_function_sources(file: str, text: str, module: gast.Module):
    """(name, FunctionSource) of every top-level function in a parsed module (CLI path)."""
    lines = text.splitlines(keepends=True)
    for node, after in zip(module.body, module.body[1:] + [None]):
        if isinstance(node, gast.FunctionDef):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            # ends where the decorator's lookup ends it (trailing indented comments
            # included), so the digests of the two ways in agree
            source = "".join(lines[start - 1:last_line(node, after, lines)])
            yield node, FunctionSource(file, start, source, 0)
