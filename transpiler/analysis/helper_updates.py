"""Which calls of user functions update the arguments they pass, in place.

NumPy code calls helpers that update their parameters (``pressure_poisson(nit, p, dx, dy,
b)`` writes into ``p``); the caller then sees the new values.  A transpiled helper returns
its updated parameters' final values instead (`runtime.argument_updates`), and the caller
must rebind the names it passed.  This analysis finds those calls: a call by name of a
user function whose parameters the function updates (`parameters_updated_by`, given by
the pipeline: it runs the analyses and the subset check on the helper's own source) gets
`Anno.HELPER_UPDATES`, pairing each updated parameter with the argument expression bound
to it.  `transpiler.checks` then treats those arguments as updated (an argument of the
caller, an alias, a view...) and `rules.helper_updates` rewrites the call.
"""
from __future__ import annotations

import inspect

import gast

from ..anno import Anno, getanno, setanno
from .resolve import Kind, resolution_of
from .walk import walk

UNMAPPABLE = "unmappable"   # a call with *args or **kwargs: the arguments are not known


def annotate_helper_updates(function: gast.FunctionDef, lookup, parameters_updated_by):
    """``lookup(name)``: the helper object a free name denotes, or None where unknown;
    ``parameters_updated_by(helper)``: its parameter name -> augmented-only, or None."""
    kinds = getanno(function, Anno.RESOLVED_KINDS)
    if kinds is not None and Kind.USER_FUNCTION not in kinds:
        return   # no free name denotes a user function: no call to look at
    for node in walk(function):
        if not isinstance(node, gast.Call) or not isinstance(node.func, gast.Name):
            continue
        resolved = resolution_of(node.func)
        if resolved is None or resolved.kind is not Kind.USER_FUNCTION:
            continue
        helper = lookup(node.func.id)
        if helper is None:
            continue
        updated = parameters_updated_by(helper)
        if not updated:
            continue
        setanno(node, Anno.HELPER_UPDATES, _pairs(helper, node, updated))


def _pairs(helper, call: gast.Call, updated: dict):
    """``(parameter, argument node or None, augmented only)`` per updated parameter, or
    `UNMAPPABLE`."""
    if any(isinstance(a, gast.Starred) for a in call.args) or \
            any(k.arg is None for k in call.keywords):
        return UNMAPPABLE
    signature = _signature(helper)
    if signature is None:
        return UNMAPPABLE
    try:
        bound = signature.bind(*call.args, **{k.arg: k.value for k in call.keywords})
    except TypeError:   # Python raises it when the call runs: not this analysis's business
        return ()
    return tuple((name, bound.arguments.get(name), augmented)
                 for name, augmented in updated.items()
                 if isinstance(bound.arguments.get(name, call), gast.AST))


def _signature(helper):
    if hasattr(helper, "parse"):   # the CLI's static view: a module's def, from its source
        helper = helper.parse()
    if isinstance(helper, gast.FunctionDef):   # the CLI's static view of a module's def
        args = helper.args
        params = []
        positional = args.posonlyargs + args.args
        first_default = len(positional) - len(args.defaults)
        for i, arg in enumerate(positional):
            kind = inspect.Parameter.POSITIONAL_ONLY if i < len(args.posonlyargs) else \
                inspect.Parameter.POSITIONAL_OR_KEYWORD
            default = None if i >= first_default else inspect.Parameter.empty
            params.append(inspect.Parameter(arg.id, kind, default=default))
        if args.vararg is not None:
            params.append(inspect.Parameter(args.vararg.id, inspect.Parameter.VAR_POSITIONAL))
        for arg, default in zip(args.kwonlyargs, args.kw_defaults):
            params.append(inspect.Parameter(arg.id, inspect.Parameter.KEYWORD_ONLY,
                                            default=None if default is not None
                                            else inspect.Parameter.empty))
        if args.kwarg is not None:
            params.append(inspect.Parameter(args.kwarg.id, inspect.Parameter.VAR_KEYWORD))
        return inspect.Signature(params)
    try:
        return inspect.signature(getattr(helper, "__wrapped__", helper))
    except (TypeError, ValueError):
        return None
