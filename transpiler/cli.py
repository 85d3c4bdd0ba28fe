"""``psc-transpile SRC... -o OUTDIR [--check]``: write generated modules to disk, for review.

``psc-transpile --cache-info`` / ``--cache-clear``: show or empty the persistent cache of
generated modules and compiled programs (`runtime.disk_cache`, ``$PSC_CACHE_DIR``).

The source is never imported or run: names are resolved from each file's own imports
(`transpiler.analysis.resolve.StaticResolver`), so it is safe on untrusted pull requests.
Each source file ``pkg/model.py`` that compiles functions becomes ``OUTDIR/model_psc.py``
(sub-directories of a directory argument are kept).  A file compiles a function with
``@jit_ps`` / ``@jit_ps(...)`` on a top-level ``def``, or at module level with
``name = jit_ps(fn, ...)`` or ``name = jit_ps(...)(fn)``; static arguments are read from
the literal ``static_argnames``/``static_argnums`` keywords.  The module holds every
function that compiled code transpiles: the compiled functions and the helpers they call
(undecorated top-level functions of the same file, transitively), in source order.

Output is deterministic; a module whose text would not change is not rewritten.  All or
nothing: when any function or file fails (reported as ``FILE:LINE:COL: ...``, every one),
nothing is written and the exit status is 2.  A generated module in OUTDIR whose source is
gone or compiles nothing any more is an orphan: removed (``--check``: reported).
``--check`` writes nothing and exits 1 when a module is missing, stale, edited or orphaned.
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import os
import sys
import tokenize

import gast

from emit.fileformat import (generated_file_name, is_generated_file, is_generated_text,
                             function_digests)
from runtime.errors import PSCError, PSCSyntaxError, SourceLocation
from runtime.public_names import DECORATOR

from . import caches
from .analysis.resolve import Kind, StaticResolver
from .file_outline import effective_imports
from .gast_conversion import parse as parse_gast
from .pipeline import generated_module, run_nested, transpile_function
from .source import module_function_sources
from .version import __version__

USAGE_NOTES = """\
where the decorator looks (so that -o is right):
  @jit_ps uses a module from OUTDIR only when its header's digests match the function's
  current source and the module's own text; otherwise it transpiles in memory.  It looks
    1. in jit_ps(..., generated_dir=DIR), else in $PSC_GENERATED_DIR (OUTDIR/<sub>/ for a
       source in <sub>/ below any of the source's 8 nearest folders), else
    2. in __psc__/ next to the source, or __psc__/<sub>/ in an ancestor folder of the
       project (not above the folder holding pyproject.toml, setup.py, setup.cfg or .git,
       nor at or above a folder others may write to or another user owns).
  So: `psc-transpile src -o src/__psc__` (a directory: sub-folders kept), or
  `psc-transpile pkg/model.py -o pkg/__psc__` (a file: its own folder's __psc__).

exit status: 0 done (or up to date); 1 --check found a module missing, stale, edited or
orphaned; 2 a file or function failed (nothing written), or a usage error.
"""


# --- which functions a file compiles ------------------------------------------------------

def _is_jit_ps(node) -> bool:
    name = node.attr if isinstance(node, gast.Attribute) else getattr(node, "id", None)
    return name == DECORATOR


def _literal_options(path: str, call: gast.Call) -> dict:
    """``static_argnames``/``static_argnums`` of a ``jit_ps(...)`` call, read from literal
    keywords (the source is never run, so a computed value cannot be known)."""
    options = {}
    for keyword in call.keywords:
        if keyword.arg not in ("static_argnames", "static_argnums"):
            continue
        try:
            value = ast.literal_eval(gast.unparse(keyword.value).strip())
        except (ValueError, SyntaxError, TypeError):
            raise PSCSyntaxError(
                f"psc-transpile reads {keyword.arg} only from a literal",
                SourceLocation(path, keyword.value.lineno, keyword.value.col_offset),
                hint=f"write {keyword.arg}=(...) with literal names or positions: the CLI "
                     "never runs the source") from None
        options[keyword.arg] = (value,) if isinstance(value, (str, int)) else tuple(value)
    return options


def _decorator_options(path: str, decorator) -> dict | None:
    """The options of a ``@jit_ps`` / ``@jit_ps(...)`` decorator, or None when the
    decorator is not jit_ps."""
    target = decorator.func if isinstance(decorator, gast.Call) else decorator
    if not _is_jit_ps(target):
        return None
    return _literal_options(path, decorator) if isinstance(decorator, gast.Call) else {}


def _function_form(path: str, statement):
    """``(function name, options, call)`` of a module-level ``name = jit_ps(fn, ...)`` or
    ``name = jit_ps(...)(fn)``, else None."""
    if not isinstance(statement, (gast.Assign, gast.AnnAssign)):
        return None
    call = statement.value
    if not isinstance(call, gast.Call) or len(call.args) != 1 or \
            not isinstance(call.args[0], gast.Name):
        return None
    if _is_jit_ps(call.func):                                  # jit_ps(fn, ...)
        return call.args[0].id, _literal_options(path, call), call
    inner = call.func
    if isinstance(inner, gast.Call) and _is_jit_ps(inner.func) and not inner.args \
            and not call.keywords:                             # jit_ps(...)(fn)
        return call.args[0].id, _literal_options(path, inner), call
    return None


def _static_names(node: gast.FunctionDef, options: dict) -> tuple:
    params = [a.id for a in node.args.posonlyargs + node.args.args]
    names = set(options.get("static_argnames", ()))
    names |= {params[i] for i in options.get("static_argnums", ()) if -len(params) <= i <
              len(params)}
    return tuple(sorted(names))


@dataclasses.dataclass
class FileResult:
    """What transpiling one source file gave: the module text (None: nothing compiled),
    the errors (each a printable message) and notes."""

    text: str | None = None
    errors: list = dataclasses.field(default_factory=list)
    notes: list = dataclasses.field(default_factory=list)


def read_source(path: str) -> str:
    """The text of the source file at ``path``, decoded as Python decodes it: a PEP 263
    coding declaration or a UTF-8 BOM, else UTF-8 (`tokenize.open`).  Raises
    `UnicodeDecodeError` for bytes the encoding cannot decode and `SyntaxError` for an
    unknown or contradictory declaration, as the import would."""
    with tokenize.open(path) as handle:
        return handle.read()


def transpile_file(path: str) -> str | None:
    """The generated module for ``path``, or None when it compiles no function.  Raises
    the first error (a `PSCError`, or `OSError`/`SyntaxError`/`UnicodeDecodeError` for a
    file that cannot be read)."""
    result = run_nested(_transpile_text, path, read_source(path))
    if result.errors:
        raise result.errors[0]
    return result.text


def file_result(path: str) -> FileResult:
    """`transpile_file`, with every error of the file collected instead of raised."""
    try:
        return run_nested(_transpile_text, path, read_source(path))
    except (PSCError, OSError, SyntaxError, UnicodeDecodeError) as err:
        # a PSCError here is the file's (a computed static_argnames): no function is read
        return FileResult(errors=[err])


class _FileTranspiler:
    """The functions of one parsed file that its compiled code transpiles."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.module = parse_gast(text)
        # what the generated module copies: the decorator reads the same from the file's
        # outline, so both hash the same imports
        self.imports = gast.Module(effective_imports(self.module.body, text), [])
        self.module_name = os.path.splitext(os.path.basename(path))[0]
        self.resolver = StaticResolver(self.module, self.module_name)
        self.sources = list(module_function_sources(path, text, self.module))
        self.defs = {node.name: (node, source) for node, source in self.sources}  # last wins
        self.result = FileResult()
        self.functions = []      # (source position, order, TranspiledFunction)

    def requests(self):
        """``(def node, source, static names)`` of each compiled function: decorated defs
        in source order, then the function forms in statement order."""
        for node, source in self.sources:
            options = next((o for o in (_decorator_options(self.path, d)
                                        for d in node.decorator_list) if o is not None),
                           None)
            if options is not None:
                yield node, source, _static_names(node, options)
        for statement in self.module.body:
            form = _function_form(self.path, statement)
            if form is None:
                continue
            name, options, call = form
            if name not in self.defs or \
                    self.resolver.resolve(name).kind is not Kind.USER_FUNCTION:
                self.result.notes.append(
                    f"{self.path}:{call.lineno}:{call.col_offset + 1}: note: jit_ps({name}) "
                    f"compiles a function that is not a top-level def of this file: its "
                    f"code is not written here")
                continue
            node, source = self.defs[name]
            yield node, source, _static_names(node, options)

    def _helper(self, name: str):
        """The def of ``name`` when compiled code calling it transpiles it: an undecorated
        top-level function of this file that the name still denotes."""
        found = self.defs.get(name)
        if found is None or found[0].decorator_list:
            return None
        resolved = self.resolver.resolve(name)
        if resolved.kind is not Kind.USER_FUNCTION or \
                resolved.qualname != f"{self.module_name}.{name}":
            return None
        return found

    def _helper_source(self, name: str):
        """The source of the top-level def ``name`` still denotes (decorated or not), for
        learning which of its parameters it updates in place."""
        found = self.defs.get(name)
        resolved = self.resolver.resolve(name)
        if found is None or resolved.kind is not Kind.USER_FUNCTION or \
                resolved.qualname != f"{self.module_name}.{name}":
            return None
        return found[1]

    def _transpile(self, node, source, static_names):
        try:
            function = transpile_function(source, module_ast=self.module,
                                          module_name=self.module_name,
                                          imports=self.imports,
                                          static_argnames=static_names,
                                          helper_sources=self._helper_source)
        except PSCError as err:
            self.result.errors.append(err)
            return None
        self.functions.append(((source.first_line, len(self.functions)), function))
        return function

    def run(self) -> FileResult:
        pending = []
        for node, source, static_names in list(self.requests()):
            function = self._transpile(node, source, static_names)
            if function is not None:
                pending.extend(sorted(function.free_names))
        # helpers, transitively: the runtime transpiles them with no static arguments
        seen = set()
        while pending:
            name = pending.pop(0)
            if name in seen:
                continue
            seen.add(name)
            found = self._helper(name)
            if found is not None:
                function = self._transpile(*found, ())
                if function is not None:
                    pending.extend(sorted(function.free_names))
        if self.functions and not self.result.errors:
            self.result.text = generated_module(self.path, self._in_module(),
                                                self.imports)
        return self.result

    def _in_module(self):
        """The functions, in source order, one per name: a build function is named after
        its function, so a second one under the same name (a function compiled with other
        static arguments too) is left to the decorator, which transpiles it in memory."""
        kept = {}
        for _, function in self.functions:   # requests first, then helpers
            first = kept.setdefault(function.name, function)
            if first is not function and first.digest != function.digest:
                self.result.notes.append(
                    f"{self.path}: note: {function.name} is transpiled twice (with other "
                    f"static arguments); only the first is written, the decorator "
                    f"transpiles the other in memory")
        order = {id(f): position for position, f in self.functions}
        return sorted(kept.values(), key=lambda f: order[id(f)])


def _transpile_text(path: str, text: str) -> FileResult:
    return _FileTranspiler(path, text).run()


# --- the files of a run -------------------------------------------------------------------

def _sources(paths):
    """(source file, path of its module relative to OUTDIR) for files and directories."""
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
                for name in sorted(files):
                    if name.endswith(".py") and not is_generated_file(name):
                        full = os.path.join(root, name)
                        rel = os.path.relpath(os.path.dirname(full), path)
                        yield full, os.path.normpath(os.path.join(rel,
                                                                  generated_file_name(name)))
        else:
            yield path, generated_file_name(path)


def _orphans(paths, output: str, written: set[str]) -> list[tuple[str, str]]:
    """``(module path, why)`` of each generated module in ``output`` that this run would
    write but does not: its source is gone, or compiles nothing any more.  With a
    directory argument every generated module under ``output`` is the run's; with files
    only, the modules those files would write.  Files without our header are left alone."""
    directories = [p for p in paths if os.path.isdir(p)]
    candidates = set()
    if directories and os.path.isdir(output):
        for root, _, files in os.walk(output):
            candidates.update(os.path.normpath(os.path.relpath(os.path.join(root, f),
                                                               output))
                              for f in files if is_generated_file(f))
    candidates.update(generated_file_name(p) for p in paths if not os.path.isdir(p))
    found = []
    for relative in sorted(candidates - written):
        target = os.path.join(output, relative)
        try:
            with open(target, encoding="utf-8") as handle:
                if not is_generated_text(handle.read(200)):
                    continue
        except (OSError, UnicodeDecodeError):
            continue
        stem = os.path.basename(relative)[:-len("_psc.py")] + ".py"
        sources = [os.path.join(d, os.path.dirname(relative), stem) for d in directories]
        sources += [p for p in paths if not os.path.isdir(p) and os.path.basename(p) == stem]
        why = "compiles no function any more" if any(map(os.path.exists, sources)) else \
            "its source is gone"
        found.append((target, why))
    return found


def _read(target: str) -> str | None:
    try:
        with open(target, encoding="utf-8", newline="") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def _write(target: str, text: str) -> None:
    """Write ``text`` to ``target`` whole: a reader never sees half a module."""
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    temporary = f"{target}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
    os.replace(temporary, target)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="psc-transpile", description=__doc__.split("\n\n")[0].split(": ", 1)[1],
        epilog=USAGE_NOTES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sources", nargs="*", metavar="SRC", help="files or directories")
    parser.add_argument("-o", "--output", metavar="OUTDIR",
                        help="where the modules go: for @jit_ps to use them, a __psc__ "
                             "folder it looks in (see below), or the folder given as "
                             "generated_dir / $PSC_GENERATED_DIR")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a generated module is missing, "
                             "stale, edited or orphaned")
    parser.add_argument("--cache-info", action="store_true",
                        help="print where the persistent cache of generated modules and "
                             "compiled programs is ($PSC_CACHE_DIR) and what it holds")
    parser.add_argument("--cache-clear", action="store_true",
                        help="remove every entry of the persistent cache")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.cache_info or args.cache_clear:
        if args.sources or args.output or args.check:
            parser.error("--cache-info and --cache-clear take no SRC, -o or --check")
        return _cache_command(args.cache_clear, args.cache_info)
    if not args.sources:
        parser.error("the following arguments are required: SRC")
    if args.output is None:
        parser.error("the following arguments are required: -o/--output")
    pairs = list(_sources(args.sources))
    targets: dict[str, str] = {}
    for source, relative in pairs:
        if relative in targets and os.path.abspath(targets[relative]) != os.path.abspath(source):
            print(f"psc-transpile: {targets[relative]} and {source} would both write "
                  f"{os.path.join(args.output, relative)}; transpile them separately",
                  file=sys.stderr)
            return 2
        targets[relative] = source
    # Everything is transpiled before anything is written: all or nothing.
    modules: dict[str, str] = {}
    errors = 0
    for source, relative in pairs:
        result = file_result(source)
        for note in result.notes:
            print(note, file=sys.stderr)
        for err in result.errors:
            print(_error_line(source, err), file=sys.stderr)
        errors += len(result.errors)
        if result.text is not None:
            modules[relative] = result.text
    if errors:
        print(f"psc-transpile: {errors} error{'s' if errors > 1 else ''}; nothing "
              f"{'checked' if args.check else 'written'}", file=sys.stderr)
        return 2
    orphans = _orphans(args.sources, args.output, set(modules))
    if args.check:
        return _check(args.output, modules, orphans)
    for relative, text in modules.items():
        target = os.path.join(args.output, relative)
        if _read(target) != text:   # an unchanged module keeps its file (and mtime)
            _write(target, text)
            print(f"wrote {target}")
    for target, why in orphans:
        os.remove(target)
        print(f"removed {target} ({why})")
    return 0


def _cache_command(clear: bool, info: bool) -> int:
    if clear:
        print(f"removed {caches.cache_clear()} cache files")
    if info:
        print(caches.describe(caches.cache_info()))
    return 0


def _check(output: str, modules: dict[str, str], orphans) -> int:
    problems = []
    for relative, text in modules.items():
        target = os.path.join(output, relative)
        current = _read(target)
        if current is None:
            problems.append(("missing", target))
        elif current != text:
            edited = function_digests(current) == function_digests(text)
            problems.append(("edited" if edited else "stale", target))
    problems += [(f"orphaned ({why})", target) for target, why in orphans]
    for why, target in problems:
        print(f"{why}: {target}", file=sys.stderr)
    return 1 if problems else 0


def _error_line(path: str, err: Exception) -> str:
    if isinstance(err, PSCError):
        return str(err) if err.location is not None else f"{path}: {err}"
    return _file_error(path, err)


def _file_error(path: str, err: Exception) -> str:
    """One line, ``path[:line[:col]]: error: what``, for a file that cannot be read."""
    if isinstance(err, UnicodeDecodeError):
        return (f"{path}: error: cannot decode byte {err.object[err.start]:#04x} at offset "
                f"{err.start} as {err.encoding} (declare the file's encoding with a "
                f"'# -*- coding: NAME -*-' line, as PEP 263 describes)")
    if isinstance(err, SyntaxError):
        where = path + "".join(f":{n}" for n in (err.lineno, err.offset) if n)
        return f"{where}: error: {err.msg}"
    return f"{path}: error: {err.strerror or err}" if isinstance(err, OSError) else \
        f"{path}: error: {err}"


if __name__ == "__main__":
    sys.exit(main())
