"""Helpers for the exit lowerings: fresh flag names, flag assignments, guarded blocks, and
`lower_exits`, which both `ReturnStatements` and `BreakContinue` lower their exits with."""
from __future__ import annotations

import gast

from ..anno import Anno, setanno
from .base import load, runtime_call, with_origin


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


def guarded(alias: str, flag: str, statements) -> gast.If:
    """``if psc.not_(flag): <statements>``: what runs only while ``flag`` is unset."""
    test = runtime_call(alias, "not_", load(flag))
    return with_origin(gast.If(test, list(statements), []), statements[0])


def lower_exits(statements, is_exit, replacement, flag: str, alias: str, *,
                through_loops: bool = False):
    """Replace exit statements (``break``...) by ``replacement(stmt, in_loop)`` and guard
    what follows them with ``flag``.  Returns (new statements, whether an exit may have
    run).

    Without ``through_loops`` (``break``, ``continue``) nested loops and functions keep
    their own exits.  With it (``return``) the exits inside nested loops are lowered too:
    there (``in_loop``) the replacement ends with a ``break``, so what follows in the loop
    needs no guard here (`BreakContinue` then lowers that ``break`` with the loop's other
    exits, guarding what follows it); a loop that holds one gets `Anno.RETURNS_INSIDE`, and is followed,
    inside an enclosing loop, by ``if flag: break``.
    """
    def block(statements, in_loop):
        new = []
        for index, statement in enumerate(statements):
            if is_exit(statement):
                new.extend(replacement(statement, in_loop))
                return new, True          # the rest of this block is dead
            exits = False
            if isinstance(statement, gast.If):
                statement.body, in_body = block(statement.body, in_loop)
                statement.orelse, in_else = block(statement.orelse, in_loop)
                statement.body = statement.body or [with_origin(gast.Pass(), statement)]
                exits = in_body or in_else
            elif through_loops and isinstance(statement, (gast.For, gast.While)):
                statement.body, exits = block(statement.body, True)
                if exits:   # BreakContinue: the loop may stage, carrying the result
                    setanno(statement, Anno.RETURNS_INSIDE, True)
                statement.orelse, in_else = block(statement.orelse, in_loop)
                exits = exits or in_else
            new.append(statement)
            if exits and in_loop and isinstance(statement, (gast.For, gast.While)):
                # an exit in an inner loop also ends this loop
                new.append(with_origin(gast.If(load(flag), [gast.Break()], []), statement))
            if exits:
                rest, _ = block(statements[index + 1:], in_loop)
                if rest and in_loop:   # (only with through_loops)
                    new.extend(rest)   # the `break` just written guards them
                elif rest:
                    new.append(guarded(alias, flag, rest))
                return new, True
        return new, False
    return block(statements, False)
