"""The PSC subset: constructs a PSC function may not use, reported where they occur.

This is an analysis: it raises the first `PSCSyntaxError` it finds and rewrites nothing.
Each message names the construct and each hint says what to write instead.
"""
from __future__ import annotations

import os
import sysconfig
import types
import weakref

import gast

from runtime.errors import PSCImpureCallError, PSCNameError, PSCSyntaxError
from runtime.public_names import DECORATOR
from runtime.purity import MUTATING_METHODS, impure_qualname

from .analysis.activity import analyze_scopes, scope_of
from .analysis.helper_updates import UNMAPPABLE
from .anno import Anno, getanno, setanno
from .analysis.binding_time import (inplace_function_target, is_inplace_function_call,
                                    is_inplace_method_call, is_shape_target)
from .analysis.resolve import Kind, RuntimeResolver, annotate_names, resolution_of
from .analysis.walk import NodeVisitor, walk
from .loading import closure_values
from .source import function_source

_UNSUPPORTED = {
    gast.Yield: ("generators are not PSC functions", "return an array instead of yielding"),
    gast.YieldFrom: ("generators are not PSC functions", "return an array instead"),
    gast.Await: ("async code is not supported", None),
    gast.AsyncFunctionDef: ("async functions are not supported", None),
    gast.AsyncFor: ("async loops are not supported", None),
    gast.AsyncWith: ("async with is not supported", None),
    gast.Try: ("try/except is not supported in PSC functions",
               "check conditions with if on static values; traced values cannot raise"),
    gast.With: ("with statements are not supported in PSC functions",
                "move the context manager outside the jit_ps function"),
    gast.Global: ("global statements are not supported: PSC functions have no side effects",
                  "return the new value instead"),
    gast.Nonlocal: ("nonlocal statements are not supported: PSC functions have no side "
                    "effects", "return the new value instead"),
    gast.ClassDef: ("classes cannot be defined inside PSC functions",
                    "define the class at module level"),
    gast.Delete: ("del is not supported in PSC functions", "rebind the name instead"),
}
# (print, input, open, np.random.*, time.*...: impure calls, `runtime.purity`)
_SIDE_EFFECTS = {"builtins.exec": "exec() runs code the transpiler cannot see",
                 "builtins.eval": "eval() runs code the transpiler cannot see",
                 "builtins.globals": "globals() exposes mutable module state",
                 "builtins.setattr": "setattr() mutates an object",
                 "builtins.delattr": "delattr() mutates an object"}


class _SubsetChecker(NodeVisitor):
    def __init__(self, source, function: gast.FunctionDef, static=frozenset(),
                 nested: bool = False):
        self.source = source
        self.function = function
        self.scope = scope_of(function)
        self.parameters = set(self.scope.parameters)
        self.static = set(static)
        self.nested = nested      # a def inside the PSC function: its caller is PSC code
        self.assigned: set[str] = set()
        self.aliases: set[str] = set()
        self.outside: set[str] = set()   # names bound to a global's (or closure's) object
        self.top_level = {id(statement) for statement in function.body}
        self.augmented_only = _bound_only_by_augmented_assignment(function, self.scope)
        # traced parameters updated in place while bound to the argument: name ->
        # [first update, augmented assignments only]; and where a parameter is rebound
        self.updated: dict[str, list] = {}
        self.rebound: dict[str, object] = {}
        self.statement_calls: set[int] = set()   # calls whose helper may update arguments
        self.expression_calls: set[int] = set()   # calls that are a statement of their own

    def fail(self, node, message: str, hint: str | None = None):
        raise PSCSyntaxError(message, self.source.location(node), hint)

    def _refuse(self, node):
        """A construct of `_UNSUPPORTED` (the visit method of each of its classes, set
        below the class)."""
        self.fail(node, *_UNSUPPORTED[type(node)])

    def visit_Import(self, node):
        """``import math`` / ``from math import pi`` in the function: a static binding, run
        while the program is built as Python runs it (kept in the build function)."""
        if id(node) not in self.top_level:
            self.fail(node, "an import inside a loop, branch or other block is not "
                            "supported in PSC functions",
                      "import at the top of the function body, or at module level")
        if isinstance(node, gast.ImportFrom) and node.level:
            self.fail(node, "a relative import inside a PSC function is not supported "
                            "(the generated module lives in another package)",
                      "import at module level")

    visit_ImportFrom = visit_Import

    def visit_Call(self, node):
        self._check_helper_updates(node)
        self._check_inplace_method(node)
        self._check_mutating_method(node)
        resolved = resolution_of(node.func)
        impure = impure_qualname(resolved.qualname) if resolved is not None and \
            resolved.kind in (Kind.NUMPY, Kind.MODULE, Kind.BUILTIN) else None
        if impure is not None:
            why, hint = impure
            raise PSCImpureCallError(
                f"{why}: PSC functions run once, while their program is built, so the "
                "call would not happen again on later calls", self.source.location(node),
                hint)
        self._check_subset_call(node, resolved)
        self.generic_visit(node)

    def _check_helper_updates(self, node) -> None:
        """A helper that updates its parameters in place updates what the call passes:
        an argument of this function (written back in turn), a local (rebound), a
        temporary (nothing to do); never a view, an alias, a global."""
        pairs = getanno(node, Anno.HELPER_UPDATES)
        if not pairs:
            return
        call = gast.unparse(node.func).strip()
        if pairs == UNMAPPABLE:
            self.fail(node, f"{call} updates its parameters in place, and this call passes "
                            "*args or **kwargs, so PSC cannot tell which arguments it updates",
                      "pass the arguments one by one")
        if id(node) not in self.statement_calls:
            self.fail(node, f"{call} updates its parameter(s) "
                            f"{', '.join(repr(p) for p, _, _ in pairs)} in place, which PSC "
                            "follows only for a call that is a statement (`helper(x)`) or the "
                            "right side of an assignment to a name (`y = helper(x)`)",
                      "call the helper in one of those forms")
        for parameter, argument, augmented in pairs:
            if argument is None:
                continue
            what = f"`{call}(...)` (which updates its parameter {parameter!r} in place)"
            if isinstance(argument, gast.Name):
                self._check_modified(argument.id, argument, what, augmented=augmented)
            elif isinstance(argument, (gast.Subscript, gast.Attribute, gast.Call,
                                       gast.Starred, gast.IfExp)):
                self.fail(argument, f"{what} is passed `{gast.unparse(argument).strip()}`, "
                                    "which may be a view of another array: PSC cannot follow "
                                    "an update through a view",
                          f"pass a variable: `part = {gast.unparse(argument).strip()}` "
                          f"(a copy), call {call}(..., part, ...), then store `part` back")

    def _check_subset_call(self, node, resolved) -> None:
        if resolved is not None and resolved.qualname in _SIDE_EFFECTS:
            self.fail(node, _SIDE_EFFECTS[resolved.qualname],
                      "return the value from the jit_ps function and use it outside")
        if resolved is not None and resolved.kind is Kind.PRIMITIVE and \
                resolved.qualname.endswith("." + DECORATOR):
            self.fail(node, "jit_ps cannot be applied inside a PSC function",
                      "decorate the helper at module level; calls to it are inlined")

    def visit_Expr(self, node):
        self.statement_calls.add(id(node.value))
        self.expression_calls.add(id(node.value))
        self.generic_visit(node)

    def visit_Assign(self, node):
        if len(node.targets) == 1 and isinstance(node.targets[0], gast.Name):
            self.statement_calls.add(id(node.value))
        self.visit(node.value)
        for target in node.targets:
            self._check_target(target)
            self.visit(target)
        aliased = self._may_view_argument(node.value)
        outside = self._may_be_outside_object(node.value)
        self._note_assigned(node.targets)
        for target in node.targets:
            if isinstance(target, gast.Name):
                if aliased:
                    self.aliases.add(target.id)
                else:
                    self.aliases.discard(target.id)
                if outside:
                    self.outside.add(target.id)
                else:
                    self.outside.discard(target.id)

    def _may_be_outside_object(self, value) -> bool:
        """Is ``value`` a global's (or closure variable's) object or a part of one
        (``COUNTER``, ``STATE["log"]``, ``CONFIG.items``), which a mutating method call
        would change for everyone?"""
        while isinstance(value, (gast.Subscript, gast.Attribute)):
            value = value.value
        if not isinstance(value, gast.Name):
            return False
        if value.id in self.outside:
            return True
        resolved = resolution_of(value)
        return resolved is not None and resolved.kind in (Kind.VALUE, Kind.UNKNOWN)

    def visit_AugAssign(self, node):
        self.visit(node.value)
        if isinstance(node.target, gast.Name) and node.target.id in self.augmented_only:
            name, op = node.target.id, _OPERATOR_TEXT.get(type(node.op), '?')
            raise PSCNameError(
                f"`{name} {op}= ...` reads {name!r} before the function gives it a value: "
                f"assigning makes {name!r} a local variable (Python raises "
                "UnboundLocalError), and PSC functions cannot update a module variable",
                self.source.location(node.target),
                f"pass {name} in as an argument and return `{name} {op} ...` as a result")
        self._check_target(node.target, f"{_OPERATOR_TEXT.get(type(node.op), '?')}=")
        target = node.target
        if isinstance(target, gast.Name) and self._is_argument(target.id) and \
                not self.nested:
            self._note_update(target.id, target, augmented=True)
            self.visit(node.target)
            return   # `u += v` updates the argument: `u` stays bound to it
        if isinstance(target, gast.Name) and target.id in self._argument_aliases():
            self.fail(target, f"`{target.id} {_OPERATOR_TEXT.get(type(node.op), '?')}= ...` "
                              "would modify an argument in place (NumPy's augmented "
                              "assignment writes into the array)",
                      f"write `{target.id} = {target.id} "
                      f"{_OPERATOR_TEXT.get(type(node.op), '?')} ...`")
        self.visit(node.target)
        self._note_assigned([node.target])

    def _is_argument(self, name: str) -> bool:
        """Is ``name`` a traced parameter still bound to the argument?"""
        return name in self.parameters and name not in self.static and \
            name not in self.assigned and name not in self.aliases

    def _note_update(self, name: str, node, augmented: bool = False) -> None:
        entry = self.updated.setdefault(name, [node, True])
        entry[1] = entry[1] and augmented

    def _argument_aliases(self) -> set[str]:
        """Traced parameters not yet rebound, and names bound to one of them (``z = x``)."""
        return (self.parameters - self.static - self.assigned) | self.aliases

    def _may_view_argument(self, value) -> bool:
        """May ``value`` be an argument or a view of one (``x``, ``x[1:]``, ``x.T``,
        ``x.reshape(...)``), which NumPy's in-place operators would write through?"""
        if isinstance(value, gast.Name):
            return value.id in self._argument_aliases()
        if isinstance(value, gast.Subscript):
            return self._may_view_argument(value.value)
        if isinstance(value, gast.Attribute) and value.attr in _VIEW_ATTRIBUTES:
            return self._may_view_argument(value.value)
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
                value.func.attr in _VIEW_METHODS and resolution_of(value.func) is None:
            return self._may_view_argument(value.func.value)
        if isinstance(value, gast.IfExp):
            return self._may_view_argument(value.body) or \
                self._may_view_argument(value.orelse)
        return False

    def _may_yield_argument(self, iterable) -> bool:
        """May a loop over ``iterable`` bind its target to an argument or a view of one
        (``for c in [x, y]``, ``for row in x``, ``for i, row in enumerate(x)``)?"""
        if isinstance(iterable, (gast.List, gast.Tuple, gast.Set)):
            return any(self._may_view_argument(e.value if isinstance(e, gast.Starred)
                                               else e) or
                       isinstance(e, gast.Starred) and self._may_yield_argument(e.value)
                       for e in iterable.elts)
        if isinstance(iterable, gast.Call):
            resolved = resolution_of(iterable.func)
            if resolved is not None and resolved.qualname in _PASS_THROUGH_ITERATORS:
                return any(self._may_yield_argument(a) for a in iterable.args)
            return False
        return self._may_view_argument(iterable)

    def _aliasing_targets(self, target, iterable) -> set[str]:
        """The names of a loop target that may be bound to an argument or a view of one:
        ``enumerate``'s index never is, and ``zip`` pairs each name with its iterable."""
        if isinstance(target, (gast.Tuple, gast.List)) and isinstance(iterable, gast.Call) \
                and not iterable.keywords:
            resolved = resolution_of(iterable.func)
            qualname = resolved.qualname if resolved is not None else None
            if qualname == "builtins.enumerate" and len(target.elts) == 2 and \
                    len(iterable.args) == 1:
                return self._aliasing_targets(target.elts[1], iterable.args[0])
            if qualname == "builtins.zip" and len(target.elts) == len(iterable.args) and \
                    not any(isinstance(a, gast.Starred) for a in iterable.args):
                return set().union(*(self._aliasing_targets(t, a)
                                     for t, a in zip(target.elts, iterable.args)))
        if not self._may_yield_argument(iterable):
            return set()
        return {name.id for name in gast.walk(target)
                if isinstance(name, gast.Name) and isinstance(name.ctx, gast.Store)}

    def visit_For(self, node):
        self.visit(node.iter)
        aliasing = self._aliasing_targets(node.target, node.iter)
        # twice: what the first iteration binds (``z = x``) is what the second one sees
        for _ in range(2):
            self._bind_loop_target(node.target, aliasing)
            for statement in node.body:
                self.visit(statement)
        for statement in node.orelse:
            self.visit(statement)

    def _bind_loop_target(self, target, aliasing: set[str]) -> None:
        """The loop variable is rebound: an argument (alias) only if the loop may yield
        one, never because of what the name held before the loop."""
        self._note_assigned([target])
        for name in _target_names(target):
            if isinstance(name, gast.Name) and isinstance(name.ctx, gast.Store):
                if name.id in aliasing:
                    self.aliases.add(name.id)
                else:
                    self.aliases.discard(name.id)

    def visit_While(self, node):
        for _ in range(2):   # as for loops: the second iteration sees the first's aliases
            self.visit(node.test)
            for statement in node.body:
                self.visit(statement)
        for statement in node.orelse:
            self.visit(statement)

    def visit_If(self, node):
        """Either branch may run: after the ``if`` a name may alias an argument if it may
        on one path, and a parameter is rebound only if it is on both."""
        self.visit(node.test)
        before = (set(self.assigned), set(self.aliases), set(self.outside))
        for statement in node.body:
            self.visit(statement)
        after_body = (self.assigned, self.aliases, self.outside)
        self.assigned, self.aliases, self.outside = (set(before[0]), set(before[1]),
                                                     set(before[2]))
        for statement in node.orelse:
            self.visit(statement)
        self.assigned &= after_body[0]
        self.aliases |= after_body[1]
        self.outside |= after_body[2]

    def _note_assigned(self, targets):
        for target in targets:
            for name in _target_names(target):
                if isinstance(name, gast.Name) and isinstance(name.ctx, gast.Store):
                    self.assigned.add(name.id)
                    if name.id in self.parameters:
                        self.rebound.setdefault(name.id, name)

    def _check_target(self, target, assignment: str = "="):
        if isinstance(target, (gast.Tuple, gast.List, gast.Starred)):   # `a[0], b = v`
            for element in getattr(target, "elts", None) or [target.value]:
                self._check_target(element, assignment)
            return
        if is_shape_target(target) and assignment == "=":
            self._check_shape_assignment(target)
            return
        if isinstance(target, gast.Attribute):
            self.fail(target, "assigning to an attribute mutates an object, which PSC "
                              "functions cannot do", "build a new value instead")
        if isinstance(target, gast.Subscript):
            base = target.value
            while isinstance(base, gast.Subscript):
                base = base.value
            if isinstance(base, gast.Name):
                self._check_modified(base.id, target,
                                     f"`{gast.unparse(target).strip()} {assignment} ...`")

    def _check_shape_assignment(self, target) -> None:
        """``x.shape = n`` (`rules.shape_assignment`): on the function's own array only,
        and one no other name may alias (NumPy would reshape the alias too)."""
        name = target.value.id
        self._check_modified(name, target, f"`{name}.shape = ...`", updatable=False)
        if name in _bare_name_aliases(self.function):
            self.fail(target, f"`{name}.shape = ...` reshapes the array object in place, "
                              f"and another name may be bound to the same array as {name!r} "
                              "(an assignment of one name to another): it would keep its "
                              "old shape here", f"write `{name} = {name}.reshape(...)`")

    def _check_modified(self, name: str, node, what: str, updatable: bool = True,
                        augmented: bool = False) -> None:
        """``what`` (an element assignment, an in-place method, a helper's update)
        modifies ``name`` in place.  A traced parameter still bound to the argument is
        updated (`updatable`: the update is a NumPy one the caller gets back, see
        `rules.argument_updates`); refused for an alias of one, for a static argument,
        and for a name that is not this function's own."""
        if updatable and not self.nested and self._is_argument(name):
            self._note_update(name, node, augmented)
            return
        if name in self.outside:
            self.fail(node, f"{what} would modify a global's (or closure variable's) "
                            f"object in place ({name!r} is bound to it): PSC functions "
                            "may not modify globals",
                      f"copy it first (`{name} = {name}.copy()`) and return what you built")
        if name in self.parameters and name not in self.assigned:
            self.fail(node, f"{what} would modify the argument {name!r} in place",
                      f"copy it first (`{name} = {name}.copy()`) or build a new array")
        if name in self.aliases:
            self.fail(node, f"{what} would modify an argument in place ({name!r} is bound "
                            "to one)", f"copy it first (`{name} = {name}.copy()`)")
        if name not in self.scope.bound and name not in self.scope.parameters:
            owner = "an enclosing function" if self._enclosing_local(name) else "the module"
            self.fail(node, f"{what} would modify {name!r}, a variable of {owner}: PSC "
                            "functions may not modify globals (or other functions' "
                            "variables)",
                      f"copy it into a local first (`{name}_local = {name}.copy()`) and "
                      "update and return that")

    def _enclosing_local(self, name: str) -> bool:
        parent = self.scope.parent
        return parent is not None and parent.is_local(name)

    def _check_inplace_method(self, node) -> None:
        """``x.sort()`` / ``x.fill(v)`` modify ``x``: the front end rewrites them into an
        update of a local, which an argument or a global cannot take."""
        func = node.func
        if is_inplace_method_call(node):
            self._check_modified(func.value.id, node, f"`{func.value.id}.{func.attr}(...)`")
        elif is_inplace_function_call(node) and id(node) in self.expression_calls:
            target = inplace_function_target(node).id
            self._check_modified(target, node,
                                 f"`{gast.unparse(func).strip()}(..., {target}, ...)`")

    def _check_mutating_method(self, node) -> None:
        """``COUNTER.append(1)``, ``STATE["log"].extend(v)``, ``params.pop()``: a method
        that modifies its object, called on an argument or on a global's object, would
        run once while the program is built (and change the caller's object)."""
        func = node.func
        if not (isinstance(func, gast.Attribute) and func.attr in MUTATING_METHODS and
                resolution_of(func) is None):
            return
        if is_inplace_method_call(node) and not self.nested and \
                self._is_argument(func.value.id):
            return   # an array argument's sort/fill: an update, `_check_inplace_method`'s
        base = func.value
        while isinstance(base, (gast.Subscript, gast.Attribute)):
            base = base.value
        if not isinstance(base, gast.Name) or resolution_of(base) is not None and \
                resolution_of(base).kind not in (Kind.VALUE, Kind.UNKNOWN):
            return   # a module's function (np.sort), a call's result...
        name = base.id
        what = f"`{gast.unparse(func).strip()}(...)`"
        if self.nested and self.scope.is_local(name) and name not in self.outside:
            # a def inside the PSC function updating its caller's local list: build-time
            # Python on an object the PSC function owns
            return
        self._check_modified(name, node, what, updatable=False)

    def visit_FunctionDef(self, node):
        if node is not self.function:
            for decorator in node.decorator_list:
                self.visit(decorator)
            type(self)(self.source, node, self.static, nested=True).visit_body(node)
            return
        self.visit_body(node)

    def visit_body(self, node):
        for statement in node.body:
            self.visit(statement)
        if not self.nested:
            self._check_rebinding_of_updated()
            setanno(node, Anno.ARGUMENT_UPDATES,
                    {name: self.updated[name][1] for name in self.scope.parameters
                     if name in self.updated})

    def _check_rebinding_of_updated(self) -> None:
        """NumPy's caller sees the updates made before a parameter is rebound, and none
        after: PSC writes back the parameter's final value, so it refuses the mix."""
        for name, (update, _) in self.updated.items():
            rebinding = self.rebound.get(name)
            if rebinding is None:
                continue
            where = self.source.location(update)
            self.fail(rebinding, f"{name!r} is updated in place (line {where.line}) while "
                                 f"it is the argument, and rebound here: the caller would see "
                                 "only the updates made before the rebinding, which PSC "
                                 "cannot write back", f"give the new value another name, or "
                                 f"copy first on every path (`{name} = {name}.copy()`) so "
                                 "the argument is never updated")


for _kind in _UNSUPPORTED:
    setattr(_SubsetChecker, f"visit_{_kind.__name__}", _SubsetChecker._refuse)


def _target_names(target):
    """`gast.walk` of an assignment target (breadth first: the first name so found is the
    one recorded), without the walk for the usual target, a name."""
    return (target,) if isinstance(target, gast.Name) else gast.walk(target)


def _bare_name_aliases(function) -> set[str]:
    """Names on either side of an assignment of one name to another (``y = x``, also
    inside tuples and lists: ``a, b = x, y``; ``ys = [x]``)."""
    found = set()
    for node in gast.walk(function):
        if isinstance(node, (gast.Assign, gast.AnnAssign, gast.NamedExpr)) and \
                node.value is not None:
            values = [node.value]
            while values:
                value = values.pop()
                if isinstance(value, gast.Name):
                    found.add(value.id)
                    targets = node.targets if isinstance(node, gast.Assign) else [node.target]
                    found |= {n.id for t in targets for n in gast.walk(t)
                              if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
                elif isinstance(value, (gast.Tuple, gast.List, gast.Set)):
                    values.extend(value.elts)
    return found


# attributes and methods of an array that return a view of it, not a copy
_VIEW_ATTRIBUTES = frozenset({"T", "mT", "real", "imag", "flat", "base"})
_VIEW_METHODS = frozenset({"reshape", "ravel", "view", "transpose", "squeeze", "swapaxes",
                           "diagonal"})
# iterators whose elements are their iterables' elements (or tuples of them)
_PASS_THROUGH_ITERATORS = frozenset({"builtins.enumerate", "builtins.zip",
                                     "builtins.reversed", "builtins.iter"})

_OPERATOR_TEXT = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/",
                  gast.FloorDiv: "//", gast.Mod: "%", gast.Pow: "**", gast.MatMult: "@",
                  gast.BitAnd: "&", gast.BitOr: "|", gast.BitXor: "^", gast.LShift: "<<",
                  gast.RShift: ">>"}


def _bound_only_by_augmented_assignment(function, scope) -> set[str]:
    """Names the function binds, but only as ``name op= ...`` targets (never a parameter,
    an assignment, a loop target, an import...): Python raises UnboundLocalError there."""
    augmented_targets, names = set(), []
    other = set(scope.parameters)
    for node in walk(function):   # one walk; the augmented targets are known only after it
        if isinstance(node, gast.Name):
            if not isinstance(node.ctx, gast.Load):
                names.append(node)
        elif isinstance(node, gast.AugAssign):
            if isinstance(node.target, gast.Name):
                augmented_targets.add(id(node.target))
        elif isinstance(node, gast.FunctionDef):
            other.add(node.name)
        elif isinstance(node, (gast.Import, gast.ImportFrom)):
            other.update(a.asname or a.name.split(".")[0] for a in node.names)
    augmented = set()
    for node in names:
        (augmented if id(node) in augmented_targets else other).add(node.id)
    return augmented - other


def check_subset(source, function: gast.FunctionDef, static_argnames=()) -> None:
    """Raise a `PSCSyntaxError` at the first construct outside the PSC subset."""
    _SubsetChecker(source, function, static_argnames).visit(function)


# --- helpers called with static arguments ----------------------------------------------------
#
# A plain Python helper that a PSC function calls with static arguments only is simply
# called (`runtime.calls.transpiled`): it is build-time Python.  Its body is checked for
# purity all the same (impure calls, mutation of globals), and so are the Python helpers it
# calls in turn: ``noise(x.shape)`` calling ``np.random.normal`` would otherwise be frozen
# into the program like a direct call.  Library code (the standard library, installed
# packages) is trusted: caches and warnings there are not the user's side effects.

class _PurityChecker(_SubsetChecker):
    """Only the purity rules of `_SubsetChecker`: the helper runs as Python, so any syntax
    is fine, and what it does to its own arguments is its caller's business."""

    def visit_Import(self, node):
        pass

    visit_ImportFrom = visit_Import

    def _check_subset_call(self, node, resolved) -> None:
        pass

    def _check_target(self, target, assignment: str = "="):
        if isinstance(target, (gast.Subscript, gast.Tuple, gast.List, gast.Starred)):
            super()._check_target(target, assignment)

    def _argument_aliases(self) -> set[str]:
        return set()

    def _is_argument(self, name: str) -> bool:
        return False   # what a helper run as Python does to its arguments is Python's

    def _check_modified(self, name: str, node, what: str, updatable: bool = True,
                        augmented: bool = False) -> None:
        if name in self.outside or not self.scope.is_local(name):
            super()._check_modified(name, node, what, updatable=False)

    def _check_inplace_method(self, node) -> None:
        pass   # `_check_mutating_method` covers sort/fill on what the helper does not own


for _kind in _UNSUPPORTED:   # any syntax is fine: visited as any other node
    setattr(_PurityChecker, f"visit_{_kind.__name__}", NodeVisitor.generic_visit)

_checked_helpers: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_TRUSTED_PATHS = tuple(os.path.realpath(sysconfig.get_paths()[key]) + os.sep
                       for key in ("stdlib", "purelib", "platlib"))
_PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep
_PROJECT_PACKAGES = tuple(_PROJECT_ROOT + package + os.sep
                          for package in ("runtime", "transpiler", "emit"))


def check_helper_purity(fn) -> None:
    """Raise a `PSCError` at the first impure call or global mutation in the Python
    function ``fn`` or a Python helper it calls (once per function object)."""
    pending = [fn]
    while pending:
        current = pending.pop()
        if not _needs_check(current):
            continue
        _checked_helpers[current] = True   # before checking: recursion ends here
        parsed = _parsed(current)
        if parsed is None:
            continue
        source, tree = parsed
        try:
            _PurityChecker(source, tree).visit(tree)
        except Exception:
            del _checked_helpers[current]   # a later call reports it again
            raise
        pending.extend(_python_callees(current, tree))


def _needs_check(fn) -> bool:
    if not isinstance(fn, types.FunctionType) or getattr(fn, "__psc_pure__", False):
        return False
    if fn in _checked_helpers:
        return False
    filename = fn.__code__.co_filename
    return not filename.startswith("<") and \
        not os.path.realpath(filename).startswith(_TRUSTED_PATHS + _PROJECT_PACKAGES)


def _parsed(fn):
    try:
        source = function_source(fn)
        tree = source.parse()
    except (PSCSyntaxError, OSError, TypeError, SyntaxError):
        return None   # no source to read: nothing to check
    if not isinstance(tree, gast.FunctionDef):
        return None
    analyze_scopes(tree)
    annotate_names(tree, RuntimeResolver(fn.__globals__, closure_values(fn)))
    return source, tree


def _python_callees(fn, tree) -> list:
    """The Python functions ``tree`` (``fn``'s source) calls by a global or closure name
    (``helper(...)``, ``module.helper(...)``)."""
    closure = closure_values(fn)
    found = []
    for node in gast.walk(tree):
        if not isinstance(node, gast.Call) or resolution_of(node.func) is None:
            continue
        path, func = [], node.func
        while isinstance(func, gast.Attribute):
            path.append(func.attr)
            func = func.value
        if not isinstance(func, gast.Name):
            continue
        value = closure.get(func.id, fn.__globals__.get(func.id))
        for attr in reversed(path):
            value = getattr(value, attr, None)
        if isinstance(value, types.FunctionType):
            found.append(value)
    return found
