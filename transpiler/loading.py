"""Turning generated module text into build functions: compile, register, namespace.

The namespace a build function runs in holds exactly its free names, read from the user's
globals and closure *when the computation is built* (so late-defined globals work), with
NumPy objects replaced by their mirrors in `runtime.numpy_api`.
"""
from __future__ import annotations

import ast
import builtins
import functools
import linecache
import types

import gast
import numpy as np

import runtime.numpy_api as numpy_mirror
from emit.fileformat import line_map
from runtime import sourcemap
from runtime.calls import GENERATED_PREFIX
from runtime.errors import PSCInternalError, SourceLocation

from .analysis.resolve import Kind, classify_value
from .file_outline import FileVersion, file_outline


def compile_generated(text: str, source_file: str, label: str,
                      location: SourceLocation | None = None, lines: dict | None = None):
    """Compile generated ``text``; register it for tracebacks and for source locations.
    ``lines``: its `emit.line_map` where the emitter gave it (then the text is compiled
    without being parsed into Python objects first, which costs more than compiling).

    Generated code that Python refuses is a bug of the rules (or a damaged module on
    disk), never the user's: a `PSCInternalError` at the user's function (``location``),
    not a SyntaxError pointing into text the user never wrote."""
    filename = f"{GENERATED_PREFIX} {label}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    try:
        if lines is None:
            tree = ast.parse(text, filename)   # parsed once: for the line map and compile
            code = compile(tree, filename, "exec")
            lines = line_map(text, tree)
        else:
            code = compile(text, filename, "exec")
    except SyntaxError as error:
        raise PSCInternalError(
            f"the code generated for {label.rsplit(':', 1)[-1]} does not compile: "
            f"{error.msg} (generated line {error.lineno})", location,
            "this is a bug in psc-transpiler: please report it with the function") from error
    mapping = {}
    for generated_line, source_line in lines.items():
        line_text = linecache.getline(source_file, source_line)
        col = len(line_text) - len(line_text.lstrip())
        mapping[generated_line] = SourceLocation(source_file, source_line, col)
    sourcemap.register(filename, mapping, text)
    return code


def staged_view(value):
    """What generated code should see for a global: NumPy objects become their mirrors."""
    if isinstance(value, types.ModuleType):
        if value is np:
            return numpy_mirror
        if value.__name__.startswith("numpy."):
            mirror = numpy_mirror
            for part in value.__name__.split(".")[1:]:
                mirror = getattr(mirror, part)
            return mirror
        return value
    resolved = classify_value(value)
    if resolved.kind is Kind.NUMPY and resolved.qualname:
        mirror = numpy_mirror
        try:
            for part in resolved.qualname.split(".")[1:]:
                mirror = getattr(mirror, part)
        except AttributeError:
            return value
        return mirror
    return value


def closure_values(fn) -> dict:
    values = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            values[name] = cell.cell_contents
        except ValueError:
            pass
    return values


def names_read_by(code) -> set[str]:
    """Every global name the compiled module ``code`` (nested functions included) may
    read: its code objects' ``co_names``.  A superset (attribute names are there too),
    which is all `namespace_for` needs: it skips names the user's globals lack."""
    names, pending = set(), [code]
    while pending:
        current = pending.pop()
        names.update(current.co_names)
        pending.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    return names


def namespace_for(fn, free_names) -> dict:
    namespace = {"__builtins__": builtins, "__name__": f"psc_generated.{fn.__module__}"}
    closure = closure_values(fn)
    for name in free_names:
        if name in closure:
            namespace[name] = staged_view(closure[name])
        elif name in fn.__globals__:
            namespace[name] = staged_view(fn.__globals__[name])
    return namespace


@functools.lru_cache(maxsize=64)
def _top_level_imports(version: FileVersion) -> gast.Module:
    # The file's outline holds the stdlib parse (C) of the whole file; gast's conversion
    # (Python, several times slower) runs only for the import statements: the rest of the
    # module is never read.
    imports = [gast.ast_to_gast(node) for node in file_outline(version).imports]
    return gast.Module(imports, [])


def module_imports_of(path: str) -> gast.Module | None:
    """The top-level import statements of the module a function comes from, as a gast
    module (all that the generated module needs of it), or None if it cannot be read."""
    try:
        return _top_level_imports(FileVersion.of(path))
    except (OSError, SyntaxError, ValueError):
        return None
