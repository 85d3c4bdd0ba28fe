"""Binding times: which expressions are static (known at build time) and which traced.

The PSC subset's rule: parameters are traced unless declared static; shapes, ``ndim``,
dtypes, sizes and lengths are static; module-level names are static; an expression with a
traced operand is traced. A variable is traced if any assignment to it is
(flow-insensitive, iterated to a fixpoint), which is conservative: a traced verdict may
meet a static value at build time, never the other way round for the rules that rely on it.
A ``for`` loop that may be staged (`rules.decisions.is_staged_for`: over a traced array, or
over ``range`` when it carries a traced variable) makes its index and everything it carries
traced: while the program is built they are the loop's traced state, whatever they start
as. Liveness must have run (the carried variables are those live around the loop).

Annotates every expression node with `Anno.BINDING_TIME`.
"""
from __future__ import annotations

import gast
import numpy as np

from runtime.public_names import STATIC_RANGE

from ..anno import Anno, BindingTime, getanno, setanno
from .liveness import carried
from .resolve import Kind, range_call, resolution_of
from .walk import NodeVisitor, walk

STATIC, TRACED = BindingTime.STATIC, BindingTime.TRACED
_STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "size", "itemsize", "nbytes"})
# array methods that modify the array; `rules/inplace_methods.py` rewrites them on locals
INPLACE_METHODS = frozenset({"sort", "fill"})
# NumPy functions that write into their first argument; rewritten likewise on a variable
INPLACE_FUNCTIONS = frozenset({"numpy.put", "numpy.put_along_axis", "numpy.fill_diagonal",
                               "numpy.place", "numpy.copyto"})
_STATIC_BUILTINS = frozenset({"builtins.len", "builtins.isinstance", "builtins.type",
                              "builtins.callable", "builtins.hasattr", "builtins.id"})


def is_inplace_method_call(node) -> bool:
    """``name.sort(...)`` / ``name.fill(...)``, which rebind ``name`` once rewritten (not a
    module's function: ``np.sort``)."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
        node.func.attr in INPLACE_METHODS and isinstance(node.func.value, gast.Name) and \
        resolution_of(node.func) is None


def is_inplace_function_call(node) -> bool:
    """``np.put(name, ...)`` and the other `INPLACE_FUNCTIONS` with a variable as the
    array, and a ufunc given a variable as its ``out`` (``np.add(a, b, name)``,
    ``np.add(a, b, out=name)``): they rebind ``name`` once rewritten
    (`rules/inplace_methods.py`)."""
    return inplace_function_target(node) is not None


def inplace_function_target(node) -> gast.Name | None:
    """The variable an in-place NumPy function call writes into, or None."""
    if not isinstance(node, gast.Call):
        return None
    resolved = resolution_of(node.func)
    if resolved is None or resolved.qualname is None:
        return None
    if resolved.qualname in INPLACE_FUNCTIONS:
        target = node.args[0] if node.args else None
    else:
        target = _ufunc_out_argument(node, resolved.qualname)
    return target if isinstance(target, gast.Name) else None


def _ufunc_out_argument(node, qualname: str):
    """The ``out`` of a NumPy ufunc call with one output: the argument after the inputs,
    or ``out=name`` / ``out=(name,)``."""
    ufunc = getattr(np, qualname[len("numpy."):], None) if \
        qualname.count(".") == 1 and qualname.startswith("numpy.") else None
    if not isinstance(ufunc, np.ufunc) or ufunc.nout != 1:
        return None
    if len(node.args) == ufunc.nin + 1:
        return node.args[ufunc.nin]
    for keyword in node.keywords:
        if keyword.arg == "out":
            value = keyword.value
            if isinstance(value, gast.Tuple) and len(value.elts) == 1:
                value = value.elts[0]
            return value
    return None


def inplace_target(node) -> str | None:
    """The variable an in-place method or function call statement rebinds, or None."""
    if is_inplace_method_call(node):
        return node.func.value.id
    target = inplace_function_target(node)
    return target.id if target is not None else None


def is_shape_target(target) -> bool:
    """``name.shape`` as an assignment target (`rules/shape_assignment.py` rewrites it
    into ``name = psc.inplace_shape(name, ...)``)."""
    return isinstance(target, gast.Attribute) and target.attr == "shape" and \
        isinstance(target.value, gast.Name)


class _Evaluator:
    """Computes the binding time of expressions in an environment of variables.

    Verdicts are remembered per node until the environment changes (`forget`); the
    variables a verdict read are collected in ``reads`` (shared with the evaluators of
    comprehensions inside), which tells the fixpoint whether a change came too late."""

    def __init__(self, env: dict[str, BindingTime], reads: set | None = None):
        self.env = env
        self.reads = set() if reads is None else reads
        self._verdicts: dict[int, BindingTime] = {}   # id(node) -> verdict; nodes outlive it

    def forget(self) -> None:
        """The environment changed: verdicts computed so far may be stale."""
        self._verdicts.clear()

    def join(self, nodes) -> BindingTime:
        result = STATIC
        for node in nodes:
            if node is not None and self.of(node) is TRACED:
                result = TRACED
        return result

    def of(self, node) -> BindingTime:
        verdict = self._verdicts.get(id(node))
        if verdict is None:
            method = _METHODS.get(node.__class__)
            verdict = method(self, node) if method else self.join(gast.iter_child_nodes(node))
            self._verdicts[id(node)] = verdict
        return verdict

    def _Constant(self, node):
        return STATIC

    def _Name(self, node):
        self.reads.add(node.id)
        return self.env.get(node.id, STATIC)

    def _Attribute(self, node):
        if node.attr in _STATIC_ATTRIBUTES or resolution_of(node) is not None:
            return STATIC
        return self.of(node.value)

    def _Lambda(self, node):
        return STATIC

    def _Call(self, node):
        resolved = resolution_of(node.func)
        if resolved is not None and resolved.qualname in _STATIC_BUILTINS:
            return STATIC
        parts = [*node.args, *(k.value for k in node.keywords)]
        if isinstance(node.func, gast.Attribute) and resolved is None:
            parts.append(node.func.value)   # a method: its object counts
        elif not (resolved is not None and resolved.kind in (Kind.NUMPY, Kind.BUILTIN,
                                                             Kind.MODULE, Kind.PRIMITIVE)):
            parts.append(node.func)          # a traced callable (a closure over traced data)
        return self.join(parts)

    def _comprehension(self, node):
        env = dict(self.env)
        inner = _Evaluator(env, self.reads)
        for generator in node.generators:
            bt = inner.of(generator.iter)
            for target in gast.walk(generator.target):
                if isinstance(target, gast.Name):
                    env[target.id] = bt
        parts = [getattr(node, f) for f in ("elt", "key", "value") if hasattr(node, f)]
        parts += [c for g in node.generators for c in g.ifs]
        return inner.join(parts)

    _ListComp = _SetComp = _DictComp = _GeneratorExp = _comprehension


# node class -> `_Evaluator` method for it (`_<ClassName>`), looked up once per class
_METHODS = {getattr(gast, name[1:]): method for name, method in vars(_Evaluator).items()
            if name[:1] == "_" and name[1:2].isupper() and hasattr(gast, name[1:])}


def _bind(env, target, bt: BindingTime, value=None, evaluator=None, changed=None) -> bool:
    """Join ``bt`` into the names of ``target``; True when something changed (the names
    that did are added to ``changed``, and ``evaluator`` forgets its verdicts)."""
    if evaluator is not None and isinstance(target, (gast.Tuple, gast.List)) and \
            isinstance(value, (gast.Tuple, gast.List)) and len(target.elts) == len(value.elts):
        any_changed = False
        for t, v in zip(target.elts, value.elts):
            any_changed |= _bind(env, t, evaluator.of(v), v, evaluator, changed)
        return any_changed
    any_changed = False
    for name in walk(target):
        if isinstance(name, gast.Name) and isinstance(name.ctx, gast.Store):
            new = env.get(name.id, STATIC).join(bt)
            if env.get(name.id) is not new:
                env[name.id] = new
                any_changed = True
                if changed is not None:
                    changed.add(name.id)
                if evaluator is not None:   # the next elements' verdicts see the change
                    evaluator.forget()
    return any_changed


def _exits_under_traced_if(statements, evaluator, traced=False) -> bool:
    """Does a break/continue/return (of this level) sit under an if with a traced test?"""
    for node in statements:
        if isinstance(node, (gast.Break, gast.Continue, gast.Return)) and traced:
            return True
        if isinstance(node, gast.If):
            inner = traced or evaluator.of(node.test) is TRACED
            if _exits_under_traced_if(node.body + node.orelse, evaluator, inner):
                return True
    return False


def _updated_variable(target: gast.Subscript):
    """``x`` for ``x[i][j] = v``: the variable an element assignment rebinds."""
    base = target
    while isinstance(base, gast.Subscript):
        base = base.value
    if isinstance(base, gast.Name):
        return gast.Name(base.id, gast.Store(), None, None)
    return base


class _Propagator(NodeVisitor):
    """Joins binding times into variables.  ``control`` is the binding time of the
    decisions the current statement depends on: an assignment under a traced ``if`` (or in
    a loop a traced condition ends) makes its variable traced, whatever it assigns."""

    def __init__(self, env, carried_by=None, expressions_bind=True):
        self.env = env
        # Inside an expression only a lambda (its parameters) and `:=` bind anything:
        # without them in the function, expressions need no visit (their verdicts are
        # asked for where the statements use them)
        self._skips_expressions = not expressions_bind
        self.evaluator = _Evaluator(env)
        self.changed = False
        # a variable changed after a verdict read it: another round must see the change
        self.stale = False
        self.control = STATIC
        self.static_bound: set[str] = set()   # see Anno.STATIC_BOUND
        self._carried = {} if carried_by is None else carried_by   # id(loop) -> carried

    def _bind(self, target, bt, value=None):
        if bt is STATIC:
            self.static_bound |= {n.id for n in walk(target) if isinstance(n, gast.Name)
                                  and isinstance(n.ctx, gast.Store)}
        changed = set()
        if _bind(self.env, target, bt.join(self.control), value,
                 self.evaluator if self.control is STATIC else None, changed):
            self.changed = True
            self.evaluator.forget()
            if not changed.isdisjoint(self.evaluator.reads):
                self.stale = True

    def generic_visit(self, node):
        if not self._skips_expressions:
            return super().generic_visit(node)
        expression = gast.expr
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, gast.AST) and not isinstance(item, expression):
                        self.visit(item)
            elif isinstance(value, gast.AST) and not isinstance(value, expression):
                self.visit(value)

    def _carried_by(self, node) -> list[str]:
        """`carried` (liveness is fixed while binding times are computed: once per loop)."""
        found = self._carried.get(id(node))
        if found is None:
            found = self._carried[id(node)] = carried(node)
        return found

    def _under(self, bt, statements):
        saved = self.control
        self.control = saved.join(bt)
        for statement in statements:
            self.visit(statement)
        self.control = saved

    def visit_If(self, node):
        self._under(self.evaluator.of(node.test), node.body + node.orelse)
        if self.evaluator.of(node.test) is TRACED and any(
                isinstance(n, gast.Return) for n in gast.walk(node)):
            self.control = TRACED   # what follows runs only if that return did not

    def visit_While(self, node):
        exits = TRACED if _exits_under_traced_if(node.body, self.evaluator) else STATIC
        self._under(self.evaluator.of(node.test).join(exits), node.body + node.orelse)

    def visit_Assign(self, node):
        bt = self.evaluator.of(node.value)
        for target in node.targets:
            if isinstance(target, gast.Subscript):
                self._bind(_updated_variable(target), bt)
            else:
                self._bind(target, bt, node.value)

    def visit_AugAssign(self, node):
        target = node.target
        if isinstance(target, gast.Subscript):
            target = _updated_variable(target)
        self._bind(target, self.evaluator.of(node.value))

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self._bind(node.target, self.evaluator.of(node.value))

    def visit_For(self, node):
        iterable = self.evaluator.of(node.iter)
        exits = TRACED if _exits_under_traced_if(node.body, self.evaluator) else STATIC
        if self._may_stage(node, iterable):
            # A staged loop's index is a traced counter, and what it carries is loop
            # state: traced while the program is built, whatever they start as.
            self._bind(node.target, TRACED)
            for name in self._carried_by(node):
                self._bind(gast.Name(name, gast.Store(), None, None), TRACED)
        else:
            # After a traced `break`, the later iterations bind the target only where the
            # loop did not stop: a selected, traced value, even over a static list.
            self._bind(node.target, iterable.join(exits))
        self._under(exits, node.body + node.orelse)

    def _may_stage(self, node: gast.For, iterable: BindingTime) -> bool:
        """`rules.decisions.is_staged_for` on the environment so far: over a traced
        iterable with one target, or over ``range`` when a carried variable is traced (a
        loop it stages may still unroll at build time: traced is the safe verdict)."""
        kind = range_call(node.iter)
        if kind == STATIC_RANGE:
            return False
        if iterable is TRACED:
            return isinstance(node.target, gast.Name)
        carried_names = self._carried_by(node)
        self.evaluator.reads.update(carried_names)
        return kind == "range" and any(self.env.get(name, STATIC) is TRACED
                                       for name in carried_names)

    def _nested(self, node):
        # A nested function may be called with traced arguments: assume it is.
        for arg in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
            self._bind(gast.Name(arg.id, gast.Store(), None, None), TRACED)
        self.generic_visit(node)

    visit_FunctionDef = visit_Lambda = _nested

    def visit_Expr(self, node):
        name = inplace_target(node.value)
        if name is not None:   # `x.fill(v)`, `np.put(x, i, v)`: x takes v's binding time
            self._bind(gast.Name(name, gast.Store(), None, None),
                       self.evaluator.of(node.value))
        self.generic_visit(node)

    def visit_NamedExpr(self, node):
        self._bind(node.target, self.evaluator.of(node.value))


def _annotate(statements, evaluator: _Evaluator) -> None:
    """Give every expression in ``statements`` (nested functions too) its binding time.
    ``evaluator`` holds the final environment, and the verdicts of the last round (it
    remembers each node's: annotating asks for each subexpression again and again, its
    parent, its grandparent..., which would cost the tree's size times its depth)."""
    of = evaluator.of
    expression = gast.expr
    for statement in statements:
        for node in walk(statement):
            if isinstance(node, expression):
                setanno(node, Anno.BINDING_TIME, of(node))


def analyze_binding_times(function: gast.FunctionDef, static_names) -> dict[str, BindingTime]:
    """Annotate ``function``'s expressions; returns the variables' binding times.

    Rounds over the body join binding times into the environment until a round changes
    no variable that a verdict of that round had read before the change (then another
    round would compute the same verdicts and bind nothing new): for straight-line code
    and loops whose variables are traced from the start, one round."""
    args = function.args
    params = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    params += [a.id for a in (args.vararg, args.kwarg) if a is not None]
    env = {name: STATIC if name in static_names else TRACED for name in params}
    carried_by: dict = {}
    types = getanno(function, Anno.NODE_TYPES)
    expressions_bind = types is None or not types.isdisjoint({gast.Lambda, gast.NamedExpr})
    while True:
        propagator = _Propagator(env, carried_by, expressions_bind)
        for statement in function.body:
            propagator.visit(statement)
        if not propagator.stale:
            break
    _annotate(function.body, propagator.evaluator)
    setanno(function, Anno.VARIABLE_TIMES, dict(env))
    setanno(function, Anno.STATIC_BOUND, frozenset(propagator.static_bound) |
            {name for name, bt in env.items() if bt is STATIC})
    return env
