"""Printing a generated module: header, imports, build functions with line comments."""
from __future__ import annotations

import ast
import os

import gast

from transpiler.anno import Anno, getanno
from transpiler.version import __version__

from .imports import module_imports
from .templates import FUNCTION_HASH, HEADER, RUNTIME_IMPORT, statements


def _statement_fields(node):
    for field in ("body", "orelse", "finalbody"):
        children = getattr(node, field, None)
        if isinstance(children, list) and children and isinstance(children[0],
                                                                  (gast.stmt, ast.stmt)):
            yield field, children


def _is_compound(node) -> bool:
    return any(True for _ in _statement_fields(node))


def _annotate(generated: list, printed: list, lines: list[str], file_name: str,
              inherited=None) -> None:
    """Append ``# file.py:LINE`` to each printed statement, walking the rewritten gast
    statements and their re-parsed printout side by side (same structure)."""
    for gnode, pnode in zip(generated, printed):
        origin = getanno(gnode, Anno.ORIGIN) or inherited
        if origin is not None:
            index = (pnode.lineno if _is_compound(pnode) else pnode.end_lineno) - 1
            lines[index] += f"  # {file_name}:{origin.line}"
        for (_, gchildren), (_, pchildren) in zip(_statement_fields(gnode),
                                                  _statement_fields(pnode)):
            _annotate(gchildren, pchildren, lines, file_name, origin)


def function_text(function) -> str:
    """One build function, printed, with a source-line comment on every statement."""
    text = gast.unparse(function.node).strip("\n")
    lines = text.split("\n")
    printed = ast.parse(text).body
    _annotate([function.node], printed, lines, os.path.basename(function.source.file))
    return "\n".join(lines) + "\n"


def emit_module(source_display: str, functions: list, module_ast=None,
                runtime_alias: str = "psc") -> str:
    """The text of the generated module for ``functions`` of one source file."""
    used = set().union(*(f.free_names for f in functions)) if functions else set()
    imports = module_imports(module_ast, used)
    if any(isinstance(n, gast.Name) and n.id == runtime_alias
           for f in functions for n in gast.walk(f.node)):
        imports += statements(RUNTIME_IMPORT, alias=runtime_alias)
    parts = [HEADER.substitute(version=__version__, source=source_display)]
    parts += [FUNCTION_HASH.substitute(name=f.name, digest=f.digest)
              for f in functions]
    parts.append(gast.unparse(gast.Module(imports, [])).strip("\n") + "\n")
    for function in functions:
        parts.append("\n\n" + function_text(function))
    return "".join(parts)
