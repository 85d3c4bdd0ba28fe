"""``psc-transpile SRC... -o OUTDIR [--check]``: write generated modules to disk.

The source is never imported or run: names are resolved from each file's own imports
(`transpiler.analysis.resolve.StaticResolver`), so it is safe on untrusted pull requests.
Each source file ``pkg/model.py`` with ``@jit_ps`` functions becomes ``OUTDIR/model_psc.py``
(sub-directories of a directory argument are kept).  Output is deterministic.
``--check`` writes nothing and exits 1 when a generated module is missing or stale.
Files are read as Python reads them (PEP 263 coding declarations); one that cannot be
read, decoded or transpiled is reported on one line (``FILE: error: ...``) and skipped,
the others are still transpiled, and the exit status is 2.
"""
from __future__ import annotations

import argparse
import ast
import os
import sys
import tokenize

import gast

from emit.fileformat import generated_file_name, is_generated_file
from runtime.errors import PSCError
from runtime.public_names import DECORATOR

from .file_outline import effective_imports
from .pipeline import generated_module, run_nested, transpile_function
from .source import module_function_sources


def _decorator_options(decorator) -> dict | None:
    """``static_argnames``/``static_argnums`` of a ``@jit_ps`` decorator, or None when the
    decorator is not jit_ps."""
    target = decorator.func if isinstance(decorator, gast.Call) else decorator
    name = target.attr if isinstance(target, gast.Attribute) else getattr(target, "id", None)
    if name != DECORATOR:
        return None
    options = {}
    if isinstance(decorator, gast.Call):
        for keyword in decorator.keywords:
            if keyword.arg in ("static_argnames", "static_argnums"):
                value = ast.literal_eval(gast.unparse(keyword.value))
                options[keyword.arg] = (value,) if isinstance(value, (str, int)) else \
                    tuple(value)
    return options


def _static_names(node: gast.FunctionDef, options: dict) -> tuple:
    params = [a.id for a in node.args.posonlyargs + node.args.args]
    names = set(options.get("static_argnames", ()))
    names |= {params[i] for i in options.get("static_argnums", ()) if -len(params) <= i <
              len(params)}
    return tuple(sorted(names))


def read_source(path: str) -> str:
    """The text of the source file at ``path``, decoded as Python decodes it: a PEP 263
    coding declaration or a UTF-8 BOM, else UTF-8 (`tokenize.open`).  Raises
    `UnicodeDecodeError` for bytes the encoding cannot decode and `SyntaxError` for an
    unknown or contradictory declaration, as the import would."""
    with tokenize.open(path) as handle:
        return handle.read()


def transpile_file(path: str) -> str | None:
    """The generated module for ``path``, or None when it has no jit_ps function."""
    return run_nested(_transpile_text, path, read_source(path))


def _transpile_text(path: str, text: str) -> str | None:
    module = gast.parse(text)
    # what the generated module copies: the decorator reads the same from the file's
    # outline, so both hash the same imports
    imports = gast.Module(effective_imports(module.body, text), [])
    module_name = os.path.splitext(os.path.basename(path))[0]
    functions = []
    for node, source in module_function_sources(path, text, module):
        options = next((o for o in map(_decorator_options, node.decorator_list)
                        if o is not None), None)
        if options is None:
            continue
        functions.append(transpile_function(source, module_ast=module,
                                            module_name=module_name, imports=imports,
                                            static_argnames=_static_names(node, options)))
    if not functions:
        return None
    return generated_module(path, functions, imports)


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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="psc-transpile", description=__doc__.split("\n")[0])
    parser.add_argument("sources", nargs="+", metavar="SRC", help="files or directories")
    parser.add_argument("-o", "--output", required=True, metavar="OUTDIR")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a generated module is stale or missing")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    stale = []
    pairs = list(_sources(args.sources))
    targets: dict[str, str] = {}
    for source, relative in pairs:
        if relative in targets and os.path.abspath(targets[relative]) != os.path.abspath(source):
            print(f"psc-transpile: {targets[relative]} and {source} would both write "
                  f"{os.path.join(args.output, relative)}; transpile them separately",
                  file=sys.stderr)
            return 2
        targets[relative] = source
    failed = False
    for source, relative in pairs:
        # A file that cannot be transpiled is reported and skipped; the others still are.
        try:
            generated = transpile_file(source)
        except PSCError as err:
            print(err if err.location is not None else f"{source}: {err}", file=sys.stderr)
            failed = True
            continue
        except (OSError, SyntaxError, UnicodeDecodeError) as err:
            print(_file_error(source, err), file=sys.stderr)
            failed = True
            continue
        if generated is None:
            continue
        target = os.path.join(args.output, relative)
        if args.check:
            try:
                with open(target, encoding="utf-8") as handle:
                    current = handle.read()
            except OSError:
                current = None
            if current != generated:
                stale.append((target, "missing" if current is None else "stale"))
            continue
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(generated)
        print(f"wrote {target}")
    for target, why in stale:
        print(f"{why}: {target}", file=sys.stderr)
    return 2 if failed else 1 if stale else 0


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
