"""``lax.scan``: a loop along the leading axis of arrays, on a carry of fixed type.

Staged as one ``while`` whose trip count is the scan's length, known when the program is
built.  Its state is the step counter ``i``, the carry, and the stacked outputs
(preallocated, one row written per step by ``dynamic_update_slice``); the scanned arrays
are captured and read one row per step by ``dynamic_slice`` (row ``length - 1 - i`` for
``reverse``).  So the ``while`` rules do the rest: forward mode, reverse mode (the trip
count is static and ``i`` steps by one, so the saving loop stores the body's residuals per
iteration, indexed by ``i``), and batching.

Each build is speculative (as `runtime.control_flow`'s loops are): the first learns the
types of ``y`` (they size the stacked buffers) and is dropped, so the body is built twice,
once more per weak carry type that settles.

The carry's types are loop-invariant, as in JAX: a weak carry (a Python number in
``init``) takes the type the body gives it (the body is built again with that type), a
Python number the body returns takes the carry's dtype when it is of the same kind (a
float for a float32 carry), and any other difference is a `PSCTypeError` (`PSCShapeError`
for shapes) at the ``scan`` call.

``unroll`` is accepted (a bool or a positive int, as JAX checks) and ignored: in JAX it only
decides how many steps one iteration of the compiled loop runs, never the results.
"""
from __future__ import annotations

import numpy as np
from jax import tree_util

from . import reference, sourcemap
from .autodiff.tangents import zeros
from .calls import transpiled
from .context import current_builder, has_builder
from .errors import PSCShapeError, PSCTracedValueError, PSCTypeError
from .ir import Value
from .primitives.support import read_row, write_row
from .signature import LeafSpec

_MAX_TYPE_ROUNDS = 6   # weak carry types settle in a few rounds (int -> float -> complex)
_PYTHON_TYPES = {"b": bool, "i": int, "u": int, "f": float, "c": complex}
_COUNTER = np.dtype(np.int32)


class _Retype(Exception):
    """Leaves a build of the loop whose body gives back other types than it was built
    with; never escapes `scan`.  Not a `PSCError`: nothing may mistake it for the user's."""

    def __init__(self, carry, ys):
        super().__init__("scan carried types changed")
        self.carry, self.ys = carry, ys


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """``lax.scan``: ``carry, y = f(carry, x)`` over the leading axis of ``xs`` (a pytree
    of arrays, or None with ``length``), backwards if ``reverse``; returns the final carry
    and the ``y``s stacked (in ``xs``'s order).  ``unroll`` is accepted and ignored (a
    performance hint in JAX).  Reference: `runtime.reference.scan`."""
    if not has_builder():
        return reference.scan(f, init, xs, length, reverse, unroll)
    b = current_builder()
    x_leaves, x_tree = tree_util.tree_flatten(xs)
    reference.check_scan_unroll(unroll, b.location)
    if isinstance(length, Value):
        raise b.error(PSCTracedValueError, "scan's length must be static: the number of "
                      "steps is fixed when the program is built",
                      "pass it as a static argument (static_argnames), or scan over xs")
    n = reference.scan_length([np.shape(leaf) for leaf in x_leaves], length, b.location)
    x_leaves = [_lifted(b, leaf) for leaf in x_leaves]
    carry_leaves, carry_tree = tree_util.tree_flatten(init)
    carry_leaves = [_lifted(b, leaf) for leaf in carry_leaves]
    loop = _Loop(transpiled(f), f, carry_tree, x_leaves, x_tree, n, bool(reverse))
    carry_avals = [_aval(v) for v in carry_leaves]
    ys = None   # (treedef, avals) of f's second result: known after the first build
    for _ in range(_MAX_TYPE_ROUNDS):
        try:
            return loop.build(b, carry_leaves, carry_avals, ys)
        except _Retype as retype:
            carry_avals, ys = retype.carry, retype.ys
    raise b.error(PSCTypeError, "scan body function carry types did not settle",
                  "give init the dtypes the body returns")


scan.__psc_primitive__ = True   # PSC code calls it as it is (`runtime.public_names`)


def _lifted(b, leaf) -> Value:
    """A leaf of ``init`` or ``xs`` as a Value (a Python number weak)."""
    if isinstance(leaf, Value):
        return leaf
    if type(leaf) in (bool, int, float, complex):
        return b.constant(leaf)
    return b.constant(np.asarray(leaf))


def _number_fits(number_dtype, dtype) -> bool:
    """Does a Python number (or a value computed from Python numbers only) of
    ``number_dtype`` fit a carry of ``dtype``?  When it is of the same kind, as in JAX,
    where a Python float is a weak float32 for a float32 carry (and an int for a float
    carry is an error)."""
    return number_dtype.kind == dtype.kind


def _kind(value) -> str:
    if isinstance(value, Value):
        return f"an array {value.dtype}{list(value.shape)}"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    return f"a {type(value).__name__}"


def _aval(value: Value) -> LeafSpec:
    return LeafSpec(value.shape, value.dtype, value.weak)


class _Loop:
    """What one build of the scan's ``while`` needs; `build` makes it."""

    def __init__(self, call, f, carry_tree, x_leaves, x_tree, length, reverse):
        self.call, self.f, self.carry_tree = call, f, carry_tree
        self.x_leaves, self.x_tree = x_leaves, x_tree
        self.length, self.reverse = length, reverse

    def build(self, b, carry_init, carry_avals, ys):
        """(carry, ys) of the ``while`` carrying ``carry_avals`` and, if known, stacking
        outputs of types ``ys``; raises `_Retype` when the body gives other types."""
        y_tree, y_avals = ys if ys is not None else (None, [])
        n = self.length
        buffer_avals = [LeafSpec((n,) + a.shape, a.dtype, a.weak) for a in y_avals]
        stand_ins = ([LeafSpec((), _COUNTER)], list(carry_avals), buffer_avals)
        leaves, treedef = tree_util.tree_flatten(stand_ins)

        def cond(sub, state):
            return sub.lt(state[0][0], sub.constant(np.asarray(n, _COUNTER)))

        def body(sub, state):
            (i,), carry, buffers = state
            k = sub.sub(sub.constant(np.asarray(n - 1, _COUNTER)), i) if self.reverse else i
            new_carry, y_leaves, new_ys = self._step(sub, carry, k, carry_avals)
            if ys is None or new_ys != ys:
                raise _Retype(carry_avals, new_ys)
            if n:   # (an empty buffer has no row to write: the body never runs)
                buffers = [write_row(sub, buf, y, k) for buf, y in zip(buffers, y_leaves)]
            return [sub.add(i, sub.constant(np.ones((), _COUNTER)))], new_carry, buffers
        # The regions first, the initial values after: a dropped build leaves nothing in b.
        regions = b.while_regions(cond, body, leaves, treedef)
        init = [b.constant(np.zeros((), _COUNTER))] + \
            [_as_aval(b, v, a) for v, a in zip(carry_init, carry_avals)] + \
            [_as_aval(b, zeros(b, a.shape, a.dtype), a) for a in buffer_avals]
        (_, carry, buffers) = b.while_from_regions(regions, init, trip_count=n)
        for result, aval in zip(carry + buffers, list(carry_avals) + buffer_avals):
            result.weak = aval.weak   # (not the initial value's: a weak init may settle)
        return (tree_util.tree_unflatten(self.carry_tree, carry),
                tree_util.tree_unflatten(y_tree, buffers))

    def _step(self, sub, carry, k, carry_avals):
        """One call of the body at row ``k``: (its carry as the loop carries it, its
        ``y`` leaves, the ``(treedef, avals)`` of ``y``); `_Retype` for a weak carry
        leaf the body gives another type."""
        if self.length == 0:   # no row to read: the body is built, never run
            x_leaves = [zeros(sub, v.shape[1:], v.dtype) for v in self.x_leaves]
        else:
            x_leaves = [read_row(sub, v, k) for v in self.x_leaves]
        x = tree_util.tree_unflatten(self.x_tree, x_leaves)
        out = self.call(tree_util.tree_unflatten(self.carry_tree, list(carry)), x)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise sub.error(PSCTypeError, "scan body function must return a pair "
                            f"(carry, y), got {_kind(out)} ({self._where()})",
                            "return new_carry, y (y may be None)")
        new_carry, y = out
        carry_out, out_tree = tree_util.tree_flatten(new_carry)
        if out_tree != self.carry_tree:
            raise sub.error(PSCTypeError, "scan body function carry input and carry output "
                            f"must have the same structure: {self.carry_tree} in, "
                            f"{out_tree} out ({self._where()})",
                            "return a carry of the structure of init")
        settled = [self._carried(sub, path, v, a) for path, v, a in
                   zip(self._paths(), carry_out, carry_avals)]
        if any(isinstance(s, LeafSpec) for s in settled):
            raise _Retype([s if isinstance(s, LeafSpec) else a
                           for s, a in zip(settled, carry_avals)], None)
        y_leaves, y_tree = tree_util.tree_flatten(y)
        y_leaves = [_lifted(sub, leaf) for leaf in y_leaves]
        return settled, y_leaves, (y_tree, [_aval(v) for v in y_leaves])

    def _carried(self, sub, path, value, aval):
        """The body's carry leaf ``value`` as the loop carries it (of ``aval``), or the
        `LeafSpec` the carry must have instead (a weak carry leaf the body retypes)."""
        if not isinstance(value, Value):
            if type(value) in _PYTHON_TYPES.values() and aval.shape == () and \
                    _number_fits(np.asarray(value).dtype, aval.dtype):
                return _as_aval(sub, sub.constant(np.asarray(value, aval.dtype)), aval)
            value = _lifted(sub, value)
        if value.shape != aval.shape:
            raise self._mismatch(sub, PSCShapeError, path, value, aval)
        if value.dtype == aval.dtype:   # (a weak carry the body makes strong: strong)
            return LeafSpec(aval.shape, aval.dtype, False) if aval.weak > value.weak \
                else value
        if aval.weak:   # a Python number in init: it takes the type the body gives it
            if value.weak:
                return LeafSpec(aval.shape, np.promote_types(aval.dtype, value.dtype), True)
            python_number = _PYTHON_TYPES[aval.dtype.kind](0)
            return LeafSpec(aval.shape, np.result_type(python_number, value.dtype), False)
        if value.weak and _number_fits(value.dtype, aval.dtype):
            return _as_aval(sub, sub.convert(value, aval.dtype), aval)
        raise self._mismatch(sub, PSCTypeError, path, value, aval)

    def _mismatch(self, sub, error, path, value, aval):
        hint = ("keep the carry's shape fixed: give init the shape the body returns"
                if error is PSCShapeError else "keep the carry's dtype fixed: convert "
                "with .astype, or give init the dtype the body returns")
        return sub.error(
            error, "scan body function carry input and carry output must have equal types: "
            f"the carry{path} goes in as {aval.dtype}{list(aval.shape)} but the body "
            f"({self._where()}) returns {value.dtype}{list(value.shape)}", hint)

    def _paths(self):
        dummy = tree_util.tree_unflatten(self.carry_tree, [0] * self.carry_tree.num_leaves)
        return [tree_util.keystr(path) for path, _ in
                tree_util.tree_flatten_with_path(dummy)[0]]

    def _where(self) -> str:
        """The body function, as the user knows it: its name and line."""
        code = getattr(self.f, "__code__", None)
        location = sourcemap.location_of_code(code) if code is not None else None
        line = location.line if location is not None else getattr(code, "co_firstlineno",
                                                                  None)
        name = getattr(self.f, "__name__", type(self.f).__name__)
        return f"`{name}`" + (f", line {line}" if line is not None else "")


def _as_aval(b, value: Value, aval: LeafSpec) -> Value:
    """``value`` converted to ``aval``'s dtype; a new Value gets its weak flag (the flag is
    per Value: one of the caller's keeps its own)."""
    converted = b.convert(value, aval.dtype)
    if converted is not value:
        converted.weak = aval.weak
    return converted
