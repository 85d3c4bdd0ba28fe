"""Runtime side of converted Python control flow: what generated ``if``/``while``/``for``,
``and``/``or``/``not`` and ``a if c else b`` call.

Each function stages when its decision is traced and runs plain Python when it is static,
so binding-time verdicts only change how generated code looks, never what it computes.
A ``while`` runs as Python while its test is static and stages the rest once it becomes
traced; a ``for`` over ``range`` with traced state stages with a traced index (its bounds
noted for the indexing rules: `runtime.index_facts`), and unrolls instead when the body
needs the index as a static value, with a `PSCPerformanceWarning` at the loop when that
is more than `UNROLL_WARNING_ITERATIONS` iterations.

Carried values are unified the way the Python program sees them: a weak Python number
adopts the dtype of the array it meets (``acc = 0.0`` then ``acc = acc + x[i]`` with float32
``x`` carries float32).  Each branch of an ``if`` is built once and its results are then
converted to the types both branches agree on; a loop is built speculatively with the
types it has and built again, unified, only when its body changes one.  A change of shape, of a strong dtype, or of a
container's structure is a `PSCError` naming the variable and both places.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np
from jax import tree_util

from . import sourcemap
from .context import building, current_builder
from .errors import (PSCNameError, PSCPerformanceWarning, PSCShapeError,
                     PSCTracedValueError, PSCTypeError, PSCValueError)
from .index_facts import affine, note_bounds
from .ir import Value
from .primitive import lookup
from .signature import LeafSpec
from .translation import translate


class _Undefined:
    """A variable without a value on some path (an early return's result before a return
    ran).  Staged code gives it zeros of the type the other path gives it.

    Computing with it is an error at the line: a traced ``if`` builds both branches, so a
    branch Python would not take may read a variable that has no value yet."""

    __array_ufunc__ = None   # NumPy defers to the operators below

    def __repr__(self):
        return "UNDEFINED"

    def _used(self, *args, **kwargs):
        raise current_builder().error(
            PSCNameError, "a variable is read before it has a value on some path: a traced "
            "if builds both of its branches, and a traced loop its body, even where Python "
            "would not run them", "assign the variable before the if or loop")


for _operator in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
                  "and", "or", "xor", "lshift", "rshift", "lt", "le", "gt", "ge"):
    setattr(_Undefined, f"__{_operator}__", _Undefined._used)
    if _operator not in ("lt", "le", "gt", "ge"):
        setattr(_Undefined, f"__r{_operator}__", _Undefined._used)
for _operator in ("neg", "pos", "abs", "invert", "getitem", "bool", "len", "iter",
                  "float", "int", "index", "array"):
    setattr(_Undefined, f"__{_operator}__", _Undefined._used)
del _operator

UNDEFINED = _Undefined()
NOT_NEEDED = object()   # for_stmt: the loop target is not used after the loop


# --- truth values and expressions -----------------------------------------------------------

def truth(value):
    """Python truth of ``value``; for a traced array a traced bool (size 1 only, as NumPy)."""
    if not isinstance(value, Value):
        return bool(value)
    b = current_builder()
    if value.size != 1:
        raise b.error(PSCValueError, f"the truth value of an array with {value.size} "
                      "elements is ambiguous", "use a.any() or a.all()")
    scalar = b.reshape(value, ())
    return scalar if scalar.dtype == np.bool_ else translate(b, operator.ne, scalar, 0)


def and_(left, right_thunk):
    """``left and right``: short-circuits on a static ``left``, selects on a traced one."""
    if not isinstance(left, Value):
        return left and right_thunk()
    return translate(current_builder(), np.where, truth(left), right_thunk(), left)


def or_(left, right_thunk):
    """``left or right``: short-circuits on a static ``left``, selects on a traced one."""
    if not isinstance(left, Value):
        return left or right_thunk()
    return translate(current_builder(), np.where, truth(left), left, right_thunk())


def not_(value):
    if not isinstance(value, Value):
        return not value
    return translate(current_builder(), np.logical_not, truth(value))


def ifexp(condition, true_thunk, false_thunk):
    """``a if c else b``: one side for a static ``c``, both (selected) for a traced one."""
    if not isinstance(condition, Value):
        return true_thunk() if condition else false_thunk()
    return translate(current_builder(), np.where, truth(condition), true_thunk(),
                     false_thunk())


# --- carried values -------------------------------------------------------------------------

def _aval(value):
    """(shape, dtype, weak) of a carried leaf; None for UNDEFINED."""
    if value is UNDEFINED:
        return None
    if isinstance(value, Value):
        return value.shape, value.dtype, value.weak
    if isinstance(value, (bool, int, float, complex, np.ndarray, np.generic)):
        array = np.asarray(value)
        return array.shape, array.dtype, type(value) in (int, float, complex)
    if hasattr(value, "__psc_escape__"):   # a `runtime.numpy_rules.masked.Masked`: says what it lacks
        value.__psc_escape__("carrying it through a traced loop or branch")
    raise current_builder().error(
        PSCTypeError, f"a {type(value).__name__} cannot be carried through a traced branch "
        "or loop", "only arrays, numbers and tuples/lists/dicts of them can")


def _unify(name: str, old, new, where):
    """The aval a variable carries when it is ``old`` on one path and ``new`` on another."""
    if old is None or new is None:
        return old or new
    (s1, d1, w1), (s2, d2, w2) = old, new
    if d1 == d2:
        dtype, weak = d1, w1 and w2
    elif w1 != w2:
        dtype, weak = (d2 if w1 else d1), False
    elif w1 and w2:
        dtype, weak = np.promote_types(d1, d2), True
    else:
        raise current_builder().error(
            PSCTypeError, f"{name} is {d1}{list(s1)} {where[0]} but {d2}{list(s2)} "
            f"{where[1]}", "give it one dtype on every path (convert with .astype), or "
            "unroll the loop with static_range")
    if s1 != s2:
        raise current_builder().error(
            PSCShapeError, f"{name} has shape {s1} {where[0]} but {s2} {where[1]}",
            "give it one shape on every path, or unroll the loop with static_range")
    return s1, dtype, weak


def _carried(b, value, aval) -> Value:
    """``value`` as a Value of ``aval`` in builder ``b`` (UNDEFINED as zeros)."""
    shape, dtype, weak = aval
    if value is UNDEFINED:
        value = np.zeros(shape, dtype)
    if not isinstance(value, Value):
        value = b.constant(np.asarray(value, dtype))
    value = b.convert(value, dtype)
    return _rewrapped(b, value, weak) if value.weak != weak else value


def _rewrapped(b, value: Value, weak: bool) -> Value:
    """A copy of ``value`` with a different weak flag (the flag is per Value)."""
    copy = b.reshape(b.broadcast_in_dim(value, (1,) + value.shape,
                                        tuple(range(1, value.ndim + 1))), value.shape)
    copy.weak = weak
    return copy


def _flatten(state, names):
    leaves, treedef = tree_util.tree_flatten(tuple(state))
    paths = [tree_util.keystr(path) for path, _ in
             tree_util.tree_flatten_with_path(tuple(state))[0]]
    labels = []
    for path in paths:   # "[0][1]" -> names[0] + "[1]"
        index = int(path[1:path.index("]")])
        labels.append(names[index] + path[path.index("]") + 1:])
    return leaves, treedef, labels


def _expand_undefined(state, *outputs):
    """``state`` with each UNDEFINED entry given the container structure some path gives
    that variable (an early ``return x, 0`` makes the result a tuple), leaves UNDEFINED."""
    expanded = list(state)
    for i, value in enumerate(state):
        if value is not UNDEFINED:
            continue
        for out in outputs:
            if out[i] is not UNDEFINED and not tree_util.treedef_is_leaf(
                    tree_util.tree_structure(out[i])):
                expanded[i] = tree_util.tree_map(lambda _: UNDEFINED, out[i])
                break
    return tuple(expanded)


def _check_structure(name_list, treedef, new_treedef, where):
    if treedef != new_treedef:
        raise current_builder().error(
            PSCTypeError, f"the structure of {', '.join(name_list)} changes {where}: "
            "a container that grows, or a variable that changes kind, cannot be carried "
            "through a traced branch or loop", "preallocate an array, or unroll the loop "
            "with static_range")


def _place(fn) -> str:
    code = getattr(fn, "__code__", None)
    location = sourcemap.location_of_code(code) if code is not None else None
    return f"line {location.line}" if location is not None else getattr(fn, "__name__", "?")


def _build_branch(b, index, fn, state):
    """Build ``fn(*state)`` once, on a branch builder of ``b`` (values of ``b``'s region are
    captured): the branch's own ops, before its results are unified with the other's."""
    sub = b.branch_builder(index)
    with building(sub):
        return sub, tuple(fn(*state))


# --- if -------------------------------------------------------------------------------------

def if_stmt(test, true_fn, false_fn, state, names, inputs=()):
    """``if test:`` with branches as functions of the carried variables ``state``.

    Each branch takes the carried values, then ``inputs`` (variables a branch reads and
    assigns but that nothing reads after the ``if``), and returns the carried values
    updated (a tuple).  A static ``test`` runs one branch as Python; a traced one builds
    both and selects.  Each branch is built once: the carried types are unified from what
    the two built branches give back, and each branch region ends with the conversions to
    them (so nested ``if``s build in time linear in their size).

    A branch gives back UNDEFINED for what it leaves without a value (a branch that
    returned: every variable but the result is dead); the other branch's type is carried.
    A flag both branches give back as the same static bool stays static (after an ``if``
    whose branches both return, what follows is skipped as Python).
    """
    if not isinstance(test, Value):
        return tuple(true_fn(*state, *inputs) if test else false_fn(*state, *inputs))
    b = current_builder()
    pred = truth(test)
    built = [_build_branch(b, i, fn, _own_static_arrays((*state, *inputs)))
             for i, fn in enumerate((true_fn, false_fn))]
    state = _expand_undefined(state, *(out for _, out in built))
    built = [(sub, _expand_undefined(out, state)) for sub, out in built]
    leaves, treedef, labels = _flatten(state, names)
    if_place, else_place = _place(true_fn), _place(false_fn)
    where = (f"after the if branch ({if_place})",
             f"after the else branch ({else_place})" if else_place != if_place else
             f"when the if ({if_place}) is not taken")
    results = []
    for _, out in built:
        out_leaves, out_treedef = tree_util.tree_flatten(out)
        _check_structure(names, treedef, out_treedef, "between the branches")
        results.append(out_leaves)
    static = [t if _same_static_bool(t, f) else UNDEFINED for t, f in zip(*results)]
    avals = [None if kept is not UNDEFINED else _unify(label, _aval(t), _aval(f), where)
             for label, t, f, kept in zip(labels, *results, static)]
    finished = []
    # nothing traced carried: no `case`, unless a branch checks or prints (runtime.checks)
    if any(a is not None for a in avals) or any(_has_effects(sub.region) for sub, _ in built):
        for (sub, _), out_leaves in zip(built, results):
            with building(sub):
                finished.append((sub, [_carried(sub, v, a)
                                       for v, a in zip(out_leaves, avals) if a is not None]))
    chosen = iter(b.conditional_from_branches(pred, finished) if finished else ())
    merged = [next(chosen) if a is not None else kept for a, kept in zip(avals, static)]
    return tree_util.tree_unflatten(treedef, merged)


def _has_effects(region) -> bool:
    return any(lookup(op.name).effectful or any(_has_effects(r) for r in op.regions)
               for op in region.operations)


def _own_static_arrays(state):
    """``state`` with each NumPy array leaf copied (aliases within it sharing one copy):
    both branches are built, so an in-place operator on a static array in one branch must
    not reach the other, nor what follows (a traced select merges the two)."""
    copies = {}

    def own(leaf):
        if type(leaf) is np.ndarray:
            if id(leaf) not in copies:
                copies[id(leaf)] = leaf.copy()
            return copies[id(leaf)]
        return leaf
    return tuple(tree_util.tree_map(own, tuple(state)))


def _same_static_bool(true_value, false_value) -> bool:
    """Both branches give back the same Python bool (a flag set on both paths)."""
    return type(true_value) is bool and type(false_value) is bool and \
        true_value == false_value


# --- while ----------------------------------------------------------------------------------

def while_stmt(test_fn, body_fn, state, names):
    """``while test: body`` on the carried variables ``state`` (a tuple).

    Runs as Python while the test is static; from the first traced test on, the rest of
    the loop is one staged ``while_loop``.
    """
    state = tuple(state)
    while True:
        test = test_fn(*state)
        if isinstance(test, Value):
            return _staged_while(test_fn, body_fn, state, names)
        if not test:
            return state
        state = tuple(body_fn(*state))


class _Retype(Exception):
    """Leaves a speculative loop build whose body gives back other types than it was built
    with (see `_staged_while`); never escapes `_staged_while`.  Not a `PSCError`: nothing
    may mistake it for the user's error."""

    def __init__(self, state, avals):
        super().__init__("loop carried types changed")
        self.state, self.avals = state, avals


_HELD = "held"   # an aval: a static Python number passed through the loop, not carried


def _holdable(value) -> bool:
    return type(value) in (bool, int, float, complex)


def _unchanged(new, old) -> bool:
    """The body gave back the same Python number (``repr`` tells -0.0 and NaN apart)."""
    return type(new) is type(old) and _holdable(old) and repr(new) == repr(old)


_MAX_TYPE_ROUNDS = 6   # weak types settle in a few rounds (int -> float -> complex at most)


def _staged_while(test_fn, body_fn, state, names, where_body=None, trip_count=None,
                  max_trip_count=None, presumed=None):
    """One staged ``while_loop`` for the rest of a loop whose test became traced.

    The carried types are a fixed point: a weak number, a static value or an UNDEFINED
    result may change type in the body, and is carried with the type it settles to.  Each
    build is *speculative*: when the body gives back the types it was built with, that
    build is the loop; otherwise its regions are dropped (nothing outside them refers to
    them) and the loop is built again with the unified types.  The common case, one weak
    type settling, costs two builds of the body, and a loop whose types cannot change one.

    ``presumed`` maps the index of an UNDEFINED leaf that the body sets *without reading
    it* (a ``for`` loop's target) to the type the body will give it.  The first build
    carries it with that type already: the body's other results cannot depend on it, so
    when the guess is right that build is the one the loop would settle to anyway.
    """
    b = current_builder()
    where = ("before the loop", f"after an iteration ({where_body or _place(body_fn)})")
    state = tuple(state)
    leaves = tree_util.tree_leaves(state)
    avals = [_aval(v) for v in leaves]
    trial = [presumed.get(i, a) for i, a in enumerate(avals)] if presumed else avals
    # A Python number the body gives back unchanged stays static (as Python sees it:
    # `c = c` keeps a static `if c < 0` after the loop working); tried first.
    trial = [_HELD if _holdable(v) else a for v, a in zip(leaves, trial)]
    # Only a weak number, a static value or an UNDEFINED result can change type.
    learning = any(not isinstance(v, Value) or v.weak for v in tree_util.tree_leaves(state))
    for _ in range(_MAX_TYPE_ROUNDS if learning else 0):
        try:
            return _build_while(b, test_fn, body_fn, state, trial, names, where,
                                trip_count, max_trip_count, speculative=avals)
        except _Retype as retype:
            state, avals = retype.state, retype.avals
            trial = avals
    # Not settled after that many rounds: build with the last types, converting to them.
    avals = [_aval(v) if a is _HELD else a for v, a in
             zip(tree_util.tree_leaves(state), avals)]
    return _build_while(b, test_fn, body_fn, state, avals, names, where, trip_count,
                        max_trip_count, speculative=False)


def _build_while(b, test_fn, body_fn, state, avals, names, where, trip_count,
                 max_trip_count, speculative):
    """Build the loop carrying ``state``'s leaves with types ``avals``.

    ``speculative`` is False, or the types the leaves have so far (``avals`` but for
    presumed ones): then raise `_Retype` with the next state and types unless unifying
    those with the body's results gives ``avals``.  The kept build converts the body's
    results to ``avals``."""
    leaves, treedef, labels = _flatten(state, names)
    carried = [i for i, a in enumerate(avals) if a is not None and a is not _HELD]

    def unpack(values):
        full = list(leaves)
        for i, value in zip(carried, values):
            full[i] = value
        return tree_util.tree_unflatten(treedef, full)

    def cond(sub, values):
        return truth(test_fn(*unpack(values)))

    def body(sub, values):
        out = tuple(body_fn(*unpack(values)))
        if speculative is not False:
            _check_settled(state, out, speculative, avals, names, labels, treedef, where)
        out, out_treedef = tree_util.tree_flatten(_expand_undefined(out, state))
        _check_structure(names, treedef, out_treedef, "in the loop")
        fixed = []
        for i in carried:
            _unify(labels[i], avals[i], _aval(out[i]), where)   # names a change, if any
            fixed.append(_carried(sub, out[i], avals[i]))
        return fixed
    # The regions first, the initial values after: a dropped build leaves nothing in `b`.
    stand_ins = [LeafSpec(*avals[i]) for i in carried]
    loop = b.while_regions(cond, body, stand_ins, tree_util.tree_structure(stand_ins))
    init = [_carried(b, leaves[i], avals[i]) for i in carried]
    return unpack(b.while_from_regions(loop, init, trip_count=trip_count,
                                       max_trip_count=max_trip_count))


def _check_settled(state, out, before, avals, names, labels, treedef, where) -> None:
    """Raise `_Retype` unless the types ``before`` unified with the body's results ``out``
    are the types ``avals`` the loop was built with."""
    expanded = _expand_undefined(state, out)
    if tree_util.tree_structure(expanded) != treedef:   # an early result's container
        leaves = tree_util.tree_leaves(expanded)
        raise _Retype(expanded, [_aval(v) for v in leaves])
    out_leaves, out_treedef = tree_util.tree_flatten(_expand_undefined(out, state))
    _check_structure(names, treedef, out_treedef, "in the loop")
    old_leaves = tree_util.tree_leaves(state)
    new = [(_HELD if _unchanged(v, old) else _unify(label, _aval(old), _aval(v), where))
           if a is _HELD else _unify(label, b, _aval(v), where)
           for label, a, b, v, old in zip(labels, avals, before, out_leaves, old_leaves)]
    if new != avals:
        raise _Retype(state, new)


# --- for ------------------------------------------------------------------------------------

class TracedRange:
    """``range(start, stop, step)`` with traced bounds (the step must be static)."""

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step


def range_(*args):
    """``range(...)``, or a `TracedRange` when a bound is traced."""
    if not any(isinstance(a, Value) for a in args):
        return range(*args)
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (
        args[0], args[1], args[2] if len(args) > 2 else 1)
    if isinstance(step, Value):
        raise current_builder().error(
            PSCTracedValueError, "the step of a range over traced bounds must be static",
            "pass the step as a static argument (static_argnames)")
    if step == 0:
        raise current_builder().error(PSCValueError, "range() arg 3 must not be zero")
    return TracedRange(start, stop, step)


def for_stmt(iterable, body_fn, state, names, target=NOT_NEEDED, stop=None, unroll=False):
    """``for t in iterable: body`` on the carried variables ``state``.

    ``body_fn(t, *state)`` returns the state updated.  ``target`` is the loop variable's
    value before the loop when it is used after it (its value after the loop is returned
    first, as Python leaves it); ``stop`` names a carried flag that ends the loop early
    (``break``).  Static iterables other than ``range`` unroll; ``range`` and traced arrays
    stage with a traced index (unrolling instead when the body needs a static index);
    ``unroll`` makes any iterable unroll (a loop the source keeps in Python).
    """
    state = tuple(state)
    if unroll:
        return _unrolled_for(iterable, body_fn, state, names, target, stop)
    if isinstance(iterable, range) and len(iterable) == 0 or \
            isinstance(iterable, Value) and iterable.ndim and iterable.shape[0] == 0:
        return _unrolled_for((), body_fn, state, names, target, stop)
    if isinstance(iterable, (range, TracedRange)) or isinstance(iterable, Value):
        try:
            return _staged_for(iterable, body_fn, state, names, target, stop)
        except PSCTracedValueError as err:
            if not isinstance(iterable, range):
                raise
            _warn_unrolled(iterable, body_fn, err)
    return _unrolled_for(iterable, body_fn, state, names, target, stop)


UNROLL_WARNING_ITERATIONS = 64   # unrolling more than this many iterations warns


def _warn_unrolled(iterable: range, body_fn, err: PSCTracedValueError) -> None:
    """A `PSCPerformanceWarning` at the loop's line when a loop meant to be staged is
    unrolled over more than `UNROLL_WARNING_ITERATIONS` iterations, naming the expression
    that needed a static value (the body is built once per iteration: compile time grows
    with the trip count)."""
    if len(iterable) <= UNROLL_WARNING_ITERATIONS:
        return
    code = getattr(body_fn, "__code__", None)
    loop = sourcemap.location_of_code(code) if code is not None else None
    needed = err.location
    where = f" at line {needed.line}" if needed is not None else ""
    text = needed.text() if needed is not None else None
    message = (f"loop unrolled: its body needs a static value{where} ({err.message}), so "
               f"it is built {len(iterable)} times instead of staged once" +
               (f"\n    {text.strip()}" if text else "") +
               "\nhint: slices of a static length at the loop index (x[i:i + K]) stage; "
               "shapes or slice lengths that depend on the index do not")
    if loop is None:
        warnings.warn(message, PSCPerformanceWarning, stacklevel=2)
    else:
        warnings.warn_explicit(f"{loop}: {message}", PSCPerformanceWarning, loop.file,
                               loop.line)


def _unrolled_for(iterable, body_fn, state, names, target, stop):
    stop_index = names.index(stop) if stop is not None else None
    for element in iterable:
        flag = state[stop_index] if stop_index is not None else False
        if not isinstance(flag, Value):
            if flag:
                break
            if target is not NOT_NEEDED:
                target = element
            state = tuple(body_fn(element, *state))
            continue
        # An earlier iteration may have left the loop under a traced condition: this one
        # runs (and sets the target) only where it did not.
        state, target = _unrolled_step_unless(flag, element, body_fn, state, names, target)
    return state if target is NOT_NEEDED else (target, *state)


def _unrolled_step_unless(flag, element, body_fn, state, names, target):
    """One unrolled iteration under the traced ``flag``: (state, target) unchanged where
    it is set, the iteration's where not (the target is carried only when it is needed)."""
    keep_target = target is not NOT_NEEDED

    def stopped(*carried):
        return carried

    def step(*carried):
        body_state = carried[1:] if keep_target else carried
        new = tuple(body_fn(element, *body_state))
        return (element, *new) if keep_target else new
    # what `if_stmt`'s messages call the two paths
    stopped.__name__ = "an earlier iteration left the loop"
    step.__name__ = f"the loop body, {_place(body_fn)}"
    if keep_target:
        out = if_stmt(flag, stopped, step, (target, *state), ("<loop variable>", *names))
        return tuple(out[1:]), out[0]
    return tuple(if_stmt(flag, stopped, step, state, names)), target


def _staged_for(iterable, body_fn, state, names, target, stop):
    b = current_builder()
    if isinstance(iterable, Value):
        if iterable.ndim == 0:
            raise b.error(PSCTypeError, "iteration over a 0-d array")
        array, start, stop_at, step = iterable, 0, iterable.shape[0], 1
        element = lambda i: array[i]            # noqa: E731
    else:
        array, start, stop_at, step = None, iterable.start, iterable.stop, iterable.step
        element = lambda i: i                   # noqa: E731
    if target is NOT_NEEDED:
        keep, first = False, UNDEFINED
    else:
        keep, first = True, target
    counter = b.constant(start) if not isinstance(start, Value) else start
    bounds = _index_bounds(iterable)
    stop_index = names.index(stop) if stop is not None else None

    def test(i, t, *carried):
        going = (i < stop_at) if step > 0 else (i > stop_at)
        if stop_index is not None:
            return and_(going, lambda: not_(carried[stop_index]))
        return going

    def body(i, t, *carried):
        if bounds is not None and isinstance(i, Value):
            note_bounds(i, *bounds)   # `x[i:i + K]` can then be proved inside x
        value = element(i)
        return (i + step, value, *body_fn(value, *carried))
    full_names = ("<loop index>", "<loop variable>", *names)
    # Known when the program is built, the number of iterations lets reverse mode save
    # every iteration's state; with a `break` it is an upper bound.
    bound = len(iterable) if isinstance(iterable, range) else \
        iterable.shape[0] if isinstance(iterable, Value) else None
    out = _staged_while(test, body, (counter, first, *state), full_names,
                        where_body=_place(body_fn),
                        trip_count=bound if stop is None else None,
                        max_trip_count=bound if stop is not None else None,
                        presumed=_presumed_target(first, counter, array))
    return tuple(out[2:]) if not keep else (out[1], *out[2:])


def _index_bounds(iterable) -> tuple[int, int] | None:
    """Inclusive bounds of a staged loop's index in its body: from a static range, or
    from what is known of a traced range's bounds (``range(i + 1, n)`` inside a loop
    over ``i``); None when nothing is."""
    if isinstance(iterable, Value):
        return 0, iterable.shape[0] - 1
    if isinstance(iterable, range):
        return (min(iterable[0], iterable[-1]), max(iterable[0], iterable[-1])) \
            if len(iterable) else None
    start, stop = _interval(iterable.start), _interval(iterable.stop)
    if start is None or stop is None:
        return None
    if iterable.step > 0:   # start <= index < stop
        return start[0], stop[1] - 1
    return stop[0] + 1, start[1]   # stop < index <= start


def _interval(bound) -> tuple[int, int] | None:
    if isinstance(bound, Value):
        return affine(bound).interval() if bound.ndim == 0 else None
    try:
        return operator.index(bound), operator.index(bound)
    except TypeError:
        return None


def _presumed_target(first, counter, array):
    """`_staged_while`'s ``presumed`` for a ``for`` loop's target (leaf 1: after the
    index), which the loop body sets to the element and never reads: the index itself for
    a range, a row of ``array`` (indexing gives a strong value) otherwise."""
    if first is not UNDEFINED:
        return None
    if array is None:
        return {1: _aval(counter)}
    return {1: (array.shape[1:], array.dtype, False)}
