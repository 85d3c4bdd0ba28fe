"""Scopes: which names a function (or lambda, or comprehension) binds, reads, and takes.

Annotates every FunctionDef and Lambda with `Anno.SCOPE`.  Nested functions get their own
scope whose free names are looked up in the enclosing scopes first, as Python does.
"""
from __future__ import annotations

import dataclasses

import gast

from ..anno import Anno, getanno, setanno
from .walk import NodeVisitor


@dataclasses.dataclass
class Scope:
    parameters: list[str]
    bound: set[str] = dataclasses.field(default_factory=set)      # assigned anywhere
    functions: set[str] = dataclasses.field(default_factory=set)  # bound only by def/lambda
    read: set[str] = dataclasses.field(default_factory=set)
    parent: "Scope | None" = None
    # names bound only by a function-local import -> the qualified name they denote
    imports: dict = dataclasses.field(default_factory=dict)

    def is_local(self, name: str) -> bool:
        scope = self
        while scope is not None:
            if name in scope.bound or name in scope.parameters:
                return True
            scope = scope.parent
        return False

    def imported(self, name: str) -> str | None:
        """The qualified name ``name`` denotes when the innermost scope binding it binds it
        by a function-local import alone (``import math``, ``from math import pi``)."""
        scope = self
        while scope is not None:
            if name in scope.parameters:
                return None
            if name in scope.bound:
                return scope.imports.get(name)
            scope = scope.parent
        return None

    def is_local_function(self, name: str) -> bool:
        scope = self
        while scope is not None:
            if name in scope.parameters or (name in scope.bound and name not in scope.functions):
                return False
            if name in scope.functions:
                return True
            scope = scope.parent
        return False

    @property
    def all_names(self) -> set[str]:
        return set(self.parameters) | self.bound | self.read


def _parameter_names(args: gast.arguments) -> list[str]:
    names = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    for extra in (args.vararg, args.kwarg):
        if extra is not None:
            names.append(extra.id)
    return names


class _ScopeBuilder(NodeVisitor):
    def __init__(self, scope: Scope):
        self.scope = scope
        self._non_function_bindings: set[str] = set()

    def visit_Name(self, node):
        if isinstance(node.ctx, (gast.Store, gast.Del)):
            self.scope.bound.add(node.id)
            self._non_function_bindings.add(node.id)
        else:
            self.scope.read.add(node.id)

    def visit_Assign(self, node):
        if isinstance(node.value, gast.Lambda) and len(node.targets) == 1 and \
                isinstance(node.targets[0], gast.Name):   # `g = lambda ...` defines g
            self.scope.bound.add(node.targets[0].id)
            self.scope.functions.add(node.targets[0].id)
            self.visit(node.value)
            return
        self.generic_visit(node)

    def visit_Import(self, node):
        for alias in node.names:
            if alias.asname:
                self._bind_import(alias.asname, alias.name)
            else:   # `import a.b` binds `a`
                root = alias.name.split(".")[0]
                self._bind_import(root, root)

    def visit_ImportFrom(self, node):
        for alias in node.names:
            qualname = f"{node.module}.{alias.name}" if node.module and not node.level \
                else None
            self._bind_import(alias.asname or alias.name, qualname)

    def _bind_import(self, name: str, qualname: str | None) -> None:
        self.scope.bound.add(name)
        if qualname is not None:
            self.scope.imports[name] = qualname

    def visit_FunctionDef(self, node):
        for default in node.args.defaults + node.args.kw_defaults:
            if default is not None:
                self.visit(default)
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.scope.bound.add(node.name)
        self.scope.functions.add(node.name)
        analyze_scopes(node, self.scope)

    def visit_Lambda(self, node):
        for default in node.args.defaults:
            self.visit(default)
        analyze_scopes(node, self.scope)

    def _comprehension(self, node):
        # Comprehension targets are local to the comprehension in Python 3; treating
        # them as reads of the enclosing scope only matters for names shadowing globals.
        inner = Scope([], parent=self.scope)
        builder = _ScopeBuilder(inner)
        for generator in node.generators:
            builder.visit(generator)
        for field in ("elt", "key", "value"):
            if hasattr(node, field):
                builder.visit(getattr(node, field))
        setanno(node, Anno.SCOPE, inner)
        self.scope.read |= inner.read - inner.bound

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def finish(self):
        self.scope.functions -= self._non_function_bindings | set(self.scope.imports)
        for name in self._non_function_bindings & set(self.scope.imports):
            del self.scope.imports[name]   # also assigned: not a static binding


def analyze_scopes(node, parent: Scope | None = None) -> Scope:
    """Annotate ``node`` (FunctionDef or Lambda) and everything nested with `Anno.SCOPE`."""
    scope = Scope(_parameter_names(node.args), parent=parent)
    builder = _ScopeBuilder(scope)
    body = node.body if isinstance(node.body, list) else [node.body]
    for statement in body:
        builder.visit(statement)
    builder.finish()
    setanno(node, Anno.SCOPE, scope)
    return scope


def scope_of(node) -> Scope:
    return getanno(node, Anno.SCOPE)


class ScopedVisitor(NodeVisitor):
    """A visitor that knows the innermost scope (``self.scope``) of the node it visits."""

    def __init__(self, scope: Scope):
        self.scope = scope

    def _scoped(self, node):
        saved = self.scope
        self.scope = scope_of(node) or saved
        self.generic_visit(node)
        self.scope = saved

    visit_FunctionDef = visit_Lambda = _scoped
    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _scoped


class _FreeNames(ScopedVisitor):
    def __init__(self, scope):
        super().__init__(scope)
        self.found: set[str] = set()
        self.every: set[str] = set()

    def visit_Name(self, node):
        self.every.add(node.id)
        if isinstance(node.ctx, gast.Load) and not self.scope.is_local(node.id):
            self.found.add(node.id)


def free_names(function) -> set[str]:
    """Names read anywhere in ``function`` (nested functions included) that none of the
    enclosing scopes binds: module globals, closure variables and builtins."""
    return names_and_free_names(function)[1]


def names_and_free_names(function) -> tuple[set[str], set[str]]:
    """Every `gast.Name` id in ``function``, and `free_names`, from one pass."""
    collector = _FreeNames(scope_of(function))
    collector.visit(function)
    return collector.every, collector.found
