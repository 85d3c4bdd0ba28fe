"""Node annotations: analyses write them, rules read them.

Each key is an `Anno` member; values live in a dict attached to the gast node, so copying a
node (``copy.copy``) keeps them and unparsing ignores them.

* `Anno.SCOPE` (on FunctionDef/Lambda): `transpiler.analysis.activity.Scope`, the names the
  function binds, reads and takes as parameters.
* `Anno.RESOLVED` (on Name loads and Attribute chains): `transpiler.analysis.resolve.Resolution`,
  what a free name denotes (a NumPy function, a builtin, a user function...).
* `Anno.BINDING_TIME` (on expressions): `BindingTime.STATIC` or `BindingTime.TRACED`.
* `Anno.ORIGIN` (on statements): the `SourceLocation` of the source statement a generated
  statement comes from; the emitter prints it as the ``# file.py:LINE`` comment.
* `Anno.LIVE_IN`, `Anno.LIVE_OUT` (on statements): variables read later before being
  reassigned, at the statement's entry and exit (`transpiler.analysis.liveness`).
* `Anno.DEFINED_IN` (on statements): variables that may have a value at the statement's
  entry (parameters and names assigned on some path before it).
* `Anno.VARIABLE_TIMES` (on the FunctionDef): variable name -> `BindingTime`, from the
  binding-time analysis.
* `Anno.STATIC_BOUND` (on the FunctionDef): variables some assignment gives a static value
  (``t = np.full(4, .5)``): even when traced (reassigned under a traced ``if``) they may
  hold a NumPy value when the program is built.
* `Anno.STOP_FLAG` (on loops whose ``break`` was lowered): the flag variable's name.
* `Anno.BRANCHES_LIVE_IN` (on ``if`` statements, by liveness): what is live at the start
  of either branch (`LIVE_IN` less what only the test reads).
* `Anno.ARGUMENT_UPDATES` (on the FunctionDef, by `transpiler.checks`): parameter name ->
  True when only augmented assignments update it, for each traced parameter the function
  updates in place while it is still bound to the argument (`rules.argument_updates`).
* `Anno.HELPER_UPDATES` (on calls of user functions that update their parameters in
  place, by `analysis.helper_updates`): ``(parameter, argument node or None,
  augmented only)`` per updated parameter (None: the call passes no argument for it).
* `Anno.RETURNS_INSIDE` (on loops holding a ``return`` that `ReturnStatements` lowered):
  True.  The result variable it carries may be traced, which stages the loop.
* `Anno.RESOLVED_KINDS` (on the FunctionDef, by name resolution): the `Kind`s its free
  names resolve to (a function-local import's resolution is not among them).
* `Anno.NODE_TYPES` (on the FunctionDef, by `transpiler.pipeline.analyze`): the node
  classes in the function as the analyses saw it (and `rules.base.AttributeStore` for an
  attribute assignment target), from the one walk that also gives statements their
  origins; the pipeline's first question about node types, and the binding-time
  analysis, read it.  Rules change the tree: it is not kept up to date.
"""
from __future__ import annotations

import enum


class Anno(enum.Enum):
    SCOPE = "scope"
    RESOLVED = "resolved"
    BINDING_TIME = "binding_time"
    ORIGIN = "origin"
    LIVE_IN = "live_in"
    LIVE_OUT = "live_out"
    DEFINED_IN = "defined_in"
    VARIABLE_TIMES = "variable_times"
    STATIC_BOUND = "static_bound"
    STOP_FLAG = "stop_flag"
    RETURNS_INSIDE = "returns_inside"
    BRANCHES_LIVE_IN = "branches_live_in"
    ARGUMENT_UPDATES = "argument_updates"
    HELPER_UPDATES = "helper_updates"
    NODE_TYPES = "node_types"
    RESOLVED_KINDS = "resolved_kinds"


class BindingTime(enum.Enum):
    STATIC = "static"    # known when the computation is built
    TRACED = "traced"    # known only when the executable runs

    def join(self, other: "BindingTime") -> "BindingTime":
        return BindingTime.TRACED if BindingTime.TRACED in (self, other) else self


_KEY = "_psc_anno"


def setanno(node, key: Anno, value) -> None:
    annotations = node.__dict__.setdefault(_KEY, {})
    annotations[key] = value


def getanno(node, key: Anno, default=None):
    return node.__dict__.get(_KEY, {}).get(key, default)


def hasanno(node, key: Anno) -> bool:
    return key in node.__dict__.get(_KEY, {})
