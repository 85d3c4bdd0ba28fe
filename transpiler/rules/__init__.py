"""Rewrite rules, one concern per module, each a ``gast.NodeTransformer``.

`PIPELINE` is the one ordered list the front end runs on every PSC function.
"""
from .build_function import BuildFunction
from .calls import TranspiledCalls
from .subscript_assignment import SubscriptAssignment

PIPELINE = [
    # Element updates first: the calls they write (`psc.setitem`, `slice`) carry no
    # resolution, which TranspiledCalls takes as "written by a rule" and leaves alone.
    SubscriptAssignment,
    # Calls before renaming the function: a recursive call must still see the user's
    # name (runtime.transpiled reports recursion with it).
    TranspiledCalls,
    # Last: renames the function and adds the builder parameter, so the rules above see
    # the signature exactly as the user wrote it.
    BuildFunction,
]

__all__ = ["PIPELINE", "BuildFunction", "SubscriptAssignment", "TranspiledCalls"]
