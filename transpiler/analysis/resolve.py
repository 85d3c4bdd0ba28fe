"""Name resolution: what each free name of a PSC function denotes.

Two resolvers give the same `Resolution`s: `RuntimeResolver` reads the decorated function's
globals and closure (the decorator's path); `StaticResolver` reads only the module's
``import``s, ``def``s and assignments, never running it (the CLI's path).
`annotate_names` puts `Anno.RESOLVED` on every Name load that is not local, and on
attribute chains rooted in a module (``np.linalg.norm`` -> ``numpy.linalg.norm``).
"""
from __future__ import annotations

import builtins
import dataclasses
import enum
import types

import gast

from runtime import qualified_name
from runtime.purity import display_name, impurity
from runtime.public_names import PACKAGES, PRIMITIVES, STATIC_RANGE

CUSTOM_DERIVATIVE_DECORATORS = ("custom_jvp", "custom_vjp")

from ..anno import Anno, getanno, setanno
from .activity import Scope, ScopedVisitor, scope_of


class Kind(enum.Enum):
    NUMPY = "numpy"                  # NumPy, a submodule, or one of their attributes
    BUILTIN = "builtin"              # len, range, abs...
    PRIMITIVE = "primitive"          # runtime.public_names.PRIMITIVES: while_loop, grad...
    RULE = "rule"                    # another object with a registered translation rule
    USER_FUNCTION = "user_function"  # Python source we transpile when it is first called
    MODULE = "module"                # another module (math...) or its attribute
    VALUE = "value"                  # a module-level constant: static
    UNKNOWN = "unknown"              # not resolvable statically


@dataclasses.dataclass(frozen=True)
class Resolution:
    kind: Kind
    qualname: str | None = None

    def attribute(self, attr: str) -> "Resolution | None":
        """The resolution of ``<this>.attr`` when this is a module-like namespace."""
        if self.kind in (Kind.NUMPY, Kind.MODULE) and self.qualname:
            return Resolution(self.kind, f"{self.qualname}.{attr}")
        return None


def _classify_qualname(qualname: str) -> Kind:
    root = qualname.split(".")[0]
    if root == "numpy":
        return Kind.NUMPY
    if root in PACKAGES and qualname.rsplit(".", 1)[-1] in PRIMITIVES:
        return Kind.PRIMITIVE
    return Kind.MODULE


class RuntimeResolver:
    """Resolves from live values: a function's globals and closure."""

    def __init__(self, globals_: dict, closure: dict | None = None):
        self.globals = globals_
        self.closure = closure or {}

    def resolve(self, name: str) -> Resolution:
        if name in self.closure:
            return classify_value(self.closure[name])
        if name in self.globals:
            return classify_value(self.globals[name])
        if hasattr(builtins, name):
            return Resolution(Kind.BUILTIN, f"builtins.{name}")
        return Resolution(Kind.UNKNOWN, name)


def classify_value(value) -> Resolution:
    """The `Resolution` of a live object."""
    if isinstance(value, types.ModuleType):
        return Resolution(_classify_qualname(value.__name__), value.__name__)
    if getattr(value, "__psc_primitive__", False):
        return Resolution(Kind.PRIMITIVE, f"transpiler.{value.__name__}")
    if getattr(value, "__psc_function__", False):
        return Resolution(Kind.USER_FUNCTION, getattr(value, "__qualname__", None))
    name = getattr(value, "__name__", None)
    if name and getattr(builtins, name, None) is value:
        return Resolution(Kind.BUILTIN, f"builtins.{name}")
    if _impure(value):   # `from random import random`, `from numpy.random import normal`
        return Resolution(Kind.MODULE, display_name(value))
    registered = qualified_name(value)
    if registered is not None:
        kind = Kind.NUMPY if registered.startswith("numpy.") else Kind.RULE
        return Resolution(kind, registered)
    module = getattr(value, "__module__", None) or ""
    if module.split(".")[0] == "numpy" or isinstance(value, type(abs)) and module == "numpy":
        return Resolution(Kind.NUMPY, f"numpy.{name}")
    if isinstance(value, (types.FunctionType, types.MethodType)):
        return Resolution(Kind.USER_FUNCTION, f"{module}.{value.__qualname__}")
    return Resolution(Kind.VALUE, None)


def _impure(value) -> bool:
    try:
        return callable(value) and impurity(value) is not None
    except Exception:   # an object whose attributes cannot be read: not one we know
        return False


class StaticResolver:
    """Resolves from a module's source alone: imports, top-level defs and assignments."""

    def __init__(self, module: gast.Module, module_name: str):
        self.bindings: dict[str, Resolution] = {}
        for node in module.body:
            self._bind(node, module_name)

    def _bind(self, node, module_name: str) -> None:
        if isinstance(node, gast.Import):
            for alias in node.names:
                if alias.asname:
                    self.bindings[alias.asname] = Resolution(
                        _classify_qualname(alias.name), alias.name)
                else:
                    root = alias.name.split(".")[0]
                    self.bindings[root] = Resolution(_classify_qualname(root), root)
        elif isinstance(node, gast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                qualname = f"{node.module}.{alias.name}"
                self.bindings[alias.asname or alias.name] = Resolution(
                    _classify_qualname(qualname), qualname)
        elif isinstance(node, gast.FunctionDef) and any(
                self._is_custom_derivative(d) for d in node.decorator_list):
            # a custom_jvp/custom_vjp function is a primitive, as `classify_value` says
            self.bindings[node.name] = Resolution(Kind.PRIMITIVE, f"transpiler.{node.name}")
        elif isinstance(node, gast.FunctionDef):
            self.bindings[node.name] = Resolution(Kind.USER_FUNCTION,
                                                  f"{module_name}.{node.name}")
        elif isinstance(node, (gast.Assign, gast.AnnAssign, gast.AugAssign)):
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            for target in targets:
                for name in gast.walk(target):
                    if isinstance(name, gast.Name):
                        self.bindings[name.id] = Resolution(Kind.VALUE, None)

    def _expression(self, node) -> Resolution | None:
        """The resolution of a name or attribute chain from the bindings so far."""
        if isinstance(node, gast.Name):
            return self.bindings.get(node.id)
        if isinstance(node, gast.Attribute):
            base = self._expression(node.value)
            return base.attribute(node.attr) if base is not None else None
        return None

    def _is_custom_derivative(self, decorator) -> bool:
        """``@custom_jvp``, ``@custom_jvp(...)`` or ``@functools.partial(custom_jvp, ...)``
        (and the same for ``custom_vjp``)."""
        if isinstance(decorator, gast.Call):
            func = self._expression(decorator.func)
            if func is not None and (func.qualname or "").endswith("functools.partial") \
                    and decorator.args:
                return self._is_custom_derivative(decorator.args[0])
            decorator = decorator.func
        resolved = self._expression(decorator)
        qualname = (resolved.qualname or "") if resolved is not None else ""
        # (`transpiler.custom_jvp` resolves as an attribute of a module: by its name)
        return qualname.split(".")[0] in PACKAGES and \
            qualname.rsplit(".", 1)[-1] in CUSTOM_DERIVATIVE_DECORATORS

    def resolve(self, name: str) -> Resolution:
        if name in self.bindings:
            return self.bindings[name]
        if hasattr(builtins, name):
            return Resolution(Kind.BUILTIN, f"builtins.{name}")
        return Resolution(Kind.UNKNOWN, name)


class _NameAnnotator(ScopedVisitor):
    def __init__(self, resolver, scope: Scope):
        super().__init__(scope)
        self.resolver = resolver
        # a free name denotes one thing during the pass: resolved once (a `Resolution` is
        # immutable, so the nodes can share it), and so are attributes of what it denotes
        self._free: dict[str, Resolution] = {}
        self._attributes: dict[tuple, Resolution | None] = {}

    def visit_Name(self, node):
        if not isinstance(node.ctx, gast.Load):
            return
        if not self.scope.is_local(node.id):
            resolved = self._free.get(node.id)
            if resolved is None:
                resolved = self._free[node.id] = self.resolver.resolve(node.id)
            setanno(node, Anno.RESOLVED, resolved)
            return
        imported = self.scope.imported(node.id)
        if imported is not None:   # `import math` in the function: as a module-level one
            setanno(node, Anno.RESOLVED, Resolution(_classify_qualname(imported), imported))

    def visit_Attribute(self, node):
        self.generic_visit(node)
        base = getanno(node.value, Anno.RESOLVED)
        if base is not None:
            key = (base, node.attr)
            try:
                resolved = self._attributes[key]
            except KeyError:
                resolved = self._attributes[key] = base.attribute(node.attr)
            if resolved is not None:
                setanno(node, Anno.RESOLVED, resolved)


def annotate_names(function: gast.FunctionDef, resolver) -> None:
    annotator = _NameAnnotator(resolver, scope_of(function))
    annotator.visit(function)
    # which kinds of thing the function's free names denote (`Anno.RESOLVED_KINDS`)
    setanno(function, Anno.RESOLVED_KINDS,
            frozenset(resolved.kind for resolved in annotator._free.values()))


def resolution_of(node) -> Resolution | None:
    return getanno(node, Anno.RESOLVED)


def range_call(node) -> str | None:
    """"range" or "static_range" when ``node`` calls one of them (by its resolution)."""
    if isinstance(node, gast.Call):
        resolved = resolution_of(node.func)
        qualname = (resolved.qualname or "") if resolved is not None else ""
        if qualname == "builtins.range":
            return "range"
        if qualname.endswith("." + STATIC_RANGE):
            return STATIC_RANGE
    return None
