"""What the loop and conditional rules share: body functions over carried variables."""
from __future__ import annotations

import gast

from runtime.errors import PSCNameError, PSCTypeError

from ..analysis.liveness import assigned_in
from ..analysis.resolve import Kind, resolution_of
from ..analysis.walk import walk

from ..anno import Anno, getanno, setanno
from .base import load, runtime_attribute, with_origin


def parameters(names) -> gast.arguments:
    return gast.arguments([gast.Name(n, gast.Param(), None, None) for n in names], [], None,
                          [], [], None, [])


def tuple_of(names, ctx) -> gast.Tuple:
    return gast.Tuple([gast.Name(n, ctx(), None, None) for n in names], ctx())


def names_constant(names) -> gast.Tuple:
    return gast.Tuple([gast.Constant(n, None) for n in names], gast.Load())


def body_function(name: str, params, body, returns, origin_from, dead=(),
                  alias="psc") -> gast.FunctionDef:
    """``def name(params): <body>; return (returns,)``; names in ``dead`` are returned as
    ``psc.UNDEFINED`` (a branch that returned leaves them without a value)."""
    statements = list(body) or ([] if returns is not None else [gast.Pass()])
    if returns is not None:
        values = tuple_of(returns, gast.Load)
        values.elts = [runtime_attribute(alias, "UNDEFINED")
                       if element.id in dead else element for element in values.elts]
        statements.append(gast.Return(values))
    function = gast.FunctionDef(name, parameters(params), statements, [], None, None)
    gast.copy_location(function, origin_from)
    with_origin(function.args, origin_from)
    for statement in statements:
        if getanno(statement, Anno.ORIGIN) is None:   # the added `return (...)`
            with_origin(statement, body[-1] if body else origin_from)
    setanno(function, Anno.ORIGIN, getanno(origin_from, Anno.ORIGIN))
    return function


def initial_values(names, defined, alias) -> gast.Tuple:
    """The carried variables' values before the construct (UNDEFINED where none yet)."""
    elements = [load(n) if n in defined else
                runtime_attribute(alias, "UNDEFINED") for n in names]
    return gast.Tuple(elements, gast.Load())


def result_assignment(names, call, origin_from):
    """``(a, b) = call`` (or just ``call`` when nothing is carried)."""
    if not names:
        return with_origin(gast.Expr(call), origin_from)
    return with_origin(gast.Assign([tuple_of(names, gast.Store)], call, None), origin_from)


class FunctionNames:
    """Unique, readable names for generated body functions: ``while_body_L12``."""

    def __init__(self):
        self.used: set[str] = set()

    def __call__(self, kind: str, node) -> str:
        line = getattr(getanno(node, Anno.ORIGIN), "line", getattr(node, "lineno", 0))
        name, k = f"{kind}_L{line}", 1
        while name in self.used:
            k += 1
            name = f"{kind}_L{line}_{k}"
        self.used.add(name)
        return name


def first_use_after(function, node, name):
    """The first read of ``name`` after ``node`` ends, in source order."""
    end = (node.end_lineno, node.end_col_offset)
    uses = [n for n in gast.walk(function) if isinstance(n, gast.Name) and n.id == name
            and isinstance(n.ctx, gast.Load) and getattr(n, "lineno", None) is not None
            and (n.lineno, n.col_offset) > end]
    return min(uses, key=lambda n: (n.lineno, n.col_offset), default=None)


def undefined_in_one_branch(node, name, source, function=None):
    """The error for a variable assigned in one branch only and used after the ``if``."""
    def first_assignment(statements):
        for statement in statements:
            for sub in gast.walk(statement):
                if isinstance(sub, gast.Name) and sub.id == name and \
                        isinstance(sub.ctx, gast.Store):
                    return sub
        return None
    in_body = first_assignment(node.body)
    assigned_at = source.location(in_body or first_assignment(node.orelse))
    other = "else" if in_body is not None else "if"
    use = first_use_after(function, node, name) if function is not None else None
    used_at = source.location(use).line if use is not None else "later"
    raise PSCNameError(
        f"{name!r} is assigned in one branch of the traced if at line "
        f"{source.location(node).line} (line {assigned_at.line}) but not in the {other} "
        f"branch, and used after the if (line {used_at})", assigned_at,
        f"assign {name} before the if, or in both branches")


_MUTATING_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear",
                               "update", "setdefault", "popitem", "add", "discard"})


def _mutates_container(call, local) -> bool:
    """Is ``call`` a mutating method (``seen.append(v)``) of a variable from outside?  A
    name resolved to a module makes it a function (``np.add``, ``np.append``), not a
    method: resolution decides, not the attribute's name alone."""
    func = call.func
    return isinstance(func, gast.Attribute) and func.attr in _MUTATING_METHODS and \
        isinstance(func.value, gast.Name) and func.value.id not in local and \
        resolution_of(func) is None and \
        getattr(resolution_of(func.value), "kind", None) not in (Kind.NUMPY, Kind.MODULE)


def reject_container_mutation(statements, source, construct: str, local=None,
                              calls=None) -> None:
    """A staged body runs once, when it is built, not once per iteration or only when its
    branch is taken: a Python container it changes in place would come out wrong.
    ``local``: `assigned_in` ``statements``, and ``calls``: every call in them, where the
    caller has them (`bindings_in` finds both in one walk)."""
    if local is None:
        local = assigned_in(statements)
    if calls is None:
        calls = [node for statement in statements for node in walk(statement)
                 if isinstance(node, gast.Call)]
    if not any(_mutates_container(node, local) for node in calls):
        return
    for statement in statements:   # breadth first: the error names the first one so found
        for node in gast.walk(statement):
            if isinstance(node, gast.Call) and _mutates_container(node, local):
                raise PSCTypeError(
                    f"`{node.func.value.id}.{node.func.attr}(...)` changes a container inside "
                    f"a traced {construct}: a container that grows cannot be carried through "
                    "staged control flow", source.location(node),
                    "preallocate an array and assign elements, or unroll the loop with "
                    "static_range")
