"""Which calls a PSC function may make while its computation is built.

A PSC function runs once per signature, at build time, and its compiled program is reused:
a call with a side effect or a fresh result each time (``np.random.normal``, ``time.time``,
``print``) would happen once and be frozen into the program.  So a call is allowed when it
is a registered rule or primitive, a transpilable user function, or *known pure*: the
allow-list below (`is_known_pure`), or an object the user vouched for with `pure`.  Known
impure callables (`impurity`) are refused with a hint; so is an opaque callable that is in
neither list, since nothing says calling it once is the same as calling it every time.

The front end asks `impure_qualname` about names it resolves statically
(``transpiler/checks.py``); `runtime.calls` asks `impurity` about the objects it sees at
build time, for calls the static resolver could not classify.  This module imports nothing
of the project: both layers read it.
"""
from __future__ import annotations

import builtins
import functools
import types

# Modules whose functions touch the world outside the program or return a fresh value on
# each call: random numbers, clocks, the operating system, files, processes, the network.
IMPURE_MODULES = frozenset({
    "random", "secrets", "uuid", "time", "os", "io", "sys", "subprocess", "socket",
    "shutil", "tempfile", "pathlib", "glob", "threading", "multiprocessing", "signal",
    "logging", "select", "urllib", "http", "sqlite3", "pickle", "shelve", "requests"})
# Functions of otherwise pure modules that read a clock.
IMPURE_FUNCTIONS = frozenset({
    "datetime.datetime.now", "datetime.datetime.today", "datetime.datetime.utcnow",
    "datetime.date.today"})
IMPURE_BUILTINS = {
    "print": "print() does I/O",
    "input": "input() reads from the user",
    "open": "open() does file I/O",
    "breakpoint": "breakpoint() cannot stop a compiled program",
}
NUMPY_RANDOM = "numpy.random"

# Builtins that compute a value from their arguments and nothing else.
PURE_BUILTINS = frozenset({
    "abs", "all", "any", "ascii", "bin", "bool", "bytes", "callable", "chr", "complex",
    "dict", "divmod", "enumerate", "filter", "float", "format", "frozenset", "getattr",
    "hasattr", "hash", "hex", "id", "int", "isinstance", "issubclass", "iter", "len", "list",
    "map", "max", "min", "next", "oct", "ord", "pow", "range", "repr", "reversed", "round",
    "set", "slice", "sorted", "str", "sum", "tuple", "type", "zip", "object", "super",
    "property", "staticmethod", "classmethod", "vars", "dir", "memoryview", "bytearray"})
# Modules (by top-level package) whose functions are pure; NumPy but for `numpy.random`.
PURE_MODULES = frozenset({
    "math", "cmath", "operator", "functools", "itertools", "numbers", "fractions",
    "decimal", "statistics", "string", "re", "collections", "dataclasses", "typing",
    "enum", "copy", "numpy", "ml_dtypes", "runtime", "transpiler", "builtins", "heapq",
    "bisect", "struct", "textwrap", "keyword", "abc", "contextlib", "inspect"})
# Methods that modify their object (lists, dicts, sets, arrays): refused on anything a PSC
# function does not own (an argument, a global, a closure variable).
MUTATING_METHODS = frozenset({
    "append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault",
    "popitem", "add", "discard", "intersection_update", "difference_update",
    "symmetric_difference_update", "reverse", "sort", "fill", "put", "resize",
    "partition", "setflags", "setfield", "__setitem__", "__delitem__", "__iadd__"})

RANDOM_HINT = ("a random draw made while building would be the same on every call: draw "
               "the numbers outside the jit_ps function and pass them in as an argument")
# `transpiler.random` (jax.random's functional PRNG) draws inside the compiled program: the
# equivalent of a NumPy or Python random function, by its name.
_RANDOM_EQUIVALENTS = {
    "normal": "random.normal(key, shape)", "standard_normal": "random.normal(key, shape)",
    "randn": "random.normal(key, shape)", "gauss": "random.normal(key)",
    "normalvariate": "random.normal(key)",
    "uniform": "random.uniform(key, shape, minval=low, maxval=high)",
    "rand": "random.uniform(key, shape)", "random": "random.uniform(key, shape)",
    "random_sample": "random.uniform(key, shape)",
    "integers": "random.randint(key, shape, low, high)",
    "randint": "random.randint(key, shape, low, high)",
    "choice": "random.choice(key, a, shape, replace=..., p=...)",
    "sample": "random.choice(key, a, (k,), replace=False)",
    "permutation": "random.permutation(key, x)", "shuffle": "random.permutation(key, x)",
    "permuted": "random.permutation(key, x, axis, independent=True)",
    "gumbel": "random.gumbel(key, shape)", "binomial": "random.bernoulli(key, p, shape)",
}


def random_hint(qualname: str) -> str:
    """The hint for a random draw in PSC code: its `transpiler.random` equivalent, with a
    key passed in, or drawing outside and passing the numbers in."""
    name = qualname.rsplit(".", 1)[-1]
    equivalent = _RANDOM_EQUIVALENTS.get(name, "random.uniform(key, shape), "
                                               "random.normal(key, shape), ...")
    return (f"draw inside the program with transpiler.random (jax.random's API): "
            f"`from transpiler import random`, then {equivalent} with a key passed in as an "
            "argument (random.PRNGKey(seed); key, subkey = random.split(key) for each "
            "further draw); or " + RANDOM_HINT.split(": ", 1)[1])
_IO_HINT = ("it would run once, while the program is built: call it outside the jit_ps "
            "function (return the value and use it there)")
_PRINT_HINT = ("use transpiler.debug_print(fmt, *args), which prints on every call from "
               "inside the compiled program (as jax.debug.print), or return the value and "
               "print it outside the jit_ps function")

_marked: dict[int, object] = {}   # id -> object marked pure that cannot take an attribute


def pure(fn):
    """Mark ``fn`` as pure: PSC functions may call it while building, as Python.

    Use it as a decorator, or on an object you did not write (``pure(scipy.special.gamma)``);
    returns ``fn``.  The call happens once per compiled signature, and its result is a
    build-time constant: only mark functions whose result depends on their arguments alone.
    A marked Python function is still transpiled when it is given traced arrays."""
    try:
        fn.__psc_pure__ = True
    except (AttributeError, TypeError):   # builtins, ufuncs, bound methods
        _marked[id(fn)] = fn
    return fn


def is_marked_pure(fn) -> bool:
    if getattr(fn, "__psc_pure__", False) is True:
        return True
    return _marked.get(id(fn)) is fn


def impure_qualname(qualname: str | None) -> tuple[str, str] | None:
    """(why, hint) when the function named ``qualname`` (``numpy.random.normal``,
    ``builtins.print``, ``time.time``) is impure; None otherwise."""
    if not qualname:
        return None
    root = qualname.split(".")[0]
    if qualname == NUMPY_RANDOM or qualname.startswith(NUMPY_RANDOM + "."):
        return (f"{_short(qualname)} draws random numbers", random_hint(qualname))
    if root == "builtins":
        why = IMPURE_BUILTINS.get(qualname[len("builtins."):])
        if why is not None:
            return why, (_PRINT_HINT if qualname == "builtins.print" else _IO_HINT)
        return None
    if root in ("random", "secrets", "uuid"):
        return (f"{qualname} draws random numbers", random_hint(qualname))
    if root == "time" or qualname in IMPURE_FUNCTIONS:
        return (f"{qualname} reads a clock", _IO_HINT)
    if root in IMPURE_MODULES:
        return (f"{qualname} has side effects (module {root})", _IO_HINT)
    return None


def _short(qualname: str) -> str:
    return "np." + qualname[len("numpy."):] if qualname.startswith("numpy.") else qualname


def _module_of(fn) -> str:
    """The module an object's behaviour comes from: a bound method's object's type's."""
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, type):   # a classmethod (datetime.datetime.now)
        return getattr(owner, "__module__", None) or ""
    if owner is not None and not isinstance(owner, types.ModuleType):
        return getattr(type(owner), "__module__", None) or ""
    module = getattr(fn, "__module__", None)
    if not isinstance(module, str):
        module = getattr(type(fn), "__module__", None) or ""
    if isinstance(owner, types.ModuleType):   # a builtin function of a C module (time.time)
        module = owner.__name__
    return module


# private modules shown by their public names
_PUBLIC_MODULES = {"numpy.random.mtrand": NUMPY_RANDOM, "numpy.random._generator": NUMPY_RANDOM,
                   "numpy.random.bit_generator": NUMPY_RANDOM, "_random": "random",
                   "posix": "os", "nt": "os", "_io": "io"}


def display_name(fn) -> str:
    """The name a user knows ``fn`` by: ``numpy.random.normal`` (the global RandomState's
    method), ``numpy.random.Generator.normal``, ``random.random``, ``time.time``."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if not isinstance(name, str):
        name = type(fn).__qualname__
    module = _module_of(fn)
    module = _PUBLIC_MODULES.get(module, module)
    owner = getattr(fn, "__self__", None)
    if owner is not None and not isinstance(owner, types.ModuleType):
        short = getattr(fn, "__name__", name)
        if isinstance(owner, type):
            name = f"{owner.__qualname__}.{short}"
        elif owner is _global_instance(module):
            name = short
        else:
            name = f"{type(owner).__qualname__}.{short}"
        if type(owner).__qualname__ == "Random" and module == "random":
            module = "random"
    return f"{module}.{name}" if module and module != "builtins" else name


def _global_instance(module: str):
    """The hidden instance whose methods a module exports as functions (``random.random``
    is ``random._inst.random``; ``np.random.normal`` the global RandomState's)."""
    if module == "random":
        import random
        return getattr(random, "_inst", None)
    if module == NUMPY_RANDOM:
        import numpy.random.mtrand as mtrand
        return getattr(mtrand, "_rand", None)
    return None


def impurity(fn) -> tuple[str, str] | None:
    """(why, hint) when calling object ``fn`` while building is impure; None otherwise."""
    if is_marked_pure(fn):
        return None
    mirrored = getattr(fn, "__psc_mirror_of__", None)
    if mirrored is not None:
        fn = mirrored
    if isinstance(fn, functools.partial):
        return impurity(fn.func)
    name = getattr(fn, "__name__", None)
    if isinstance(name, str) and getattr(builtins, name, None) is fn:
        return impure_qualname(f"builtins.{name}")
    module = _module_of(fn)
    if module == NUMPY_RANDOM or module.startswith(NUMPY_RANDOM + "."):
        return (f"{_short(display_name(fn))} draws random numbers",
                random_hint(display_name(fn)))
    root = module.split(".")[0]
    if root in ("random", "_random", "secrets", "uuid"):
        return (f"{display_name(fn)} draws random numbers", random_hint(display_name(fn)))
    if root == "time" or display_name(fn) in IMPURE_FUNCTIONS:
        return (f"{display_name(fn)} reads a clock", _IO_HINT)
    if root in IMPURE_MODULES or root in ("posix", "nt", "_io", "_thread", "_socket"):
        return (f"{display_name(fn)} has side effects", _IO_HINT)
    return None


def is_known_pure(fn) -> bool:
    """Is ``fn`` on the allow-list (or marked with `pure`)?"""
    if is_marked_pure(fn):
        return True
    if impurity(fn) is not None:
        return False
    if isinstance(fn, functools.partial):
        return is_known_pure(fn.func)
    owner = getattr(fn, "__self__", None)
    name = getattr(fn, "__name__", None)
    if owner is not None and not isinstance(owner, types.ModuleType):
        # a method: pure unless it modifies its object (which must then be a local: the
        # front end refuses mutating methods on arguments and globals)
        return _module_of(fn).split(".")[0] in PURE_MODULES
    if getattr(builtins, name or "", None) is fn:
        return name in PURE_BUILTINS
    return _module_of(fn).split(".")[0] in PURE_MODULES
