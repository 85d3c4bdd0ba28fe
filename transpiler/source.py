"""Getting a function's source and parsing it with gast, keeping file positions."""
from __future__ import annotations

import dataclasses
import hashlib
import inspect
import textwrap

import gast

from runtime.errors import PSCSyntaxError, SourceLocation

from . import version


@dataclasses.dataclass(frozen=True)
class FunctionSource:
    """A function's source text, where it sits in its file, and its content hash."""

    file: str
    first_line: int          # 1-based line of ``def`` (or of its first decorator) in `file`
    text: str                # dedented source of the function, decorators included
    indent: int              # columns removed by dedenting

    @property
    def digest(self) -> str:
        """Content hash keyed by the transpiler version: a stale module never matches."""
        data = f"{version.__version__}\n{self.text}".encode()
        return hashlib.sha256(data).hexdigest()[:16]

    def location(self, node) -> SourceLocation:
        """The file position of a node parsed from `text`."""
        line = self.first_line + getattr(node, "lineno", 1) - 1
        col = getattr(node, "col_offset", 0) + self.indent
        return SourceLocation(self.file, line, col)

    def parse(self) -> gast.FunctionDef:
        module = gast.parse(self.text)
        node = module.body[0]
        if not isinstance(node, gast.FunctionDef):
            raise PSCSyntaxError("jit_ps applies to functions defined with `def`",
                                 SourceLocation(self.file, self.first_line))
        return node


def function_source(fn) -> FunctionSource:
    """The source of a live function object (the decorator's path)."""
    try:
        file = inspect.getsourcefile(fn) or inspect.getfile(fn)
        lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        raise PSCSyntaxError(
            f"the source of {getattr(fn, '__qualname__', fn)!r} is not available",
            hint="define PSC functions in a .py file (not in an interactive session or exec)"
        ) from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = len(lines[0]) - len(lines[0].lstrip()) if dedented != text else 0
    return FunctionSource(file, first_line, dedented, indent)


def module_function_sources(file: str, text: str, module: gast.Module):
    """(name, FunctionSource) of every top-level function in a parsed module (CLI path)."""
    lines = text.splitlines(keepends=True)
    for node in module.body:
        if isinstance(node, gast.FunctionDef):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            source = "".join(lines[start - 1:node.end_lineno])
            yield node, FunctionSource(file, start, source, 0)
