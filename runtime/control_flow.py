"""Runtime side of converted Python control flow: what generated ``if``/``while``/``for``,
``and``/``or``/``not`` and ``a if c else b`` call.

Each function stages when its decision is traced and runs plain Python when it is static,
so binding-time verdicts only change how generated code looks, never what it computes.
A ``while`` runs as Python while its test is static and stages the rest once it becomes
traced; a ``for`` over ``range`` with traced state stages with a traced index, and unrolls
instead when the body needs the index as a static value.

Carried values are unified the way the Python program sees them: a weak Python number
adopts the dtype of the array it meets (``acc = 0.0`` then ``acc = acc + x[i]`` with float32
``x`` carries float32), learned by *probing* the body in a throw-away region first.  A
change of shape, of a strong dtype, or of a container's structure is a `PSCError` naming
the variable and both places.
"""
from __future__ import annotations

import operator

import numpy as np
from jax import tree_util

from . import sourcemap
from .context import building, current_builder
from .errors import PSCShapeError, PSCTracedValueError, PSCTypeError, PSCValueError
from .ir import Value
from .translation import translate


class _Undefined:
    """A variable without a value on some path (an early return's result before a return
    ran).  Staged code gives it zeros of the type the other path gives it."""

    def __repr__(self):
        return "UNDEFINED"


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


def _probe(b, fn, args):
    """Build ``fn(*args)`` in a throw-away region, to learn the types of its results."""
    sub = b._sub_builder("probe")
    with building(sub):
        return fn(*args)


# --- if -------------------------------------------------------------------------------------

def if_stmt(test, true_fn, false_fn, state, names):
    """``if test:`` with branches as functions of the carried variables ``state``.

    Each branch takes the carried values and returns them updated (a tuple).  A static
    ``test`` runs one branch as Python; a traced one builds both and selects.
    """
    if not isinstance(test, Value):
        return tuple(true_fn(*state) if test else false_fn(*state))
    b = current_builder()
    pred = truth(test)
    probes = [tuple(_probe(b, fn, state)) for fn in (true_fn, false_fn)]
    state = _expand_undefined(state, *probes)
    probes = [_expand_undefined(p, state) for p in probes]
    leaves, treedef, labels = _flatten(state, names)
    if_place, else_place = _place(true_fn), _place(false_fn)
    where = (f"after the if branch ({if_place})",
             f"after the else branch ({else_place})" if else_place != if_place else
             f"when the if ({if_place}) is not taken")
    results = []
    for probe in probes:
        out_leaves, out_treedef = tree_util.tree_flatten(probe)
        _check_structure(names, treedef, out_treedef, "between the branches")
        results.append([_aval(v) for v in out_leaves])
    avals = [_unify(label, t, f, where) for label, t, f in zip(labels, *results)]
    if all(a is None for a in avals):   # nothing carried: the branches have no effect
        return tuple(state)

    def branch(fn):
        def build(sub, _):
            out = tree_util.tree_leaves(_expand_undefined(tuple(fn(*state)), state))
            return [_carried(sub, v, a) for v, a in zip(out, avals) if a is not None]
        return build
    chosen = b.conditional(pred, [branch(true_fn), branch(false_fn)], ())
    chosen = iter(chosen)
    merged = [next(chosen) if a is not None else UNDEFINED for a in avals]
    return tree_util.tree_unflatten(treedef, merged)


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


def _staged_while(test_fn, body_fn, state, names, where_body=None, trip_count=None,
                  max_trip_count=None):
    b = current_builder()
    where = ("before the loop", f"after an iteration ({where_body or _place(body_fn)})")
    state = tuple(state)
    leaves, treedef, labels = _flatten(state, names)
    avals = [_aval(v) for v in leaves]
    # Probe only when something can still change type: a weak number, a static value or an
    # UNDEFINED result.  Each probe's result is used once for expansion and unification.
    learning = any(not isinstance(v, Value) or v.weak for v in leaves)
    for _ in range(6 if learning else 0):
        out = _probe_loop_body(b, body_fn, leaves, avals, treedef)
        expanded = _expand_undefined(state, out)
        if tree_util.tree_structure(expanded) != treedef:   # an early result's container
            state = expanded
            leaves, treedef, labels = _flatten(state, names)
            avals = [_aval(v) for v in leaves]
            continue
        out_leaves, out_treedef = tree_util.tree_flatten(_expand_undefined(out, state))
        _check_structure(names, treedef, out_treedef, "in the loop")
        new = [_unify(label, a, _aval(v), where)
               for label, a, v in zip(labels, avals, out_leaves)]
        if new == avals:
            break
        avals = new
    carried = [i for i, a in enumerate(avals) if a is not None]

    def unpack(values):
        full = list(leaves)
        for i, value in zip(carried, values):
            full[i] = value
        return tree_util.tree_unflatten(treedef, full)

    def cond(sub, values):
        return truth(test_fn(*unpack(values)))

    def body(sub, values):
        out, out_treedef = tree_util.tree_flatten(
            _expand_undefined(tuple(body_fn(*unpack(values))), state))
        _check_structure(names, treedef, out_treedef, "in the loop")
        fixed = []
        for i in carried:
            _unify(labels[i], avals[i], _aval(out[i]), where)   # names a change, if any
            fixed.append(_carried(sub, out[i], avals[i]))
        return fixed
    init = [_carried(b, leaves[i], avals[i]) for i in carried]
    return unpack(b.while_loop(cond, body, init, trip_count=trip_count,
                               max_trip_count=max_trip_count))


def _layout(state):
    leaves, treedef = tree_util.tree_flatten(tuple(state))
    return leaves, [_aval(v) for v in leaves], treedef


def _probe_loop_body(b, body_fn, leaves, avals, treedef):
    """Build the loop body once in a throw-away region, on stand-in parameters of the
    current carried types, to learn the types it gives back."""
    sub = b._sub_builder("probe")
    params = [leaf if aval is None else sub._region.add_param(*aval)
              for leaf, aval in zip(leaves, avals)]
    with building(sub):
        return tuple(body_fn(*tree_util.tree_unflatten(treedef, params)))


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


def for_stmt(iterable, body_fn, state, names, target=NOT_NEEDED, stop=None):
    """``for t in iterable: body`` on the carried variables ``state``.

    ``body_fn(t, *state)`` returns the state updated.  ``target`` is the loop variable's
    value before the loop when it is used after it (its value after the loop is returned
    first, as Python leaves it); ``stop`` names a carried flag that ends the loop early
    (``break``).  Static iterables other than ``range`` unroll; ``range`` and traced arrays
    stage with a traced index (unrolling instead when the body needs a static index).
    """
    state = tuple(state)
    if isinstance(iterable, range) and len(iterable) == 0 or \
            isinstance(iterable, Value) and iterable.ndim and iterable.shape[0] == 0:
        return _unrolled_for((), body_fn, state, names, target, stop)
    if isinstance(iterable, (range, TracedRange)) or isinstance(iterable, Value):
        try:
            return _staged_for(iterable, body_fn, state, names, target, stop)
        except PSCTracedValueError:
            if not isinstance(iterable, range):
                raise
    return _unrolled_for(iterable, body_fn, state, names, target, stop)


def _unrolled_for(iterable, body_fn, state, names, target, stop):
    stop_index = names.index(stop) if stop is not None else None
    for element in iterable:
        flag = state[stop_index] if stop_index is not None else False
        if not isinstance(flag, Value) and flag:
            break
        if target is not NOT_NEEDED:
            target = element if not isinstance(flag, Value) else ifexp(
                flag, lambda t=target: t, lambda e=element: e)
        state = tuple(body_fn(element, *state))
    return state if target is NOT_NEEDED else (target, *state)


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
    stop_index = names.index(stop) if stop is not None else None

    def test(i, t, *carried):
        going = (i < stop_at) if step > 0 else (i > stop_at)
        if stop_index is not None:
            return and_(going, lambda: not_(carried[stop_index]))
        return going

    def body(i, t, *carried):
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
                        max_trip_count=bound if stop is not None else None)
    return tuple(out[2:]) if not keep else (out[1], *out[2:])
