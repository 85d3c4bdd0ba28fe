"""What every rewrite rule shares: its context, and the node helpers all rules write with.

The helpers are plain functions (the lowering helpers in `flags` and the body-function
helpers in `control_flow_functions` use them outside any rule): `runtime_call` and
`runtime_attribute` for what generated code reads from the runtime (``psc.setitem(...)``,
``psc.UNDEFINED``), `load` for a variable read, `with_origin` for a new node that stands
for an old one.  The rules' doctests run them with `transpiler.doctest_helpers.demo`.
"""
from __future__ import annotations

import dataclasses

import gast

from ..anno import Anno, getanno, setanno
from ..analysis.walk import NodeTransformer


@dataclasses.dataclass
class RuleContext:
    source: object              # transpiler.source.FunctionSource
    runtime_alias: str = "psc"  # how generated code names the runtime package
    builder_name: str = "b"     # the build function's builder parameter
    # Set by the exit lowerings: the flag of a lowered `return` and every variable they
    # introduced (flags, the result), which Conditionals keeps live after a return.
    return_flag: str | None = None
    exit_variables: set = dataclasses.field(default_factory=set)
    # Set by `run_rules`: may a rule have written a node without a position?
    unpositioned_nodes: bool = False


class AttributeStore:
    """Not a node type: what `Rule.rewrites` lists for an attribute assignment target
    (``x.shape = n``), which the pipeline tells apart from the many attribute reads."""


class Rule(NodeTransformer):
    """A rewrite rule: a NodeTransformer that reads annotations and keeps origins.

    ``self.function`` is the top-level function being rewritten (the first FunctionDef
    visited); rules that override ``visit_FunctionDef`` call `enter_function` first.

    ``rewrites``: node types at least one of which a function must contain for the rule to
    change anything (or raise); the pipeline skips the rule for a function with none of
    them (`transpiler.pipeline.run_rules`).  None: the rule always runs.  Over-approximate:
    a type missing here makes the pipeline skip a rule that had work to do.
    `has_work` may narrow it further from annotations.
    ``reads_liveness``: whether the rule reads `Anno.LIVE_IN`/`LIVE_OUT`/`DEFINED_IN`.
    ``rewrote``: after a pass, whether it may have changed the tree.  A rule that knows
    sets `tracks_rewrites` and calls `rewrote_something` where it changes anything; then
    a pass that changed nothing spares the pipeline the rescans and reanalysis that follow
    a change.  Any other rule counts as having changed the tree.
    """

    rewrites: frozenset | None = None
    reads_liveness: bool = False
    tracks_rewrites: bool = False
    # every node the rule writes has a position (`BuildFunction`): when it is the only
    # rule that rewrote anything, the pipeline need not fix missing locations
    positions_its_nodes: bool = False
    # The node types a pass may add to the function (what it builds; what it moves was
    # there already), where the rule declares them: after it rewrote, the pipeline adds
    # them to the types it knows instead of walking the function again.  None: unknown.
    writes: frozenset | None = None

    @staticmethod
    def has_work(function) -> bool:
        """Whether the rule may change ``function`` beyond what `rewrites` tells (an
        annotation an analysis left): False lets the pipeline skip it."""
        return True

    def __init__(self, context: RuleContext):
        self.context = context
        self.function = None
        self.rewrote = not self.tracks_rewrites

    def rewrote_something(self) -> None:
        self.rewrote = True

    def enter_function(self, node) -> None:
        if self.function is None:
            self.function = node

    def visit_FunctionDef(self, node):
        self.enter_function(node)
        self.generic_visit(node)
        return node


def load(name: str) -> gast.Name:
    """A read of variable ``name``."""
    return gast.Name(name, gast.Load(), None, None)


def runtime_attribute(alias: str, attr: str) -> gast.Attribute:
    """``psc.<attr>`` (the runtime package named ``alias``) as a load expression."""
    return gast.Attribute(load(alias), attr, gast.Load())


def runtime_call(alias: str, attr: str, *args, keywords=()) -> gast.Call:
    """``psc.<attr>(*args, **keywords)`` (``keywords``: gast keyword nodes)."""
    return gast.Call(runtime_attribute(alias, attr), list(args), list(keywords))


def with_origin(node, origin_from):
    """Give ``node`` and its new (position-less) parts the position and origin of
    ``origin_from``, the node it replaces; parts that already have an origin keep theirs."""
    origin = getanno(origin_from, Anno.ORIGIN)
    for sub in gast.walk(node):
        if sub is node or not hasattr(sub, "lineno") or getattr(sub, "lineno", None) is None:
            gast.copy_location(sub, origin_from)
        if origin is not None and isinstance(sub, gast.stmt) and \
                (sub is node or getanno(sub, Anno.ORIGIN) is None):
            setanno(sub, Anno.ORIGIN, origin)
    return node
