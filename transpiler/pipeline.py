"""The front end's data flow for one function: parse -> analyses -> checks -> rules.

`transpile_function` returns the rewritten gast FunctionDef; `emit` prints it.
"""
from __future__ import annotations

import dataclasses

import gast

from .analysis.activity import analyze_scopes, free_names
from .analysis.binding_time import analyze_binding_times
from .analysis.liveness import analyze_liveness
from .analysis.resolve import RuntimeResolver, StaticResolver, annotate_names
from .analysis.walk import walk
from .anno import Anno, setanno
from .checks import check_subset
from .rules import PIPELINE, REANALYZE
from .rules.base import RuleContext
from .source import FunctionSource


@dataclasses.dataclass
class TranspiledFunction:
    name: str                   # the user's function name
    source: FunctionSource
    node: gast.FunctionDef      # the build function
    builder_name: str
    free_names: frozenset       # module-level / closure names the function reads
    digest: str                 # FunctionSource.digest with the static argument names


def analyze(source: FunctionSource, function: gast.FunctionDef, *, resolver=None,
            module_ast=None, module_name: str = "__main__", static_argnames=()) -> None:
    """Run every analysis on ``function`` (annotations only)."""
    if resolver is None:
        resolver = StaticResolver(module_ast, module_name)
    scope = analyze_scopes(function)
    annotate_names(function, resolver)
    analyze_binding_times(function, set(static_argnames))
    analyze_liveness(function)
    for node in walk(function):
        if isinstance(node, gast.stmt):
            setanno(node, Anno.ORIGIN, source.location(node))
    return scope


def reanalyze(function: gast.FunctionDef) -> None:
    """Scopes, liveness and definedness again, after rules added statements.  Name
    resolution and binding times are not recomputed: nodes rules wrote have none, which
    the conversion rules read as "decide at build time"."""
    analyze_scopes(function)
    analyze_liveness(function)


def transpile_function(source: FunctionSource, *, resolver=None, module_ast=None,
                       module_name: str = "__main__", static_argnames=(),
                       runtime_alias: str = "psc") -> TranspiledFunction:
    function = source.parse()
    name = function.name   # before BuildFunction renames it
    analyze(source, function, resolver=resolver, module_ast=module_ast,
                    module_name=module_name, static_argnames=static_argnames)
    check_subset(source, function, static_argnames)
    context = RuleContext(source, runtime_alias)
    for rule in PIPELINE:
        if rule == REANALYZE:
            reanalyze(function)
        else:
            function = rule(context).visit(function)
    gast.fix_missing_locations(function)
    free = frozenset(free_names(function))
    return TranspiledFunction(name, source, function, context.builder_name, free,
                              source.digest(static_argnames))


def runtime_resolver(fn) -> RuntimeResolver:
    closure = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:   # an empty cell: defined later in the enclosing function
                pass
    return RuntimeResolver(fn.__globals__, closure)
