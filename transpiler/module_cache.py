"""Generated modules kept on disk (`runtime.disk_cache`): the decorator transpiles a
function once per change of what its generated text depends on, not once per process.

An entry is the module text `generated_module` printed, sealed as ``psc-transpile``
writes it; it is used only when it passes the same test as a module on disk
(`emit.fileformat.records_function` with the function's current digest, and
`emit.fileformat.is_intact`).  The key (`ModuleKey`) holds everything the text depends on:

* the function's `FunctionSource.digest` (the transpiler's version, the function's text
  and position, its static argument names, its module's imports), its file and name;
* the transpiler's own code (`toolchain_stamp`: each source file of `transpiler/` and
  `emit/` by size and modification time), so that an edited or upgraded transpiler
  never serves text an older one generated (the version number alone does not change
  between a developer's edits);
* what its free names denote *now* (`dependencies`): the transpile resolves each name
  from the live globals and closure (a NumPy function, a primitive, a user function, a
  value...), and rewrites a call of a user function that updates its arguments in place,
  as that function's code says; so the resolution of every name the function's code
  reads, and the code of the user functions it may call (transitively), are part of it.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import types

from emit.fileformat import is_intact, records_function
from runtime.disk_cache import DiskStore

from .analysis.resolve import Kind, RuntimeResolver

STORE = DiskStore("modules")


@dataclasses.dataclass(frozen=True)
class ModuleKey:
    source_digest: str          # FunctionSource.digest(static names, module imports)
    file: str                   # the source file (its name is in the line comments)
    name: str                   # the function's name
    module_name: str            # fn.__module__
    dependencies: str           # `dependencies` of the function
    toolchain: str              # `toolchain_stamp()`: the transpiler code that wrote it


def module_key(fn, name: str, source_file: str, source_digest: str) -> ModuleKey:
    return ModuleKey(source_digest, source_file, name, fn.__module__, dependencies(fn),
                     toolchain_stamp())


_TOOLCHAIN_PACKAGES = ("transpiler", "emit")


@functools.cache
def toolchain_stamp() -> str:
    """SHA-256 over (path, size, mtime) of every Python file of the packages that
    generate module text; stat calls only (no reads), once per process."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    entries = []
    for package in _TOOLCHAIN_PACKAGES:
        for folder, subfolders, files in os.walk(os.path.join(root, package)):
            subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
            for file in sorted(f for f in files if f.endswith(".py")):
                path = os.path.join(folder, file)
                stat = os.stat(path)
                entries.append(f"{os.path.relpath(path, root)}:{stat.st_size}:"
                               f"{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(entries).encode()).hexdigest()


def load(key: ModuleKey) -> str | None:
    """The cached module text for ``key``, or None.  Text that does not record the
    function's digest or is not intact (which the store's checksum makes a bug, not a
    disk error) is removed and rebuilt, never used."""
    payload = STORE.get(key)
    if payload is None:
        return None
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        text = ""
    if records_function(text, key.name, key.source_digest) and is_intact(text):
        return text
    STORE.discard(key, "its module text does not match the function's digest")
    return None


def store(key: ModuleKey, text: str) -> None:
    STORE.put(key, text.encode("utf-8"))


# --- what the function's names denote -----------------------------------------------------

def dependencies(fn) -> str:
    """A digest of the resolution of every name ``fn``'s code reads (globals, closure,
    attribute names too: a superset), and of the code of each user function among them,
    transitively (which of its parameters it updates in place changes the caller's text).
    """
    lines, seen, pending = [], set(), [fn]
    while pending:
        current = pending.pop()
        code = getattr(current, "__code__", None)
        if code is None or code in seen:
            continue
        seen.add(code)
        resolver = _resolver_of(current)
        lines.append(f"def {code.co_qualname}: {_code_digest(code)}")
        for name in sorted(_names_read(code)):
            resolution = resolver.resolve(name)
            lines.append(f"  {name} {resolution.kind.value} {resolution.qualname}")
            if resolution.kind is Kind.USER_FUNCTION:
                helper = _live_value(resolver, name)
                if getattr(helper, "__psc_function__", False):
                    helper = helper.__wrapped__
                if isinstance(helper, types.FunctionType):
                    pending.append(helper)
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def _resolver_of(fn) -> RuntimeResolver:
    closure = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            closure[name] = cell.cell_contents
        except ValueError:   # an empty cell: not defined yet, as the transpile sees it
            pass
    return RuntimeResolver(fn.__globals__, closure)


def _live_value(resolver: RuntimeResolver, name: str):
    if name in resolver.closure:
        return resolver.closure[name]
    return resolver.globals.get(name)


def _names_read(code) -> set[str]:
    """The global, attribute and free-variable names of ``code`` and its nested code."""
    names, pending = set(), [code]
    while pending:
        current = pending.pop()
        names.update(current.co_names)
        names.update(current.co_freevars)
        pending.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    return names


def _code_digest(code) -> str:
    """A digest of what ``code`` does: its bytecode, names and constants (nested code
    included), independent of the process (no ids, sets in sorted order)."""
    digest = hashlib.sha256()
    pending = [code]
    while pending:
        current = pending.pop()
        digest.update(current.co_code)
        digest.update(repr((current.co_names, current.co_varnames, current.co_freevars,
                            current.co_cellvars, current.co_argcount,
                            current.co_kwonlyargcount, current.co_flags)).encode())
        for const in current.co_consts:
            if isinstance(const, types.CodeType):
                pending.append(const)
            else:
                digest.update(_const_text(const).encode())
    return digest.hexdigest()


def _const_text(const) -> str:
    if isinstance(const, frozenset):
        return "frozenset(" + ",".join(sorted(map(_const_text, const))) + ")"
    if isinstance(const, tuple):
        return "(" + ",".join(map(_const_text, const)) + ")"
    return f"{type(const).__name__}:{const!r}"
