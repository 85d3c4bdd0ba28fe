"""What generated code calls to reach user code and containers: user-function inlining
(`transpiled`) and functional element reads and updates (`getitem`, `setitem`)."""
from __future__ import annotations

import copy
import functools
import inspect
import operator
import threading
import types

import numpy as np

from .argument_updates import ArgumentUpdates, rebinds_only
from .context import current_builder
from .errors import PSCImpureCallError, PSCSyntaxError, PSCTypeError, PSCUnsupportedCallError
from .ir import Value
from .purity import impurity, is_known_pure
from .translation import has_traced, is_numpy_function, lookup_rule, translate, translate_numpy

_transpile_hook = None        # set by the transpiler: python function -> build function
_purity_hook = None           # set by the transpiler: raises if a helper's body is impure
GENERATED_PREFIX = "<psc-generated"   # file name prefix of code compiled from generated text
_active = threading.local()   # functions being inlined now (recursion check)


def set_transpile_hook(hook) -> None:
    """Install the function that turns a Python function into its build function."""
    global _transpile_hook
    _transpile_hook = hook


def set_purity_hook(hook) -> None:
    """Install the check a Python helper called with static arguments gets before it runs
    as plain Python (its body must not be impure either: it runs once, while building)."""
    global _purity_hook
    _purity_hook = hook


def transpiled(fn):
    """``fn`` as PSC code calls it: inlined into the computation being built.

    A registered rule applies the rule; a jit_ps function or a plain Python function (or
    method, or ``functools.partial`` of one) is built in place, transpiled on first use;
    a class is called as it is (it builds containers).  A plain function called with only
    static arguments just runs.  Anything else given a traced argument is an error: it is
    neither a primitive nor source the transpiler can read.  An impure callable
    (`runtime.purity`: ``np.random.*``, ``time.time``, a ``Generator``'s methods...) is
    refused whatever its arguments: it would run once, while the program is built.
    """
    _refuse_impure(fn)
    if lookup_rule(fn) is not None:
        # NumPy functions give strong results; builtins (abs, divmod) keep Python's types.
        apply = translate_numpy if is_numpy_function(fn) else translate
        return lambda *args, **kwargs: apply(current_builder(), fn, *args, **kwargs)
    if getattr(fn, "__psc_mirror_of__", None) is not None or \
            getattr(fn, "__psc_primitive__", False):
        return fn   # a NumPy mirror function or a primitive (grad(f)...) stages by itself
    code = getattr(fn, "__code__", None)
    if code is not None and code.co_filename.startswith(GENERATED_PREFIX):
        return fn   # defined in generated code (a body function): already builder code
    if isinstance(fn, functools.partial):
        inner = transpiled(fn.func)
        return lambda *args, **kwargs: inner(*fn.args, *args, **{**fn.keywords, **kwargs})
    if isinstance(fn, types.MethodType):
        inner = transpiled(fn.__func__)
        return lambda *args, **kwargs: inner(fn.__self__, *args, **kwargs)
    if isinstance(fn, type):
        return fn
    build = getattr(fn, "__psc_build__", None)
    if build is not None:
        return _inlined(fn, build, plain=None)
    if isinstance(fn, types.FunctionType) and _transpile_hook is not None:
        return _inlined(fn, lambda b, *a, **k: _transpile_hook(fn)(b, *a, **k), plain=fn)
    return _opaque(fn)


def checked(fn):
    """``fn`` itself, once it is known not to be impure: generated code calls a method of
    a static argument or of a global (``rng.normal(...)``) through it, since which object
    it is only shows at build time."""
    _refuse_impure(fn)
    return fn


def _refuse_impure(fn) -> None:
    found = impurity(fn)
    if found is not None:
        why, hint = found
        raise current_builder().error(
            PSCImpureCallError, f"{why}: PSC functions run once, while their program is "
            "built, so the call would not happen again on later calls", hint)


def _opaque(fn):
    def call(*args, **kwargs):
        if not is_known_pure(fn):
            name = getattr(fn, "__qualname__", None) or repr(fn)
            raise current_builder().error(
                PSCImpureCallError, f"{name} is not known to be pure: it would run once, "
                "while the program is built, and its result would be reused by every "
                "later call", "if its result depends on its arguments alone, mark it with "
                "transpiler.pure; otherwise call it outside the jit_ps function and pass "
                "the result in")
        if has_traced((args, kwargs)):
            name = getattr(fn, "__qualname__", None) or repr(fn)
            raise current_builder().error(
                PSCUnsupportedCallError, f"{name} is neither Python source the transpiler "
                "can read nor a function with a translation rule, so it cannot take "
                "traced arrays", "register a rule with register_translation_rule, or "
                "write it with NumPy")
        return fn(*args, **kwargs)
    return call


def _inlined(fn, build, plain):
    def call(*args, **kwargs):
        result = with_updates(*args, **kwargs)
        if type(result) is ArgumentUpdates:
            _refuse_unfollowed_updates(fn, result)
        return result

    def with_updates(*args, **kwargs):
        if plain is not None and not has_traced((args, kwargs)):
            if _purity_hook is not None:
                _purity_hook(plain)
            return plain(*args, **kwargs)
        active = _active.__dict__.setdefault("functions", [])
        if fn in active:
            name = getattr(fn, "__qualname__", repr(fn))
            raise current_builder().error(
                PSCSyntaxError, f"{name} calls itself: recursion is not supported in PSC "
                "functions", "write the recursion as a loop")
        active.append(fn)
        try:
            return build(current_builder(), *args, **kwargs)
        finally:
            active.pop()
    call.with_updates = with_updates
    return call


def _refuse_unfollowed_updates(fn, result: ArgumentUpdates) -> None:
    """A helper updated its parameters in place where the call site cannot take the new
    values back (the front end rewrites only calls it knows update, by name)."""
    name = getattr(fn, "__qualname__", repr(fn))
    names = ", ".join(repr(n) for n in result.updates)
    raise current_builder().error(
        PSCSyntaxError, f"{name} updates its parameter(s) {names} in place, which PSC "
        "follows only for a call by the helper's name as a statement (`helper(x)`) or as "
        "the right side of an assignment to a name (`y = helper(x)`); not through a "
        "transform (grad, vmap...), a variable holding the function, or a method",
        "call the helper by its name in one of those forms, or have it return the new "
        "array instead of updating it")


def updated_arguments(fn, names, /, *args, **kwargs):
    """``helper(*args, **kwargs)`` as a statement, where the helper ``fn`` updates its
    parameters ``names`` in place: their final values, in that order, for the caller to
    rebind the names it passed (see `result_and_updated_arguments`)."""
    return result_and_updated_arguments(fn, names, *args, **kwargs)[1]


def result_and_updated_arguments(fn, names, /, *args, **kwargs):
    """``(helper(*args, **kwargs), final values of its parameters names)``.  A helper run
    as Python (static arguments only) updated them itself: their values are the
    arguments passed.  An augmented assignment (``n += 1``) to a parameter bound to a
    scalar rebinds it in the helper only, as in Python: the caller keeps its value."""
    inner = transpiled(fn)
    call = getattr(inner, "with_updates", inner)
    result = call(*args, **kwargs)
    passed = _bound_arguments(fn, args, kwargs)
    if type(result) is not ArgumentUpdates:
        return result, tuple(passed[n] for n in names)
    # (updates of parameters not in ``names`` went to temporaries the caller passed)
    values = []
    for name in names:
        original = passed[name]
        if name not in result.updates or \
                rebinds_only(original, name in result.augmented):
            values.append(original)
        else:
            values.append(result.updates[name])
    return result.value, tuple(values)


def _bound_arguments(fn, args, kwargs) -> dict:
    target = getattr(fn, "__wrapped__", fn)
    bound = inspect.signature(target).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.arguments


def getitem(container, index):
    """``container[index]``; a traced index into a static container (a NumPy constant, a
    list of same-shaped arrays) gathers from the container lifted to a constant array."""
    if has_traced(index) and not isinstance(container, Value):
        return translate(current_builder(), operator.getitem, container, index)
    return container[index]


def setitem(container, index, value, mode: str | None = None):
    """``container`` with ``container[index]`` replaced (``mode``: combined as ``op=``).

    Static NumPy arrays, lists and dicts are copied and updated as Python would; traced
    arrays (or static ones receiving a traced value) use the indexing rule.
    """
    if isinstance(container, Value) or isinstance(container, np.ndarray) and \
            has_traced((index, value)):
        return translate(current_builder(), operator.setitem, container, index, value,
                         mode or "set")
    if has_traced(index) and isinstance(container, (list, tuple, dict)):
        raise current_builder().error(
            PSCTypeError, "a traced index cannot select an element of a Python "
            f"{type(container).__name__}", "index an array instead, or use static_range")
    updated = copy.copy(container)
    if mode is not None:
        value = _AUGMENTED[mode](updated[index], value)
    updated[index] = value
    return updated


_AUGMENTED = {"add": operator.iadd, "sub": operator.isub, "mul": operator.imul,
              "truediv": operator.itruediv, "floordiv": operator.ifloordiv,
              "mod": operator.imod, "pow": operator.ipow, "and": operator.iand,
              "or": operator.ior, "xor": operator.ixor, "lshift": operator.ilshift,
              "rshift": operator.irshift}
