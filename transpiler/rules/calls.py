"""Calls to user functions go through `runtime.transpiled`, which inlines their build code.

Calling a plain Python helper with traced arrays would run its *source* semantics on builder
values, where its loops and branches cannot work; ``psc.transpiled(helper)`` transpiles it
on first use and builds its body into the caller's computation.  Calls that already mean
the right thing stay as written: NumPy (generated code binds ``np`` to the NumPy mirror),
builtins (but those with a translation rule, `runtime.numpy_rules.builtins`, called with a
traced argument, and ``max``/``min``/``sum`` always: ``max(a, b)`` compares with ``>``,
which a traced value cannot answer in Python), other modules (``math``, static arguments only), the explicit primitives,
methods, and functions defined inside the PSC function itself (their bodies are part of
the code being transpiled).  A call into another module (``math.sqrt(n)``) stays as written
when binding-time analysis finds its arguments static, and goes through
``psc.transpiled`` (which rejects it clearly if it cannot be staged) when one is traced,
or when the module is not on `runtime.purity`'s allow-list (``math``...).  A method of a
static argument or of a global (``rng.normal(...)``) becomes ``psc.checked(rng.normal)(...)``,
which refuses it at build time if it is impure (a NumPy ``Generator``'s, ``random``'s).

>>> from transpiler.doctest_helpers import demo
>>> print(demo(TranspiledCalls, '''
... def loss(params, x, objective):
...     def square(v):
...         return v * v
...     y = helper(np.tanh(x)) + square(x)
...     return objective(y).sum() + len(params)
... ''', static_argnames=("objective",)))
def loss(params, x, objective):
<BLANKLINE>
    def square(v):
        return v * v
    y = psc.transpiled(helper)(np.tanh(x)) + square(x)
    return psc.transpiled(objective)(y).sum() + len(params)
"""
from __future__ import annotations

import gast

from runtime import lookup_rule
from runtime.purity import PURE_MODULES

from ..analysis.activity import scope_of
from ..anno import Anno, BindingTime, getanno
from ..analysis.resolve import Kind, resolution_of
from ..analysis.walk import walk
from .base import Rule, runtime_call

_CALL_THROUGH = {Kind.USER_FUNCTION, Kind.UNKNOWN, Kind.RULE}
# Builtins that iterate their argument: a list or generator of traced values looks static
# to binding-time analysis (``values.append(x)`` does not make ``values`` traced).
_ITERATING_BUILTINS = frozenset({"builtins.max", "builtins.min", "builtins.sum"})


class TranspiledCalls(Rule):
    """``helper(x)`` -> ``psc.transpiled(helper)(x)`` for user and unknown callables."""

    rewrites = frozenset({gast.Call})
    tracks_rewrites = True

    @staticmethod
    def has_work(function) -> bool:
        """Is there a call this rule may rewrite?  One walk, much cheaper than the
        transformer's pass: the common NumPy program calls only NumPy and primitives."""
        return any(isinstance(node, gast.Call) and _may_rewrite(node.func)
                   for node in walk(function))

    def __init__(self, context):
        super().__init__(context)
        self.scopes = []

    def visit_FunctionDef(self, node):
        self.scopes.append(scope_of(node))
        self.generic_visit(node)
        self.scopes.pop()
        return node

    visit_Lambda = visit_FunctionDef
    # comprehensions have scopes too: `[fn(x) for fn in fns]` calls a local
    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_FunctionDef

    def _needs_transpiling(self, func) -> bool:
        resolved = resolution_of(func)
        if resolved is not None:
            if resolved.kind is Kind.MODULE:   # math.sqrt(n): fine on static arguments
                return lookup_rule(resolved.qualname) is not None or self._traced_args \
                    or _unvetted_module(resolved.qualname)
            if resolved.kind is Kind.BUILTIN:   # max(a, b) with traced a: Python's max
                return lookup_rule(resolved.qualname) is not None and (
                    self._traced_args or resolved.qualname in _ITERATING_BUILTINS)
            return resolved.kind in _CALL_THROUGH
        if isinstance(func, gast.Name) and self.scopes[-1].is_local(func.id):
            # a local holding a function (a static argument): unless defined right here
            return not self.scopes[-1].is_local_function(func.id)
        return False   # a method, a call's result, or a name a rule wrote (slice, psc...)

    def _method_of_outside_object(self, func) -> bool:
        """``rng.normal`` / ``CONFIG.get``: a method of a static argument or of a global,
        whose purity only shows at build time (`runtime.calls.checked`)."""
        if not (isinstance(func, gast.Attribute) and resolution_of(func) is None and
                isinstance(func.value, gast.Name)):
            return False
        owner = func.value
        resolved = resolution_of(owner)
        if resolved is not None:
            return resolved.kind in (Kind.VALUE, Kind.UNKNOWN)
        shadowed = any(owner.id in s.parameters or owner.id in s.bound
                       for s in self.scopes[1:])
        return owner.id in self.scopes[0].parameters and not shadowed and \
            getanno(owner, Anno.BINDING_TIME) is BindingTime.STATIC

    def visit_Call(self, node):
        self.generic_visit(node)
        self._traced_args = any(
            getanno(arg, Anno.BINDING_TIME) is BindingTime.TRACED
            for arg in [*node.args, *(k.value for k in node.keywords)])
        if self._needs_transpiling(node.func):
            node.func = runtime_call(self.context.runtime_alias, "transpiled", node.func)
            self.rewrote_something()
        elif self._method_of_outside_object(node.func):
            node.func = runtime_call(self.context.runtime_alias, "checked", node.func)
            self.rewrote_something()
        return node


def _may_rewrite(func) -> bool:
    """Could `TranspiledCalls` rewrite a call of ``func``?  Over-approximates
    `_needs_transpiling` and `_method_of_outside_object` from the annotations alone: a
    resolved callee of a kind that may go through the runtime (a builtin only if it has
    a translation rule), a name without a resolution (a local), a method of a name."""
    resolved = resolution_of(func)
    if resolved is None:
        return isinstance(func, gast.Name) or (isinstance(func, gast.Attribute) and
                                               isinstance(func.value, gast.Name))
    if resolved.kind is Kind.BUILTIN:
        return lookup_rule(resolved.qualname) is not None
    return resolved.kind is Kind.MODULE or resolved.kind in _CALL_THROUGH


def _unvetted_module(qualname: str) -> bool:
    """A function of a module not on `runtime.purity`'s allow-list: `runtime.transpiled`
    inlines it if it is Python source, and refuses it if it is opaque and not marked
    pure (a static call of it would run once, while the program is built)."""
    return qualname.split(".")[0] not in PURE_MODULES
