"""The translation-rule registry: NumPy functions and Python operators -> builder calls.

A rule is ``rule(b, *args, **kwargs)``: the builder first, then the call's arguments, traced
ones as builder `Value`s and static ones as Python/NumPy values.  Rules are keyed by
*qualified name* (``"numpy.tanh"``, ``"operator.add"``, ``"numpy.ndarray.sum"``) so the CLI
can resolve a call statically without importing user code, and by *object* (``np.tanh``) so
the decorator can look up what a name is bound to at run time.  As in the JAX paper::

    def xla_sinh(b, x):
        return b.div(b.sub(b.exp(x), b.exp(b.neg(x))), b.constant(2, dtype=x.dtype))
    register_translation_rule(np.sinh, xla_sinh)

`translate(b, fn, *args)` is what generated code calls: with no traced value among the
arguments it simply calls ``fn`` (the result is static); otherwise it applies the rule.

Rules give a *weak* result when every operand is weak (a Python number, `Value.weak`): that
is what Python's own operators do (``s * 2``, ``-s``, ``abs(s)`` stay Python numbers).  A
NumPy *function* returns a NumPy value, strong whatever its operands (``np.abs(2.0)`` is an
``np.float64``), so calls of NumPy functions go through `translate_numpy`.
"""
from __future__ import annotations

import importlib
import sys
from typing import Any, Callable

from jax import tree_util

from .checks import is_active as _checking, nan_guard
from .errors import PSCUnsupportedCallError
from .ir import Value

Rule = Callable[..., Any]
_RULES: dict[str, Rule] = {}
_NAME_OF_OBJECT: dict[int, tuple[object, str]] = {}   # id -> (object kept alive, name)
_SEES_STATIC: set[str] = set()   # rules applied even when no argument is a traced leaf


# Rule modules of optional libraries (SciPy), imported on first need rather than with the
# runtime (``import scipy.linalg`` alone costs most of a second): once the program has
# imported the library, or when a name of it is asked for.
_LAZY_RULE_MODULES: dict[str, tuple[str, ...]] = {}


def register_lazy_rules(package: str, *modules: str) -> None:
    """Import the rule ``modules`` for ``package`` only when ``package`` is in use."""
    _LAZY_RULE_MODULES[package] = modules


def _load_lazy_rules(name: str | None = None, everything: bool = False) -> bool:
    """Import the pending rule modules whose package is imported (or named by ``name``)."""
    loaded = False
    for package in list(_LAZY_RULE_MODULES):
        if everything or package in sys.modules or \
                (name is not None and name.split(".")[0] == package):
            for module in _LAZY_RULE_MODULES.pop(package):
                importlib.import_module(module)
            loaded = True
    return loaded


def _name_of(fn) -> str | None:
    found = _NAME_OF_OBJECT.get(id(fn))
    if found is not None and found[0] is fn:
        return found[1]
    if _LAZY_RULE_MODULES and _load_lazy_rules():
        return _name_of(fn)
    return None


def _resolve_object(name: str):
    """The object a qualified name denotes (``"numpy.linalg.norm"``), or None."""
    parts = name.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        try:
            for attr in parts[split:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def register_translation_rule(fn, rule: Rule, *, name: str | None = None,
                              sees_static: bool = False) -> Rule:
    """Register ``rule`` for ``fn``: an object (``np.sinh``) or a qualified name string.

    An object registered without a ``name`` is also found by ``module.qualname`` when it
    has them, so a user-registered rule serves both the decorator and the CLI.
    ``sees_static``: `translate` applies the rule even when no argument is traced (the
    rule then computes the static result itself: ``max(v for v in values)`` passes a
    generator, whose traced items no tree walk can see).
    """
    if isinstance(fn, str):
        name, obj = fn, _resolve_object(fn)
    else:
        obj = fn
        name = name or _name_of(fn) or _default_name(fn)
    if name is not None:
        _RULES[name] = rule
    if obj is not None:
        if name is None:
            name = f"<object {id(obj)}>"
            _RULES[name] = rule
        _NAME_OF_OBJECT[id(obj)] = (obj, name)
    if sees_static:
        _SEES_STATIC.add(name)
    return rule


def _default_name(fn) -> str | None:
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if module and qualname and "<" not in qualname:
        return f"{module}.{qualname}"
    return None


def translation_rule(*names: str):
    """Decorator registering a rule under one or more qualified names."""
    def register(rule: Rule) -> Rule:
        for name in names:
            register_translation_rule(name, rule)
        return rule
    return register


def lookup_rule(fn) -> Rule | None:
    """The rule for an object or a qualified name, or None."""
    if isinstance(fn, str):
        rule = _RULES.get(fn)
        if rule is None and _LAZY_RULE_MODULES and _load_lazy_rules(fn):
            rule = _RULES.get(fn)
        return rule
    name = _name_of(fn)
    return _RULES.get(name) if name is not None else None


def qualified_name(fn) -> str | None:
    """The registered name of an object, or None when it has no rule."""
    return _name_of(fn)


def registered_names() -> list[str]:
    _load_lazy_rules(everything=True)
    return sorted(n for n in _RULES if not n.startswith("<"))


def has_traced(tree) -> bool:
    """True when ``tree`` (args, lists, dicts...) holds a builder `Value` (or another
    traced object: one whose type handles calls itself, see `translate`)."""
    return any(isinstance(leaf, Value) or hasattr(type(leaf), "__psc_translate__")
               for leaf in tree_util.tree_leaves(tree))


def _self_translating(tree):
    """The type of the first leaf of ``tree`` that translates calls itself, or None: like
    NumPy's ``__array_function__``, ``type.__psc_translate__(b, fn, args, kwargs)`` takes
    over any call it is an argument of (`runtime.numpy_rules.masked.Masked`, whose length is only known
    when the program runs)."""
    for leaf in tree_util.tree_leaves(tree):
        if hasattr(type(leaf), "__psc_translate__"):
            return type(leaf)
    return None


def translate(b, fn, *args, **kwargs):
    """Apply ``fn`` to ``args``: statically when nothing is traced, else through its rule."""
    if (fn if isinstance(fn, str) else _name_of(fn)) not in _SEES_STATIC and \
            not has_traced((args, kwargs)):
        return (_resolve_object(fn) if isinstance(fn, str) else fn)(*args, **kwargs)
    handler = _self_translating((args, kwargs))
    if handler is not None:
        return handler.__psc_translate__(b, fn, args, kwargs)
    rule = lookup_rule(fn)
    if rule is None:
        shown = qualified_name(fn) or _default_name(fn) or repr(fn)
        raise b.error(PSCUnsupportedCallError,
                      f"{shown} has no translation rule, so it cannot take traced arrays",
                      "use a supported NumPy function, or register a rule with "
                      "register_translation_rule")
    result = rule(b, *args, **kwargs)
    if _checking("nan"):   # opt-in run-time checks (runtime.checks)
        nan_guard(b, qualified_name(fn) or str(fn), args, kwargs, result)
    return result


def translate_numpy(b, fn, *args, **kwargs):
    """`translate` for a call of a NumPy function: its traced results are strong."""
    return strong(b, translate(b, fn, *args, **kwargs))


# Libraries whose functions return NumPy values (strong even for Python-scalar operands).
# SciPy needs no mirror module: a rule registered by qualified name ("scipy.special.erf")
# is also found by object, so `runtime.transpiled` applies it in the decorator and the CLI.
NUMPY_LIKE_PACKAGES = ("numpy.", "scipy.")


def is_numpy_function(fn) -> bool:
    """True for an object whose rule is registered under a ``numpy.`` or ``scipy.`` name."""
    name = fn if isinstance(fn, str) else qualified_name(fn)
    return name is not None and name.startswith(NUMPY_LIKE_PACKAGES)


def strong(b, tree):
    """``tree`` with each weak `Value` replaced by a strong copy, as a NumPy function turns
    Python scalars into NumPy scalars (``x_float32 * np.abs(2.0)`` is float64).  A copy, not
    the flag flipped in place: a rule may return one of its operands (``np.asarray(v)``),
    and ``v`` itself must stay weak."""
    def make_strong(leaf):
        if not (isinstance(leaf, Value) and leaf.weak):
            return leaf
        copy = b.broadcast_in_dim(leaf, leaf.shape, range(leaf.ndim))   # identity
        copy.weak = False
        return copy
    return tree_util.tree_map(make_strong, tree)
