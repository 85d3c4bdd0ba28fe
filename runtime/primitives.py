"""What generated code calls besides NumPy: user-function inlining, functional element
updates, and the explicit control-flow primitives with JAX's signatures.

Outside a build (plain Python calling the same function, as the tests' oracle does) every
primitive has its reference meaning (`runtime.reference`); inside a build it stages.
"""
from __future__ import annotations

import copy
import functools
import operator
import threading
import types

import numpy as np
from jax import tree_util

from . import reference
from .context import current_builder, has_builder
from .errors import PSCSyntaxError, PSCTypeError, PSCUnsupportedCallError
from .ir import Value
from .translation import has_traced, is_numpy_function, lookup_rule, translate, translate_numpy

_transpile_hook = None        # set by the transpiler: python function -> build function
GENERATED_PREFIX = "<psc-generated"   # file name prefix of code compiled from generated text
_active = threading.local()   # functions being inlined now (recursion check)


def set_transpile_hook(hook) -> None:
    """Install the function that turns a Python function into its build function."""
    global _transpile_hook
    _transpile_hook = hook


def _primitive(fn):
    fn.__psc_primitive__ = True
    return fn


def transpiled(fn):
    """``fn`` as PSC code calls it: inlined into the computation being built.

    A registered rule applies the rule; a jit_ps function or a plain Python function (or
    method, or ``functools.partial`` of one) is built in place, transpiled on first use;
    a class is called as it is (it builds containers).  A plain function called with only
    static arguments just runs.  Anything else given a traced argument is an error: it is
    neither a primitive nor source the transpiler can read.
    """
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


def _opaque(fn):
    def call(*args, **kwargs):
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
        if plain is not None and not has_traced((args, kwargs)):
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
    return call


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


# --- explicit control flow --------------------------------------------------------------

def _as_state(b, tree, like=None):
    """Loop state leaves as Values: Python numbers become weak constants (or take the dtype
    of the loop state they stand for)."""
    leaves, treedef = tree_util.tree_flatten(tree)
    like_leaves = tree_util.tree_leaves(like) if like is not None else [None] * len(leaves)
    values = []
    for leaf, model in zip(leaves, like_leaves):
        if isinstance(leaf, Value):
            values.append(leaf)
        elif isinstance(model, Value) and np.ndim(leaf) == 0:
            values.append(b.constant(np.asarray(leaf, model.dtype)))
            values[-1].weak = model.weak
        else:
            values.append(b.constant(leaf) if type(leaf) in (bool, int, float, complex)
                          else b.constant(np.asarray(leaf)))
    return tree_util.tree_unflatten(treedef, values)


def _predicate(b, value, what: str) -> Value:
    if not isinstance(value, Value):
        return b.constant(bool(value))
    if value.shape != ():
        raise b.error(PSCTypeError, f"{what} must be a scalar, got shape {value.shape}",
                      "reduce it first, e.g. with .any() or .all()")
    from .control_flow import truth
    return truth(value)


@_primitive
def while_loop(cond_fun, body_fun, init_val):
    """``lax.while_loop``: repeat ``body_fun`` while ``cond_fun`` holds, on a fixed-type
    state.  Reference: `runtime.reference.while_loop`."""
    if not has_builder():
        return reference.while_loop(cond_fun, body_fun, init_val)
    b = current_builder()
    init = _as_state(b, init_val)
    cond_call, body_call = transpiled(cond_fun), transpiled(body_fun)

    def cond(sub, state):
        return _predicate(sub, cond_call(state), "while_loop condition")

    def body(sub, state):
        return _as_state(sub, body_call(state), like=state)
    return b.while_loop(cond, body, init)


@_primitive
def fori_loop(lower, upper, body_fun, init_val):
    """``lax.fori_loop``: ``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``.
    Reference: `runtime.reference.fori_loop`."""
    if not has_builder():
        return reference.fori_loop(lower, upper, body_fun, init_val)
    b = current_builder()
    start, stop = _as_state(b, (lower, upper))
    dtype = np.result_type(start.dtype, stop.dtype)
    start, stop = b.convert(start, dtype), b.convert(stop, dtype)
    body_call = transpiled(body_fun)
    one = b.constant(np.ones((), dtype))

    def cond(sub, state):
        return sub.lt(state[0], stop)

    def body(sub, state):
        i, val = state
        return sub.add(i, one), _as_state(sub, body_call(i, val), like=val)
    trip_count = None if isinstance(lower, Value) or isinstance(upper, Value) else \
        max(int(upper) - int(lower), 0)
    _, result = b.while_loop(cond, body, (start, _as_state(b, init_val)),
                             trip_count=trip_count)
    return result


@_primitive
def cond(pred, true_fun, false_fun, *operands):
    """``lax.cond``: ``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``; a
    traced ``pred`` builds both branches.  Reference: `runtime.reference.cond`."""
    if not has_builder() or not isinstance(pred, Value):
        return reference.cond(pred, true_fun, false_fun, *operands)
    b = current_builder()
    calls = [transpiled(true_fun), transpiled(false_fun)]
    return b.conditional(_predicate(b, pred, "cond predicate"),
                         [lambda sub, ops, f=f: _as_state(sub, f(*ops)) for f in calls],
                         _as_state(b, operands))


@_primitive
def switch(index, branches, *operands):
    """``lax.switch``: ``branches[clamp(index)](*operands)``.
    Reference: `runtime.reference.switch`."""
    if not has_builder() or not isinstance(index, Value):
        return reference.switch(index, branches, *operands)
    b = current_builder()
    calls = [transpiled(f) for f in branches]
    return b.conditional(index, [lambda sub, ops, f=f: _as_state(sub, f(*ops))
                                 for f in calls], _as_state(b, operands))


@_primitive
def static_range(*args):
    """``range`` that the transpiler always unrolls (the index is static in the body)."""
    return range(*args)
