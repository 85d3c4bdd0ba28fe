"""The front end's data flow for one function: parse -> analyses -> checks -> rules.

`transpile_function` returns the rewritten function (a `TranspiledFunction`);
`generated_module` has `emit` print the functions of one file as a module.
"""
from __future__ import annotations

import dataclasses
import os
import sys
import threading
import types
import weakref

import gast

from emit import emit_mapped_module, emit_module
from runtime.errors import PSCError, PSCSyntaxError, SourceLocation

from .analysis.activity import Scope, analyze_scopes, names_and_free_names
from .analysis.binding_time import analyze_binding_times
from .analysis.helper_updates import annotate_helper_updates
from .analysis.liveness import analyze_liveness
from .analysis.resolve import RuntimeResolver, StaticResolver, annotate_names
from .analysis.walk import fix_missing_locations, walk
from .anno import Anno, getanno, setanno
from .checks import check_subset
from .rules import PIPELINE, REANALYZE
from .rules.base import AttributeStore, RuleContext
from .source import FunctionSource, function_source
from .version import __version__


@dataclasses.dataclass
class TranspiledFunction:
    """A rewritten function, with what `emit.module.EmittableFunction` reads."""

    name: str                   # the user's function name
    source: FunctionSource
    node: gast.FunctionDef      # the build function
    free_names: frozenset       # module-level / closure names the function reads
    digest: str                 # FunctionSource.digest (static names, module imports)
    names: frozenset | None = None   # every Name id in `node` (which emit asks about)

    @property
    def source_file(self) -> str:
        return self.source.file

    @staticmethod
    def origin_line(statement) -> int | None:
        """The source line of the statement a statement of `node` comes from
        (`Anno.ORIGIN`), printed as its ``# file.py:LINE`` comment."""
        origin = getanno(statement, Anno.ORIGIN)
        return origin.line if origin is not None else None


def analyze(source: FunctionSource, function: gast.FunctionDef, *, resolver=None,
            module_ast=None, module_name: str = "__main__", static_argnames=()) -> Scope:
    """Run every analysis on ``function`` (annotations); returns the function's scope."""
    if resolver is None:
        resolver = StaticResolver(module_ast, module_name)
    _annotate_origins_and_types(source, function)
    scope = analyze_scopes(function)
    annotate_names(function, resolver)
    analyze_liveness(function)   # binding times read it: which loops stage
    analyze_binding_times(function, set(static_argnames))
    return scope


def _annotate_origins_and_types(source: FunctionSource, function) -> None:
    """`Anno.ORIGIN` on every statement and `Anno.NODE_TYPES` on ``function``, one walk."""
    found = set()
    add = found.add
    statement, attribute, store = gast.stmt, gast.Attribute, gast.Store
    for node in walk(function):
        node_type = node.__class__
        add(node_type)
        if isinstance(node, statement):
            setanno(node, Anno.ORIGIN, source.location(node))
        elif node_type is attribute and node.ctx.__class__ is store:
            add(AttributeStore)
    setanno(function, Anno.NODE_TYPES, frozenset(found))


def reanalyze(function: gast.FunctionDef, liveness: bool = True) -> None:
    """Scopes, and liveness and definedness unless ``liveness`` is false, again, after rules
    added statements.  Name resolution and binding times are not recomputed: nodes rules
    wrote have none, which the conversion rules read as "decide at build time"."""
    analyze_scopes(function)
    if liveness:
        analyze_liveness(function)


class _NodeTypes:
    """The node types a function contains, rescanned only after a rule changed it.

    One walk of the tree collects them, much cheaper than a rule's transformer pass.  The
    set may list types a rule has since removed (a rule that runs for nothing is harmless),
    never miss one a rule added: after a rule that rewrote something, the next question
    rescans.
    """

    def __init__(self, function):
        self.function = function
        # as the analyses found them: no rule has run yet
        self._types = getanno(function, Anno.NODE_TYPES)

    def changed(self, function, added=None) -> None:
        """A rule rewrote ``function``; ``added``: the node types it may have added, if it
        says (`Rule.writes`), which spares the rescan."""
        if added is None or self._types is None:
            self.function, self._types = function, None
        else:
            self.function, self._types = function, self._types | added

    def contains_any(self, types) -> bool:
        if self._types is None:
            self._types = _types_in(self.function)
        return not self._types.isdisjoint(types)


def _types_in(function) -> set:
    """The node types in ``function``, and `AttributeStore` for an attribute assignment
    target (``x.shape = n``, `ShapeAssignment`), in one walk."""
    found = set()
    add = found.add
    attribute, store = gast.Attribute, gast.Store
    for node in walk(function):
        node_type = node.__class__
        add(node_type)
        if node_type is attribute and node.ctx.__class__ is store:
            add(AttributeStore)
    return found


def _has_work(rule, present: _NodeTypes) -> bool:
    return (rule.rewrites is None or present.contains_any(rule.rewrites)) and \
        rule.has_work(present.function)


def run_rules(function: gast.FunctionDef, context: RuleContext, *,
              skip_idle: bool = True) -> gast.FunctionDef:
    """Run `PIPELINE` on an analyzed ``function``, in order.

    With ``skip_idle`` (the default), work that cannot change the result is skipped: a rule
    whose `Rule.rewrites` types the function does not contain (at that point of the
    pipeline), and, at `REANALYZE`, the analyses when no rule has rewritten anything since
    they ran (the tree is as they saw it: `Rule.rewrote`) and liveness when no rule that
    reads it will run.  The output is the same either way (tests/test_pipeline_skipping.py
    checks it over the corpora).
    """
    present = _NodeTypes(function)
    changed = False            # has a rule rewritten anything since the analyses?
    liveness_skipped = False   # did REANALYZE leave liveness out?
    for index, step in enumerate(PIPELINE):
        if step == REANALYZE:
            if changed or not skip_idle:
                liveness = not skip_idle or _liveness_needed(PIPELINE[index + 1:], present)
                reanalyze(function, liveness=liveness)
                liveness_skipped = not liveness
                changed = False
            continue
        if skip_idle and not _has_work(step, present):
            continue
        if step.reads_liveness and liveness_skipped:
            # `_liveness_needed` looked ahead with the types present at REANALYZE: a rule
            # between it and this one wrote a construct that none of them had.
            raise AssertionError(f"{step.__name__} would read stale liveness")
        rule = step(context)
        function = rule.visit(function)
        if rule.rewrote or not skip_idle:
            present.changed(function, step.writes if skip_idle else None)
            changed = True
            context.unpositioned_nodes |= not step.positions_its_nodes or not skip_idle
    return function


def _liveness_needed(later_steps, present: _NodeTypes) -> bool:
    """Will a rule that reads liveness run?  The rules between REANALYZE and the readers
    (LogicalExpressions) write no loop or `if`, so the types present now decide."""
    return any(step != REANALYZE and step.reads_liveness and _has_work(step, present)
               for step in later_steps)


def transpile_function(source: FunctionSource, *, resolver=None, module_ast=None,
                       module_name: str = "__main__", static_argnames=(),
                       runtime_alias: str = "psc", skip_idle: bool = True,
                       imports=None, helper_sources=None) -> TranspiledFunction:
    """``source``'s function, analysed and rewritten.  ``module_ast`` is its module (for
    the static resolver), ``imports`` the module's `effective_imports` that the generated
    module will copy (part of the digest; ``module_ast`` when not given).
    ``helper_sources(name)``: the `FunctionSource` of the module's function ``name`` that
    calls would transpile (the CLI's static view), to learn which of its parameters it
    updates in place; with a `RuntimeResolver` the live functions are read instead."""
    function = source.parse()
    name = function.name   # before BuildFunction renames it
    analyze(source, function, resolver=resolver, module_ast=module_ast,
                    module_name=module_name, static_argnames=static_argnames)
    annotate_helper_updates(function, *_helper_lookup(resolver, module_ast, module_name,
                                                      helper_sources))
    check_subset(source, function, static_argnames)
    context = RuleContext(source, runtime_alias)
    function = run_rules(function, context, skip_idle=skip_idle)
    if context.unpositioned_nodes:   # (parsed nodes all have positions)
        fix_missing_locations(function)
    names, free = names_and_free_names(function)
    return TranspiledFunction(name, source, function, frozenset(free),
                              source.digest(static_argnames,
                                            module_ast if imports is None else imports),
                              frozenset(names))


def generated_module(source_file: str, functions: list[TranspiledFunction],
                     imports=None) -> str:
    """The text of the module generated from ``functions`` of ``source_file``: ``imports``
    (a module of the source's effective imports) are the ones it may copy."""
    return emit_module(os.path.basename(source_file), functions, imports,
                       version=__version__)


def generated_mapped_module(source_file: str, functions: list[TranspiledFunction],
                            imports=None):
    """`generated_module`'s text and its line map (an `emit.EmittedModule`)."""
    return emit_mapped_module(os.path.basename(source_file), functions, imports,
                              version=__version__)


# --- helpers that update their parameters in place ----------------------------------------

_updated_by: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_updated_by_source: dict = {}
_in_progress = threading.local()


def _helper_lookup(resolver, module_ast, module_name, helper_sources):
    """``(lookup, parameters_updated_by)`` for `annotate_helper_updates`."""
    if isinstance(resolver, RuntimeResolver):
        def lookup(name):
            value = resolver.closure.get(name, resolver.globals.get(name))
            if getattr(value, "__psc_function__", False):
                value = value.__wrapped__
            return value if isinstance(value, types.FunctionType) else None
        return lookup, _parameters_updated_by_function
    if helper_sources is None:
        return (lambda name: None), (lambda helper: None)

    def static_lookup(name):
        source = helper_sources(name)
        return None if source is None else source

    def updated(source):
        return _parameters_updated_by_source(source, module_ast, module_name,
                                             helper_sources)
    return static_lookup, updated


def _parameters_updated_by_function(fn) -> dict | None:
    """Parameter name -> augmented-only, for the parameters the user function ``fn``
    updates in place (its own source, analysed and checked as its transpile would); None
    where that is not known (no source, a function the check refuses: its transpile then
    reports it, or a recursion)."""
    if fn in _updated_by:
        return _updated_by[fn]
    active = _in_progress.__dict__.setdefault("functions", set())
    if fn in active:
        return None
    active.add(fn)
    try:
        found = _updates_of(function_source(fn), resolver=runtime_resolver(fn))
    except (PSCError, OSError, TypeError, SyntaxError):
        found = None
    finally:
        active.discard(fn)
    _updated_by[fn] = found
    return found


def _parameters_updated_by_source(source, module_ast, module_name, helper_sources):
    key = (source.file, source.first_line, source.text)
    if key in _updated_by_source:
        return _updated_by_source[key]
    _updated_by_source[key] = None   # a recursion ends here
    try:
        found = _updates_of(source, module_ast=module_ast, module_name=module_name,
                            helper_sources=helper_sources)
    except PSCError:
        found = None
    _updated_by_source[key] = found
    return found


def _updates_of(source, *, resolver=None, module_ast=None, module_name="__main__",
                helper_sources=None) -> dict:
    function = source.parse()
    if not isinstance(function, gast.FunctionDef):
        return {}
    analyze(source, function, resolver=resolver, module_ast=module_ast,
            module_name=module_name)
    annotate_helper_updates(function, *_helper_lookup(resolver, module_ast, module_name,
                                                      helper_sources))
    check_subset(source, function)
    return getanno(function, Anno.ARGUMENT_UPDATES) or {}


def runtime_resolver(fn) -> RuntimeResolver:
    closure = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:   # an empty cell: defined later in the enclosing function
                pass
    return RuntimeResolver(fn.__globals__, closure)


# --- deeply nested source ------------------------------------------------------------------
#
# gast's conversion, the analyses, the rules and the printer walk the tree recursively,
# several Python frames per level of nesting, so an expression Python itself compiles (a
# sum of 250 terms, 170 nested calls; CPython compiles nesting up to about 3 x its
# recursion limit) can exceed the default recursion limit of 1000.  Such a function is
# transpiled again on a thread with a large stack and a raised (bounded) limit.

DEEP_RECURSION_LIMIT = 60_000          # frames; > 3000 levels x the frames one level takes
DEEP_STACK_BYTES = 1024 * 2**20        # the C stack the frames that go through C need
_deep_lock = threading.Lock()          # the limit is process-wide: one deep run at a time


def run_nested(fn, *args, location: SourceLocation | None = None, **kwargs):
    """``fn(*args, **kwargs)``, which walks a user's syntax tree recursively.

    Most code is shallow and runs here as it is.  On a `RecursionError`, ``fn`` runs again
    on a worker thread with a `DEEP_STACK_BYTES` stack and a recursion limit of
    `DEEP_RECURSION_LIMIT` (restored after); if even that is not enough, a `PSCSyntaxError`
    at ``location`` (the function's ``def``) says so, never a bare `RecursionError`.
    """
    try:
        return fn(*args, **kwargs)
    except RecursionError:
        pass
    try:
        return _on_deep_stack(fn, args, kwargs)
    except RecursionError:
        raise PSCSyntaxError(
            "this code nests expressions too deeply to transpile", location,
            hint="split the deepest expression into several statements with intermediate "
                 "variables") from None


def _on_deep_stack(fn, args, kwargs):
    outcome = {}

    def target():
        try:
            outcome["value"] = fn(*args, **kwargs)
        except BaseException as err:   # re-raised on the calling thread
            outcome["error"] = err

    with _deep_lock:
        previous_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(previous_limit, DEEP_RECURSION_LIMIT))
        try:
            _start_with_large_stack(threading.Thread(target=target, daemon=True,
                                                     name="psc-deep-transpile")).join()
        finally:
            sys.setrecursionlimit(previous_limit)
    if "error" in outcome:
        error = outcome.pop("error")
        raise error
    return outcome["value"]


def _start_with_large_stack(worker: threading.Thread) -> threading.Thread:
    """Start ``worker`` with the largest stack of `DEEP_STACK_BYTES`, a quarter of it,
    that the system grants (the size applies to threads started while it is set)."""
    previous = threading.stack_size()
    try:
        for size in (DEEP_STACK_BYTES, DEEP_STACK_BYTES // 4):
            try:
                threading.stack_size(size)
                worker.start()
                return worker
            except (ValueError, RuntimeError, MemoryError):
                continue
        raise RecursionError("no thread with a large enough stack could be started")
    finally:
        threading.stack_size(previous)
