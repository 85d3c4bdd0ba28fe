"""Calls to user functions go through `runtime.transpiled`, which inlines their build code.

Calling a plain Python helper with traced arrays would run its *source* semantics on builder
values, where its loops and branches cannot work; ``psc.transpiled(helper)`` transpiles it
on first use and builds its body into the caller's computation.  Calls that already mean
the right thing stay as written: NumPy (generated code binds ``np`` to the NumPy mirror),
builtins, other modules (``math``, static arguments only), the explicit primitives,
methods, and functions defined inside the PSC function itself (their bodies are part of
the code being transpiled).  A call into another module (``math.sqrt(n)``) stays as written
when binding-time analysis finds its arguments static, and goes through
``psc.transpiled`` (which rejects it clearly if it cannot be staged) when one is traced.

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

from ..analysis.activity import scope_of
from ..anno import Anno, BindingTime, getanno
from ..analysis.resolve import Kind, resolution_of
from .base import Rule, runtime_call

_CALL_THROUGH = {Kind.USER_FUNCTION, Kind.UNKNOWN, Kind.RULE}


class TranspiledCalls(Rule):
    """``helper(x)`` -> ``psc.transpiled(helper)(x)`` for user and unknown callables."""

    rewrites = frozenset({gast.Call})

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
                return lookup_rule(resolved.qualname) is not None or self._traced_args
            return resolved.kind in _CALL_THROUGH
        if isinstance(func, gast.Name) and self.scopes[-1].is_local(func.id):
            # a local holding a function (a static argument): unless defined right here
            return not self.scopes[-1].is_local_function(func.id)
        return False   # a method, a call's result, or a name a rule wrote (slice, psc...)

    def visit_Call(self, node):
        self.generic_visit(node)
        self._traced_args = any(
            getanno(arg, Anno.BINDING_TIME) is BindingTime.TRACED
            for arg in [*node.args, *(k.value for k in node.keywords)])
        if self._needs_transpiling(node.func):
            node.func = runtime_call(self.context.runtime_alias, "transpiled", node.func)
        return node
