"""Liveness and definedness of variables, per statement, on the structured AST.

Both are classic dataflow problems solved on the tree (no control-flow graph): liveness
backwards (a loop iterates to a fixpoint), definedness forwards with *may* semantics (a
name assigned on some path before a statement may be defined there).  Loops and branches
use them to choose what they carry: a variable is carried by a converted loop when the body
assigns it and it is live at the loop head or after the loop.

Annotates statements with `Anno.LIVE_IN`, `Anno.LIVE_OUT` and `Anno.DEFINED_IN`.
Positions play no part, so the analyses can run again on rewritten code.
"""
from __future__ import annotations

import gast

from ..anno import Anno, getanno, setanno
from .walk import walk


def reads(node) -> set[str]:
    """Names ``node`` reads, including free names of lambdas/comprehensions inside it."""
    found = set()
    for sub in walk(node):
        if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Load):
            found.add(sub.id)
    return found


def writes(target) -> set[str]:
    """Names bound by an assignment target (``x``, ``x, (y, z)``; not ``x[i]``)."""
    if isinstance(target, gast.Name):
        return {target.id}
    if isinstance(target, (gast.Tuple, gast.List)):
        return set().union(*(writes(e) for e in target.elts)) if target.elts else set()
    if isinstance(target, gast.Starred):
        return writes(target.value)
    return set()


def assigned_in(statements) -> set[str]:
    """Names any statement in ``statements`` (nested blocks too) may bind.  An element
    or ``.shape`` assignment (``x[i] = v``, ``x.shape = n``) binds ``x``: the rules rewrite
    it into ``x = psc.setitem(x, i, v)``, and the first analysis must carry ``x`` through
    loops and branches as the one after the rewrite does."""
    return bindings_in(statements)[0]


def bindings_in(statements, calls: list | None = None) -> tuple[set[str], set[str]]:
    """`assigned_in` ``statements``, and the names of the functions they define (nested
    too), in one walk; ``calls``, if given, receives every call in them."""
    found, functions = set(), set()
    name_type, function_type, call_type, store = gast.Name, gast.FunctionDef, gast.Call, \
        gast.Store
    assignments = (gast.Assign, gast.AugAssign)
    for statement in statements:
        for node in walk(statement):
            node_type = node.__class__
            if node_type is name_type:
                if isinstance(node.ctx, store):
                    found.add(node.id)
            elif node_type is call_type:
                if calls is not None:
                    calls.append(node)
            elif node_type is function_type:
                found.add(node.name)
                functions.add(node.name)
            elif isinstance(node, assignments):
                for target in getattr(node, "targets", None) or [node.target]:
                    found |= _updated_by(target)
    return found, functions


def _updated_by(target) -> set[str]:
    """``{"x"}`` for ``x[i][j]`` / ``x.shape``, which rebind ``x`` once rewritten."""
    if isinstance(target, gast.Attribute) and target.attr != "shape":
        return set()
    base = target
    while isinstance(base, (gast.Subscript, gast.Attribute)):
        base = base.value
    return {base.id} if base is not target and isinstance(base, gast.Name) else set()


def assigned_variables(node, body_bindings=None) -> set[str]:
    """Variables a loop's or branch's body (and ``else``) assign: not its local functions,
    not a ``for`` loop's own target.  ``body_bindings``: `bindings_in` of ``node.body``,
    where the caller has it."""
    assigned, functions = body_bindings or bindings_in(node.body)
    orelse = getattr(node, "orelse", [])
    if orelse:
        in_else, else_functions = bindings_in(orelse)
        assigned, functions = assigned | in_else, functions | else_functions
    if isinstance(node, gast.For):
        assigned = assigned - writes(node.target)
    return assigned - functions


def carried(node, variables=None) -> list[str]:
    """Variables a loop or branch must pass on: assigned inside and live at its entry or
    after it (sorted, so generated code is deterministic).  Needs the liveness annotations;
    the binding-time analysis and `rules.decisions` both use it, so that they agree on
    which loops stage.  ``variables``: `assigned_variables` of ``node``, if known."""
    live = set(getanno(node, Anno.LIVE_IN, frozenset())) | set(
        getanno(node, Anno.LIVE_OUT, frozenset()))
    if variables is None:
        variables = assigned_variables(node)
    return sorted(variables & live)


class _Facts:
    """What each statement (or expression) reads and may bind: one walk per node and per
    run of the analyses (the tree does not change during one), however many fixpoint
    rounds read it.  A simple statement's reads and bindings come from the same walk."""

    def __init__(self):
        self._reads: dict[int, frozenset] = {}      # id(node) -> `reads(node)`
        self._assigned: dict[int, frozenset] = {}   # id(statement) -> `assigned_in([it])`

    def reads(self, node) -> frozenset:
        found = self._reads.get(id(node))
        if found is None:
            if isinstance(node, gast.stmt):
                self._walk_statement(node)
                found = self._reads[id(node)]
            else:
                found = self._reads[id(node)] = frozenset(reads(node))
        return found

    def assigned(self, statement) -> frozenset:
        found = self._assigned.get(id(statement))
        if found is None:
            self._walk_statement(statement)
            found = self._assigned[id(statement)]
        return found

    def assigned_in(self, statements) -> set:
        found = set()
        for statement in statements:
            found |= self.assigned(statement)
        return found

    def _walk_statement(self, statement) -> None:
        """`reads` and `assigned_in` of ``statement``, in one walk."""
        read, bound = set(), set()
        name_type, function_type, load, store = gast.Name, gast.FunctionDef, gast.Load, \
            gast.Store
        assignments = (gast.Assign, gast.AugAssign)
        for node in walk(statement):
            node_type = node.__class__
            if node_type is name_type:
                if isinstance(node.ctx, load):
                    read.add(node.id)
                elif isinstance(node.ctx, store):
                    bound.add(node.id)
            elif node_type is function_type:
                bound.add(node.name)
            elif isinstance(node, assignments):
                for target in getattr(node, "targets", None) or [node.target]:
                    bound |= _updated_by(target)
        self._reads[id(statement)] = frozenset(read)
        self._assigned[id(statement)] = frozenset(bound)


class _Liveness:
    def __init__(self, facts: _Facts):
        self.loops: list[tuple[set, set]] = []   # (live after loop, live at loop head)
        self.facts = facts

    def block(self, statements, live_out: set) -> set:
        live = set(live_out)
        for statement in reversed(statements):
            live = self.statement(statement, live)
        return live

    def statement(self, node, live_out: set) -> set:
        live_in = self._transfer(node, set(live_out))
        setanno(node, Anno.LIVE_OUT, frozenset(live_out))
        setanno(node, Anno.LIVE_IN, frozenset(live_in))
        return live_in

    def _transfer(self, node, live_out: set) -> set:
        reads_of = self.facts.reads
        if isinstance(node, gast.Assign):
            targets = set().union(*(writes(t) for t in node.targets))
            # (the statement's reads: its value's and its targets')
            return reads_of(node) | (live_out - targets)
        if isinstance(node, gast.AugAssign):
            used = set(reads_of(node))   # its target's and its value's
            if isinstance(node.target, gast.Name):
                used.add(node.target.id)
            return used | live_out
        if isinstance(node, gast.AnnAssign):   # not what its annotation reads
            used = reads(node.target) | (reads(node.value) if node.value else set())
            if isinstance(node.target, gast.Name):
                used.discard(node.target.id)
                return used | (live_out - {node.target.id})
            return used | live_out
        if isinstance(node, gast.Return):
            return set(reads_of(node))
        if isinstance(node, gast.If):
            branches = self.block(node.body, live_out) | self.block(node.orelse, live_out)
            setanno(node, Anno.BRANCHES_LIVE_IN, frozenset(branches))
            return reads_of(node.test) | branches
        if isinstance(node, gast.While):
            return self._loop(node, live_out, reads_of(node.test), set(), set())
        if isinstance(node, gast.For):
            # A lowered `break` leaves a flag the loop reads at its head (`for_stmt` stop).
            flag = getanno(node, Anno.STOP_FLAG)
            return self._loop(node, live_out, {flag} if flag else set(),
                              writes(node.target), reads_of(node.iter))
        if isinstance(node, gast.Break):
            return set(self.loops[-1][0]) if self.loops else live_out
        if isinstance(node, gast.Continue):
            return set(self.loops[-1][1]) if self.loops else live_out
        if isinstance(node, gast.FunctionDef):
            return (reads_of(node) - {node.name}) | (live_out - {node.name})
        return reads_of(node) | live_out

    def _loop(self, node, live_out, test_reads, targets, once_reads) -> set:
        after = live_out | self.block(node.orelse, live_out)
        head = set(after) | test_reads
        while True:
            self.loops.append((after, head))
            body_in = self.block(node.body, head)
            self.loops.pop()
            new_head = after | test_reads | (body_in - targets)
            if new_head == head:
                return head | once_reads
            head = new_head


class _Definedness:
    def __init__(self, facts: _Facts):
        self.facts = facts

    def block(self, statements, defined: set) -> set:
        for statement in statements:
            defined = self.statement(statement, defined)
        return defined

    def statement(self, node, defined: set) -> set:
        setanno(node, Anno.DEFINED_IN, frozenset(defined))
        if isinstance(node, gast.If):
            return self.block(node.body, defined) | self.block(node.orelse, defined)
        if isinstance(node, (gast.While, gast.For)):
            maybe = set(defined) | self.facts.assigned_in(node.body)
            if isinstance(node, gast.For):
                maybe |= writes(node.target)
            self.block(node.body, maybe)
            return self.block(node.orelse, maybe)
        if isinstance(node, gast.FunctionDef):
            return defined | {node.name}
        return defined | self.facts.assigned(node)


def analyze_liveness(function: gast.FunctionDef) -> None:
    """Annotate every statement of ``function``, and of the functions nested in it (each
    on its own: a body function passed to ``scan`` or ``fori_loop`` has traced ``if``s
    whose carried variables need its liveness)."""
    facts = _Facts()
    for node in walk(function):
        if isinstance(node, gast.FunctionDef):
            _analyze_one(node, facts)


def _analyze_one(function: gast.FunctionDef, facts: _Facts) -> None:
    _Liveness(facts).block(function.body, set())
    args = function.args
    params = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
    params |= {a.id for a in (args.vararg, args.kwarg) if a is not None}
    _Definedness(facts).block(function.body, params)
