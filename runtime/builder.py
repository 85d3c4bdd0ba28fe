"""`Builder`: the XLA-builder-style construction API that generated code and rules call.

Builder ops are *strict XLA*: operands of a binary op have one shape and one dtype,
broadcasts are explicit.  NumPy's conveniences (broadcasting, promotion, weak scalars,
``axis=``) live in the translation rules (`runtime.numpy_rules`), on top of this API.

Every op checks its operands (its primitive's ``check`` rule, `runtime.primitives`) and
raises a `PSCError` pointing at the builder's current source location.  Generated code
never sets it: the builder asks `runtime.sourcemap.location_from_stack` for the user's
line of the generated statement running now (read from the ``# file.py:LINE`` comments
when the module was loaded).  Hand-written build functions may set it with
``b.at(file, line, col)``.

    >>> import numpy as np
    >>> b = Builder("double")
    >>> x = b.parameter(0, shape=(3,), dtype=np.float32)
    >>> y = b.add(x, x)
    >>> y.shape, y.dtype
    ((3,), dtype('float32'))

**Regions.**  Control flow and transforms build nested regions through four methods:
`child` (a builder whose region nests in this one's), `add_parameter` (a parameter of
that region), `capture` (a value of an enclosing region as seen from this one: it
becomes a capture of the region, `ir.Region.captures`) and `finish_region` (its
outputs).  `emit` records any operation by its primitive's name, checked by the
primitive's definition; `build` finishes the top-level computation.

    >>> body = b.child("body")
    >>> s = body.add_parameter((3,), np.float32)
    >>> t = body.emit("multiply", [s, body.capture(y)])[0]   # y is read from outside
    >>> region = body.finish_region([t])
    >>> [v.shape for v in region.params], list(region.captures) == [y]
    ([(3,)], True)
"""
from __future__ import annotations

import contextlib
import dataclasses
from typing import Callable, Sequence

import numpy as np
from jax import tree_util

from . import dtypes
from .errors import (PSCError, PSCShapeError, PSCTypeError, PSCValueError,
                     SourceLocation)
from .ir import Computation, Operation, Region, Value
from .context import building
from .index_facts import note_captured
from .primitive import lookup
from .primitives.elementwise import BUILDER_METHODS
from .sourcemap import location_from_stack

_COMPARISONS = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}


LARGE_CONSTANT_BYTES = 1 << 20   # constants this big become executable arguments


@dataclasses.dataclass(frozen=True)
class WhileRegions:
    """A built loop not yet added to its builder: see `Builder.while_regions`."""

    cond: Region
    body: Region
    treedef: object            # the loop state's pytree structure
    captured: list             # values of enclosing regions the regions read, in order


class _SharedState:
    """What a top-level builder shares with its children: the current source location and
    the large constants, recorded once per array object in the top-level region."""

    __slots__ = ("location", "root", "large_constants")

    def __init__(self, root: Region):
        self.location: SourceLocation | None = None
        self.root = root
        # id(array) -> (array, its Value in `root`); the array is kept so the id stays its
        # (the array, a snapshot of it, the Value) per large constant recorded, in order
        self.large_constants: list[tuple[np.ndarray, np.ndarray, Value]] = []


class Builder:
    """Builds one computation, or one region nested in it (see `child`).  See the module
    docstring."""

    def __init__(self, name: str = "main"):
        self.name = name
        self._region = Region(name)
        self._shared = _SharedState(self._region)
        self._params: dict[int, Value] = {}   # top-level parameters, by index

    @property
    def region(self) -> Region:
        """The region this builder records into (read-only: change it through the builder)."""
        return self._region

    # --- locations and errors -------------------------------------------------------------

    @property
    def location(self) -> SourceLocation | None:
        """Where ops built now come from: set with `at`, else the generated statement that
        is running (see `runtime.sourcemap`)."""
        return self._shared.location or location_from_stack(2)

    @contextlib.contextmanager
    def _restoring(self, previous):
        try:
            yield self
        finally:
            self._shared.location = previous

    def at(self, file: str, line: int, col: int = 0, source_line: str | None = None):
        """Set the source location of the ops built next (by this builder and the others of
        its computation), instead of the one `runtime.sourcemap` finds.

        For hand-written build functions (generated code never calls it).  Called plainly
        it just sets it; used as ``with b.at(...):`` it restores the previous location on
        exit.
        """
        previous = self._shared.location
        self._shared.location = SourceLocation(file, line, col, source_line)
        return self._restoring(previous)

    def error(self, cls: type[PSCError], message: str, hint: str | None = None) -> PSCError:
        """A `PSCError` of class ``cls`` at the current location (for rules to raise)."""
        return cls(message, self.location, hint)

    # --- regions and recording ------------------------------------------------------------

    def child(self, name: str) -> "Builder":
        """A builder for a region nested in this one's (a loop body, a branch, a traced
        function).  It shares this builder's source location and large constants; it starts
        with no parameters (`add_parameter`) and reads values of enclosing regions by
        `capture` (its ops capture their operands themselves).  Nothing is added to this
        builder until an operation owning the region is emitted here."""
        child = Builder.__new__(Builder)
        child.name = name
        child._region = Region(name, parent=self._region)
        child._shared = self._shared
        child._params = {}
        return child

    @classmethod
    def resume(cls, region: Region) -> "Builder":
        """A builder appending to ``region`` of a finished computation, for passes over it
        (`runtime.check_threading`).  Its ops get their location from the stack, as usual
        (or from `at`)."""
        builder = cls.__new__(cls)
        builder.name = region.name
        builder._region = region
        root = region
        while root.parent is not None:
            root = root.parent
        builder._shared = _SharedState(root)
        builder._params = {}
        return builder

    def add_parameter(self, shape, dtype, weak: bool = False) -> Value:
        """A new parameter of this child builder's region, after the ones it has.  (The
        top-level computation's parameters are numbered: see `parameter`.)"""
        if self._region.parent is None:
            raise self.error(PSCValueError, "add_parameter is for child builders",
                             "number the top-level parameters with parameter(index, ...)")
        try:
            return self._region.add_param(shape, dtypes.canonical(dtype), weak)
        except TypeError as err:
            raise self.error(PSCTypeError, str(err)) from None
        except PSCError as err:
            raise err.with_location(self.location) from None

    def capture(self, value) -> Value:
        """``value`` as seen from this builder's region: itself when it is this region's,
        else (a value of an enclosing region) the parameter standing for it here, made on
        first use and recorded in the region's ``captures``."""
        if not isinstance(value, Value):
            raise self.error(PSCTypeError,
                             f"builder operands must be Values, got {type(value).__name__}",
                             "wrap Python and NumPy constants with b.constant(...)")
        if value.region is self._region:
            return value
        if not self._region.is_inside(value.region):
            raise self.error(PSCValueError,
                             "a value built inside another loop body or branch is used "
                             "outside of it", "return it from that body or branch instead")
        inner = self._region.captures.get(value)
        if inner is None:
            inner = Value(value.shape, value.dtype, self._region, weak=value.weak)
            note_captured(value, inner)   # a loop index keeps its bounds in inner loops
            self._region.captures[value] = inner
        return inner

    def emit(self, name: str, operands: Sequence, regions: Sequence[Region] = (), /,
             **attrs) -> list[Value]:
        """Record one operation of primitive ``name`` on ``operands`` (captured into this
        region) with nested ``regions`` and attributes ``attrs``; returns its results.

        The primitive's definition checks the operands and attributes and gives the result
        types; a `PSCError` it raises is stamped with the current location, and nothing is
        recorded.  The typed methods (`add`, `reshape`, `while_loop`, ...) normalize their
        arguments and call this; transforms replay recorded operations with it.
        """
        operands = [self.capture(v) for v in operands]
        location = self.location
        op = Operation(name, operands, attrs, regions, location)
        try:
            avals = lookup(name).check(operands, attrs)
            # `Value` checks its extent (`ir.check_extent`): no op makes an array XLA
            # would abort on
            op.results = tuple(Value(shape, dtype, self._region, op) for shape, dtype in avals)
        except PSCError as err:
            raise err.with_location(location) from None
        self._region.operations.append(op)
        return list(op.results)

    def _op1(self, name: str, operands: Sequence, **attrs) -> Value:
        return self.emit(name, operands, **attrs)[0]

    def finish_region(self, outputs: Sequence[Value]) -> Region:
        """Make ``outputs`` (captured into it) the outputs of this child builder's region,
        and return the region."""
        if self._region.parent is None:
            raise self.error(PSCValueError, "finish_region is for child builders",
                             "finish the top-level computation with build(*outputs)")
        self._region.outputs = [self.capture(v) for v in outputs]
        return self._region

    # --- leaves ---------------------------------------------------------------------------

    def parameter(self, index: int, shape=(), dtype=np.float64, weak: bool = False) -> Value:
        """Parameter ``index`` of the computation.  ``weak`` marks a Python-scalar argument."""
        if self._region.parent is not None:
            raise self.error(PSCValueError, "parameters belong to the top-level builder")
        if index in self._params:
            raise self.error(PSCValueError, f"parameter {index} is defined twice")
        try:
            dtype = dtypes.canonical(dtype)
        except TypeError as err:
            raise self.error(PSCTypeError, str(err)) from None
        try:
            value = Value(shape, dtype, self._region, weak=weak)
        except PSCError as err:
            raise err.with_location(self.location) from None
        self._params[index] = value
        return value

    def constant(self, value, dtype=None) -> Value:
        """A constant array.  A Python scalar without ``dtype`` gives a weak value.

        Large arrays (`LARGE_CONSTANT_BYTES` and up) are recorded once per array object, in
        the top-level computation (loop bodies capture them); `build` makes them parameters
        of the computation (`Computation.constants`), so that they are passed to the
        executable as arguments instead of being written into the program.
        """
        if isinstance(value, np.ndarray) and value.nbytes >= LARGE_CONSTANT_BYTES:
            if dtype is not None and np.dtype(dtype) != value.dtype:
                value = value.astype(dtype)
            return self.capture(self._large_constant(value))
        weak = dtype is None and type(value) in (bool, int, float, complex)
        try:
            # a copy: the program keeps the value as it is now, whatever the user's code
            # does to its array later while building (`t *= t` after `x * t`)
            array = np.array(value, dtype=dtype)
            dtypes.canonical(array.dtype)
        except PSCError:   # e.g. a traced Value inside a list: already says what is wrong
            raise
        except (TypeError, ValueError, OverflowError) as err:
            raise self.error(PSCTypeError, f"cannot make a constant of {value!r}: {err}")
        if weak and array.dtype == np.int64 and value != array:
            raise self.error(PSCValueError, f"Python integer {value} does not fit in int64")
        result = self._op1("constant", (), value=array)
        result.weak = weak
        return result

    def _large_constant(self, array: np.ndarray) -> Value:
        root, table = self._shared.root, self._shared.large_constants
        found = next((entry for entry in reversed(table) if entry[0] is array), None)
        if found is not None and np.array_equal(found[1], array,
                                                equal_nan=array.dtype.kind in "fc"):
            return found[2]   # the same array, not modified in place since
        try:
            dtypes.canonical(array.dtype)
        except TypeError as err:
            raise self.error(PSCTypeError, f"cannot make a constant of this array: {err}")
        snapshot = array.copy()   # (as `constant`: later in-place updates must not reach it)
        op = Operation("constant", (), {"value": snapshot}, (), self.location)
        op.results = (Value(array.shape, array.dtype, root, op),)
        root.operations.append(op)
        table.append((array, snapshot, op.results[0]))
        return op.results[0]

    def iota(self, shape, dtype=np.int32, dimension: int = 0) -> Value:
        """``iota(shape, dimension=d)[i] == i[d]``: indices counting along one dimension."""
        return self._op1("iota", (), shape=tuple(shape), dtype=np.dtype(dtype),
                         dimension=dimension)

    # --- element-wise ---------------------------------------------------------------------

    def compare(self, x: Value, y: Value, direction: str) -> Value:
        """Element-wise comparison, ordered as NumPy orders the dtype (signed/unsigned/float)."""
        return self._op1("compare", (x, y), direction=direction)

    def select(self, pred: Value, on_true: Value, on_false: Value) -> Value:
        """``np.where(pred, on_true, on_false)`` with no broadcasting but a scalar ``pred``."""
        return self._op1("select", (pred, on_true, on_false))

    def convert(self, x: Value, dtype) -> Value:
        """Element type conversion (float to int truncates; nonzero to bool is True)."""
        dtype = np.dtype(dtype)
        if x.dtype == dtype:
            return x
        return self._op1("convert", (x,), dtype=dtypes.canonical(dtype))

    def bitcast_convert(self, x: Value, dtype) -> Value:
        """The bits of ``x`` read as ``dtype`` of the same width (NumPy's ``x.view``)."""
        dtype = np.dtype(dtype)
        if x.dtype == dtype:
            return x
        return self._op1("bitcast_convert", (x,), dtype=dtypes.canonical(dtype))

    # --- shapes ---------------------------------------------------------------------------

    def broadcast_in_dim(self, x: Value, shape, broadcast_dimensions) -> Value:
        """Broadcast ``x`` to ``shape``; operand dimension i becomes result dimension
        ``broadcast_dimensions[i]`` (which must have the same size, or the operand's is 1)."""
        return self._op1("broadcast_in_dim", (x,), shape=tuple(int(s) for s in shape),
                         broadcast_dimensions=tuple(int(d) for d in broadcast_dimensions))

    def reshape(self, x: Value, shape) -> Value:
        shape = tuple(int(s) for s in shape)
        if shape == x.shape:
            return x
        return self._op1("reshape", (x,), shape=shape)

    def transpose(self, x: Value, permutation) -> Value:
        permutation = tuple(int(p) for p in permutation)
        if permutation == tuple(range(x.ndim)):
            return x
        return self._op1("transpose", (x,), permutation=permutation)

    def reverse(self, x: Value, dimensions) -> Value:
        """``x`` with the order of elements along ``dimensions`` reversed."""
        dimensions = tuple(int(d) for d in dimensions)
        if not dimensions:
            return x
        return self._op1("reverse", (x,), dimensions=dimensions)

    def slice(self, x: Value, start_indices, limit_indices, strides=None) -> Value:
        """``x[start:limit:stride]`` per dimension, with static bounds inside the array."""
        strides = strides if strides is not None else (1,) * x.ndim
        return self._op1("slice", (x,), start_indices=tuple(map(int, start_indices)),
                         limit_indices=tuple(map(int, limit_indices)),
                         strides=tuple(map(int, strides)))

    def dynamic_slice(self, x: Value, start_indices: Sequence[Value], slice_sizes) -> Value:
        """A slice of static size at traced start indices, clamped so it stays in bounds."""
        return self._op1("dynamic_slice", (x, *start_indices),
                         slice_sizes=tuple(map(int, slice_sizes)))

    def dynamic_update_slice(self, x: Value, update: Value,
                             start_indices: Sequence[Value]) -> Value:
        """``x`` with ``update`` written at traced start indices (clamped into bounds)."""
        return self._op1("dynamic_update_slice", (x, update, *start_indices))

    def concatenate(self, operands: Sequence[Value], dimension: int) -> Value:
        return self._op1("concatenate", operands, dimension=int(dimension))

    def pad(self, x: Value, padding_value: Value, low, high, interior=None) -> Value:
        """Edge padding (negative values crop) and interior padding between elements."""
        interior = interior if interior is not None else (0,) * x.ndim
        return self._op1("pad", (x, padding_value), low=tuple(map(int, low)),
                         high=tuple(map(int, high)), interior=tuple(map(int, interior)))

    # --- contractions and reductions ------------------------------------------------------

    def dot_general(self, lhs: Value, rhs: Value, contracting, batch=((), ())) -> Value:
        """XLA DotGeneral.  Result dimensions: batch, lhs free, rhs free (in order)."""
        (lc, rc), (lb, rb) = contracting, batch
        return self._op1("dot_general", (lhs, rhs), lhs_batch=tuple(lb), rhs_batch=tuple(rb),
                         lhs_contract=tuple(lc), rhs_contract=tuple(rc))

    def reduce(self, x: Value, kind: str, dimensions) -> Value:
        """Reduce ``x`` over ``dimensions`` with ``kind`` in sum/prod/max/min/and/or."""
        dimensions = tuple(sorted(int(d) for d in dimensions))
        if not dimensions:
            return x
        return self._op1("reduce", (x,), kind=kind, dimensions=dimensions)

    def argmax(self, x: Value, axis: int, index_dtype=np.int64) -> Value:
        """Index of the first maximum along ``axis`` (NaN counts as the maximum, as NumPy)."""
        return self._op1("argmax", (x,), axis=int(axis), index_dtype=np.dtype(index_dtype))

    def argmin(self, x: Value, axis: int, index_dtype=np.int64) -> Value:
        """Index of the first minimum along ``axis`` (NaN counts as the minimum, as NumPy)."""
        return self._op1("argmin", (x,), axis=int(axis), index_dtype=np.dtype(index_dtype))

    def cumulative(self, x: Value, kind: str, axis: int, reverse: bool = False) -> Value:
        """Inclusive scan of ``kind`` (sum/prod/max/min) along ``axis``."""
        return self._op1("cumulative", (x,), kind=kind, axis=int(axis), reverse=bool(reverse))

    def cumsum(self, x: Value, axis: int, reverse: bool = False) -> Value:
        return self.cumulative(x, "sum", axis, reverse)

    def sort(self, operands: Sequence[Value], dimension: int = -1, num_keys: int = 1,
             is_stable: bool = True) -> list[Value]:
        """Sort ``operands`` together along ``dimension``, ordered lexicographically by the
        first ``num_keys`` of them, ascending, NaNs last (as NumPy)."""
        operands = list(operands)
        dimension = int(dimension) % max(operands[0].ndim, 1) if operands else 0
        return self.emit("sort", operands, dimension=dimension, num_keys=int(num_keys),
                         is_stable=bool(is_stable))

    # --- gather and scatter ---------------------------------------------------------------

    def gather(self, x: Value, indices: Value, *, offset_dims, collapsed_slice_dims,
               start_index_map, index_vector_dim, slice_sizes, operand_batching_dims=(),
               start_indices_batching_dims=(), indices_are_sorted=False) -> Value:
        """StableHLO gather (out-of-bounds start indices are clamped into bounds)."""
        return self._op1(
            "gather", (x, indices), offset_dims=tuple(offset_dims),
            collapsed_slice_dims=tuple(collapsed_slice_dims),
            operand_batching_dims=tuple(operand_batching_dims),
            start_indices_batching_dims=tuple(start_indices_batching_dims),
            start_index_map=tuple(start_index_map), index_vector_dim=int(index_vector_dim),
            slice_sizes=tuple(map(int, slice_sizes)),
            indices_are_sorted=bool(indices_are_sorted))

    def scatter(self, x: Value, indices: Value, updates: Value, *, update_window_dims,
                inserted_window_dims, scatter_dims_to_operand_dims, index_vector_dim,
                mode: str = "set", input_batching_dims=(), scatter_indices_batching_dims=(),
                indices_are_sorted=False, unique_indices=False) -> Value:
        """StableHLO scatter combining with ``mode`` (set/add/mul/min/max); updates whose
        window falls out of bounds are skipped."""
        return self._op1(
            "scatter", (x, indices, updates), update_window_dims=tuple(update_window_dims),
            inserted_window_dims=tuple(inserted_window_dims),
            input_batching_dims=tuple(input_batching_dims),
            scatter_indices_batching_dims=tuple(scatter_indices_batching_dims),
            scatter_dims_to_operand_dims=tuple(scatter_dims_to_operand_dims),
            index_vector_dim=int(index_vector_dim), mode=mode,
            indices_are_sorted=bool(indices_are_sorted), unique_indices=bool(unique_indices))

    # --- control flow ---------------------------------------------------------------------

    def _leaves(self, tree, what: str) -> tuple[list[Value], object]:
        leaves, treedef = tree_util.tree_flatten(tree)
        for leaf in leaves:
            if not isinstance(leaf, Value):
                raise self.error(PSCTypeError, f"{what} must hold builder Values, got "
                                 f"{type(leaf).__name__}", "wrap constants with b.constant")
        return leaves, treedef

    def _run_region(self, name, fn, params_like, treedef, *extra):
        sub = self.child(name)
        params = [sub.add_parameter(v.shape, v.dtype, v.weak) for v in params_like]
        with building(sub):   # operators on Values inside the region go to `sub`
            out = fn(sub, *extra, tree_util.tree_unflatten(treedef, params))
        return sub, out

    @staticmethod
    def _close_regions(regions: Sequence[Region], outer_captures: list[Value]) -> None:
        """Give every region one parameter per captured value, in ``outer_captures`` order."""
        for region in regions:
            for value in outer_captures:
                inner = region.captures.get(value)
                if inner is None:
                    inner = Value(value.shape, value.dtype, region, weak=value.weak)
                    region.captures[value] = inner
                region.params.append(inner)

    def while_loop(self, cond_fn: Callable, body_fn: Callable, init, trip_count=None,
                   max_trip_count=None):
        """Functional while loop over a pytree of Values.

        ``cond_fn(b, state) -> bool scalar`` and ``body_fn(b, state) -> state`` build with
        the sub-builder ``b`` they are given.  Reference semantics::

            state = init
            while cond_fn(state):
                state = body_fn(state)
            return state

        ``trip_count``, when the number of iterations is known when the program is built
        (a loop over a static range), or ``max_trip_count``, a bound on it (the same loop
        with a ``break``), is recorded for reverse-mode differentiation.
        """
        leaves, treedef = self._leaves(init, "while_loop state")
        loop = self.while_regions(cond_fn, body_fn, leaves, treedef)
        return self.while_from_regions(loop, leaves, trip_count=trip_count,
                                       max_trip_count=max_trip_count)

    def while_regions(self, cond_fn: Callable, body_fn: Callable, state_like,
                      treedef) -> WhileRegions:
        """The condition and body regions of `while_loop`, built on parameters typed like
        the leaves ``state_like`` (anything with ``shape``, ``dtype`` and ``weak``).

        Nothing is added to this builder's region: a caller may still drop the regions
        (`runtime.control_flow` builds a loop body speculatively) or pass them to
        `while_from_regions` with initial values of those types.
        """
        cond, pred = self._run_region("while_cond", cond_fn, state_like, treedef)
        pred = cond.capture(pred) if isinstance(pred, Value) else pred
        if not (isinstance(pred, Value) and pred.shape == () and pred.dtype == dtypes.bool_):
            raise self.error(PSCTypeError, "while_loop condition must return a bool scalar, "
                             f"got {pred!r}")
        cond_region = cond.finish_region([pred])
        body, new_state = self._run_region("while_body", body_fn, state_like, treedef)
        new_leaves, new_treedef = body._leaves(new_state, "while_loop body result")
        self._check_same_avals("while_loop body result", "loop state", state_like, treedef,
                               new_leaves, new_treedef)
        body_region = body.finish_region(new_leaves)
        captured = list(dict.fromkeys([*cond_region.captures, *body_region.captures]))
        self._close_regions((cond_region, body_region), captured)
        body_region.outputs += [body_region.captures[v] for v in captured]
        return WhileRegions(cond_region, body_region, treedef, captured)

    def while_from_regions(self, loop: WhileRegions, init_leaves: Sequence[Value],
                           trip_count=None, max_trip_count=None):
        """The ``while`` operation running ``loop`` from ``init_leaves`` (the types its
        regions were built for); returns the final state as `while_loop` does."""
        leaves = list(init_leaves)
        avals = [(v.shape, v.dtype) for v in leaves + loop.captured]
        results = self.emit("while", leaves + loop.captured, (loop.cond, loop.body),
                            result_avals=tuple(avals), num_state=len(leaves),
                            trip_count=trip_count, max_trip_count=max_trip_count)
        for result, leaf in zip(results, leaves):
            result.weak = leaf.weak
        return tree_util.tree_unflatten(loop.treedef, results[:len(leaves)])

    def conditional(self, pred_or_index: Value, branches: Sequence[Callable], operands=()):
        """Run one of ``branches`` on ``operands`` (a pytree of Values).

        With a bool scalar ``pred``, ``branches`` is ``(true_fn, false_fn)`` as in
        ``lax.cond``; with an integer scalar index it is a list as in ``lax.switch``, the
        index clamped into range.  Each branch is ``fn(b, operands) -> pytree``, and all must
        return the same structure, shapes and dtypes.  Reference semantics::

            if pred is bool: return (branches[0] if pred else branches[1])(operands)
            return branches[min(max(index, 0), len(branches) - 1)](operands)
        """
        leaves, treedef = self._leaves(operands, "conditional operands")
        built = []
        for i, branch in enumerate(branches):
            sub, out = self._run_region(f"branch_{i}", branch, leaves, treedef)
            built.append((sub, out))
        return self.conditional_from_branches(pred_or_index, built, leaves)

    def branch_builder(self, index: int) -> "Builder":
        """An empty sub-builder for branch ``index`` of `conditional_from_branches`.

        A caller builds a branch on it directly (reading values of enclosing regions by
        capture) when it must see what the branch gives back before the `conditional`
        exists: `runtime.control_flow` builds each branch of a traced ``if`` once, then
        unifies the two branches' types by appending conversions to each.
        """
        return self.child(f"branch_{index}")

    def conditional_from_branches(self, pred_or_index: Value, built, operands=()):
        """The ``case`` operation over branches already built: ``built`` is a list of
        ``(sub_builder, result_pytree)`` in `conditional`'s branch order, each sub-builder
        from `branch_builder` (no parameters) or with one parameter per leaf of
        ``operands`` (a flat list of Values)."""
        pred_or_index = self.capture(pred_or_index)
        index = self._branch_index(pred_or_index, built)
        if pred_or_index.dtype == dtypes.bool_:
            built = (built[1], built[0])   # index 0 is the false branch
        regions, outs = [], []
        for sub, out in built:
            out_leaves, out_treedef = sub._leaves(out, "branch result")
            regions.append(sub.finish_region(out_leaves))
            outs.append((out_leaves, out_treedef))
        first_leaves, first_treedef = outs[0]
        for out_leaves, out_treedef in outs[1:]:
            self._check_same_avals("conditional branch result", "the other branch's result",
                                   first_leaves, first_treedef, out_leaves, out_treedef)
        captured = list(dict.fromkeys(v for region in regions for v in region.captures))
        self._close_regions(regions, captured)
        avals = [(v.shape, v.dtype) for v in first_leaves]
        results = self.emit("case", [index, *operands, *captured], regions,
                            result_avals=tuple(avals))
        for i, result in enumerate(results):
            result.weak = all(out_leaves[i].weak for out_leaves, _ in outs)
        return tree_util.tree_unflatten(first_treedef, results)

    def _branch_index(self, pred_or_index: Value, branches) -> Value:
        if pred_or_index.shape != () or not (
                pred_or_index.dtype == dtypes.bool_ or dtypes.is_integer(pred_or_index.dtype)):
            raise self.error(PSCTypeError, "conditional needs a bool or integer scalar "
                             f"selector, got {pred_or_index!r}")
        if pred_or_index.dtype == dtypes.bool_:
            if len(branches) != 2:
                raise self.error(PSCValueError, "a bool conditional takes exactly two "
                                 "branches (true_fn, false_fn)")
            return self.convert(pred_or_index, np.int32)
        if not branches:
            raise self.error(PSCValueError, "conditional needs at least one branch")
        dtype = pred_or_index.dtype
        low = self.constant(0, dtype)
        high = self.constant(min(len(branches) - 1, np.iinfo(dtype).max), dtype)
        index = self.min(self.max(pred_or_index, low), high)
        return self.convert(index, np.int32)

    def _check_same_avals(self, what, against, leaves, treedef, new_leaves, new_treedef):
        if treedef != new_treedef:
            raise self.error(PSCTypeError, f"{what} has structure {new_treedef}, but "
                             f"{against} has {treedef}")
        for i, (old, new) in enumerate(zip(leaves, new_leaves)):
            if old.shape != new.shape or old.dtype != new.dtype:
                raise self.error(
                    PSCTypeError if old.shape == new.shape else PSCShapeError,
                    f"{what} {i} is {new.dtype}{list(new.shape)}, but {against} {i} is "
                    f"{old.dtype}{list(old.shape)}",
                    "keep shapes and dtypes fixed across iterations and branches")

    # --- finishing ------------------------------------------------------------------------

    def build(self, *outputs: Value) -> Computation:
        """Finish the computation with ``outputs`` as its results.

        Its parameters are the large constants (see `constant`), in the order they were
        first made, then parameters ``0..n-1``; the constants' arrays are
        ``Computation.constants``, to be passed before the arguments (`runtime.compile`'s
        `Executable` does).  The program text thus stays small and XLA receives the data as
        buffers.  Building again (after more ops) gives the same parameters.
        """
        if self._region.parent is not None:
            raise self.error(PSCValueError, "only the top-level builder can build")
        indices = sorted(self._params)
        if indices != list(range(len(indices))):
            raise self.error(PSCValueError, f"parameters {indices} are not numbered 0..n-1")
        self._region.outputs = [self.capture(v) for v in outputs]
        constants = [(snapshot, value) for _, snapshot, value in self._shared.large_constants]
        self._hoist([value for _, value in constants])
        self._region.params = [value for _, value in constants] + [self._params[i]
                                                                    for i in indices]
        return Computation(self.name, self._region,
                           constants=tuple(array for array, _ in constants))

    def _hoist(self, values: Sequence[Value]) -> None:
        """Turn the constants making ``values`` into parameters: drop their operations."""
        producers = {value.producer for value in values if value.producer is not None}
        if producers:
            self._region.operations = [op for op in self._region.operations
                                       if op not in producers]
        for value in values:
            value.producer = None


def _unary_method(op_name: str):
    def method(self, x: Value) -> Value:
        return self._op1(op_name, (x,))
    method.__doc__ = f"Element-wise StableHLO ``{op_name}``."
    return method


def _binary_method(op_name: str):
    def method(self, x: Value, y: Value) -> Value:
        return self._op1(op_name, (x, y))
    method.__doc__ = f"Element-wise StableHLO ``{op_name}`` (same shapes and dtypes)."
    return method


def _compare_method(direction: str):
    def method(self, x: Value, y: Value) -> Value:
        return self.compare(x, y, direction)
    method.__doc__ = f"Element-wise comparison ``{direction}``, giving bool."
    return method


for _method, (_op_name, _arity) in BUILDER_METHODS.items():
    setattr(Builder, _method, (_unary_method if _arity == 1 else _binary_method)(_op_name))
for _method, _direction in _COMPARISONS.items():
    setattr(Builder, _method, _compare_method(_direction))
