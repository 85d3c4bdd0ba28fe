"""Rewrite rules, one concern per module, each a ``gast.NodeTransformer``.

`PIPELINE` is the one ordered list the front end runs on every PSC function; `REANALYZE`
marks where the analyses run again because the rules before it added statements whose
liveness the rules after it need.  `transpiler.pipeline.run_rules` skips a rule when the
function has none of the node types it rewrites (`Rule.rewrites`), and skips REANALYZE
when no rule ran before it (or its liveness when no rule after it reads liveness).
"""
from .argument_updates import ArgumentWriteBack
from .augmented_assignment import AugmentedAssignment
from .break_continue import BreakContinue
from .build_function import BuildFunction
from .calls import TranspiledCalls
from .conditionals import Conditionals
from .helper_updates import HelperUpdates
from .inplace_methods import InPlaceMethods
from .local_imports import LocalImports
from .logical_expressions import LogicalExpressions
from .loops import Loops
from .return_statements import ReturnStatements
from .shape_assignment import ShapeAssignment
from .static_subscripts import StaticSubscripts
from .subscript_assignment import SubscriptAssignment

REANALYZE = "reanalyze"

PIPELINE = [
    # Independent of every other rule (it only rewrites import statements, which the
    # subset check allows at the top of a function body only): first.
    LocalImports,
    # `x.shape = n` -> `x = psc.inplace_shape(x, n)`: a chain's other targets may be
    # element assignments, which SubscriptAssignment then rewrites.
    ShapeAssignment,
    # Element updates first: the calls they write (`psc.setitem`, `slice`) carry no
    # resolution, which TranspiledCalls takes as "written by a rule" and leaves alone.
    SubscriptAssignment,
    # After element updates (which take their own augmented forms, `x[i] += v`); like
    # theirs, the `psc.augassign` calls it writes carry no resolution.
    AugmentedAssignment,
    # Also rebinds a variable (`x.sort()` -> `x = psc.inplace_sort(x)`), so before the
    # analyses of what loops and branches carry; its helper calls carry no resolution.
    InPlaceMethods,
    # Reads of static containers after element updates (whose targets it must not touch);
    # the `psc.getitem` calls it writes carry no resolution, like SubscriptAssignment's.
    StaticSubscripts,
    # Calls of helpers that update their parameters in place rebind what they pass; before
    # TranspiledCalls, since the helper is passed to the runtime by name, not called.
    HelperUpdates,
    # Calls before any rule adds nested functions (TranspiledCalls needs every function's
    # scope annotation, which generated body functions do not have).
    TranspiledCalls,
    # Returns before break/continue: a return inside a loop is lowered into a `break`,
    # which BreakContinue then lowers with the loop's other exits.
    ReturnStatements,
    BreakContinue,
    # After the return lowering (one `return retval` then, whose updated parameters it
    # adds to the exit variables); before REANALYZE, so loops and branches carry them.
    ArgumentWriteBack,
    # The lowerings added flag variables and guards: recompute scopes, liveness and
    # definedness so that the conversions below carry the flags.
    REANALYZE,
    # Before the conversions: a test like `a and b` becomes one call, so a converted
    # `while`'s test function returns a single expression.
    LogicalExpressions,
    Loops,
    Conditionals,
    # Last: renames the function and adds the builder parameter, so every rule above sees
    # the signature exactly as the user wrote it.
    BuildFunction,
]

__all__ = ["PIPELINE", "REANALYZE", "ArgumentWriteBack", "HelperUpdates", "AugmentedAssignment", "BreakContinue", "BuildFunction",
           "Conditionals", "InPlaceMethods", "LocalImports", "LogicalExpressions", "Loops", "ReturnStatements",
           "ShapeAssignment", "StaticSubscripts", "SubscriptAssignment", "TranspiledCalls"]
