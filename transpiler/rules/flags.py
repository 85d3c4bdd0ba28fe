"""Helpers for the lowering rules: fresh flag names, flag assignments, guarded blocks."""
from __future__ import annotations

import gast

from ..anno import Anno, getanno, setanno


def fresh_name(base: str, function) -> str:
    """``base``, or ``base_2``, ``base_3``... whichever the function does not use yet."""
    used = {n.id for n in gast.walk(function) if isinstance(n, gast.Name)}
    used |= {n.name for n in gast.walk(function) if isinstance(n, gast.FunctionDef)}
    name, k = base, 1
    while name in used:
        k += 1
        name = f"{base}_{k}"
    return name


def assign(name: str, value, origin_from) -> gast.Assign:
    node = gast.Assign([gast.Name(name, gast.Store(), None, None)], value, None)
    return with_origin(node, origin_from)


def with_origin(node, origin_from):
    """Give ``node`` and its new (position-less) parts the position and origin of
    ``origin_from``; parts that already have an origin keep theirs."""
    origin = getanno(origin_from, Anno.ORIGIN)
    for sub in gast.walk(node):
        if sub is node or not hasattr(sub, "lineno") or getattr(sub, "lineno", None) is None:
            gast.copy_location(sub, origin_from)
        if origin is not None and isinstance(sub, gast.stmt) and \
                (sub is node or getanno(sub, Anno.ORIGIN) is None):
            setanno(sub, Anno.ORIGIN, origin)
    return node


def runtime_call(alias: str, attr: str, *args) -> gast.Call:
    func = gast.Attribute(gast.Name(alias, gast.Load(), None, None), attr, gast.Load())
    return gast.Call(func, list(args), [])


def load(name: str) -> gast.Name:
    return gast.Name(name, gast.Load(), None, None)


def guarded(alias: str, flag: str, statements) -> gast.If:
    """``if psc.not_(flag): <statements>``: what runs only while ``flag`` is unset."""
    test = runtime_call(alias, "not_", load(flag))
    return with_origin(gast.If(test, list(statements), []), statements[0])


def lower_exits(statements, is_exit, replacement, flag: str, alias: str):
    """Replace exit statements (``break``...) by ``replacement(stmt)`` and guard what
    follows them with ``flag``.  Nested loops and functions keep their own exits.

    Returns (new statements, whether an exit may have run).
    """
    new = []
    for index, statement in enumerate(statements):
        if is_exit(statement):
            new.extend(replacement(statement))
            return new, True          # the rest of this block is dead
        exits = False
        if isinstance(statement, gast.If):
            statement.body, in_body = lower_exits(statement.body, is_exit, replacement,
                                                  flag, alias)
            statement.orelse, in_else = lower_exits(statement.orelse, is_exit, replacement,
                                                    flag, alias)
            statement.body = statement.body or [with_origin(gast.Pass(), statement)]
            exits = in_body or in_else
        new.append(statement)
        if exits:
            rest, _ = lower_exits(statements[index + 1:], is_exit, replacement, flag, alias)
            if rest:
                new.append(guarded(alias, flag, rest))
            return new, True
    return new, False
