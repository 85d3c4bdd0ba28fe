"""NumPy indexing: ``x[index]`` (`getitem`) and ``x[index] = value`` (`setitem`).

Both follow one plan:

1. *Normalize* the index (`_parse`) into one entry per axis: ``...`` is expanded, lists
   become arrays, a static boolean mask becomes integer arrays (``np.nonzero``), static
   integers wrap and are checked against the shape, slices become ``range`` objects.
   ``None`` (and a 0-d boolean, which NumPy treats as a new axis indexed by ``[0]`` or
   ``[]``) reshapes ``x`` to have a unit axis there, so every entry indexes one axis.
2. *Basic part*: the slices are one ``slice`` op (and a ``reverse`` for negative steps),
   static integers slices of length 1, traced integer scalars a ``dynamic_slice``.
   A slice of static length at a traced start (``x[i:i + K]``: the bounds' affine forms,
   `runtime.index_facts`, give ``stop - start``; the step static and positive) is a
   *window*: one ``dynamic_slice`` of the axes it covers comes first, and the rest of the
   index applies to that block as to any array (writes: the block updated, then one
   ``dynamic_update_slice`` back).
3. *Advanced part*: when an entry is an integer array, every non-slice entry (integers
   included) is an advanced index.  They broadcast together and one ``gather`` picks
   them; the broadcast dimensions go where the first advanced index is when all of them
   are adjacent, else to the front, as in NumPy.

`setitem` builds a *new* array (like ``x.at[index].set(value)`` in JAX), with the value
cast to ``x.dtype`` (unsafe casting, as NumPy's assignment) and broadcast to the indexed
shape: a ``dynamic_update_slice`` when the indexed part is one block, else a ``scatter``.
Its other modes are NumPy's augmented assignment, ``x[index] += v`` being
``x[index] = x[index] + v``; `add_at` accumulates repeated indices like ``np.add.at``.

Where traced indices (known only when the program runs) differ from NumPy:

* Out-of-bounds traced indices cannot raise ``IndexError`` at run time.  Negative ones
  wrap first, as in NumPy; then reads *clamp* into range (``x[7]`` of 5 elements reads
  ``x[4]``: XLA's gather and dynamic slice clamp), while writes are *dropped*
  (``y[7] = v`` leaves ``y`` unchanged, also for ``+=`` and for the out-of-range entries of
  an index array): losing the write is better than corrupting a neighbour.  With the
  opt-in ``index`` run-time check (``jit_ps(..., checks=True)``, `runtime.checks`) both
  raise `PSCRuntimeIndexError` (an ``IndexError``) at the line when the call returns.
* A window NumPy would clip (``x[i:i + K]`` with ``i + K`` past the end, or a start
  whose slice would be empty or shorter after NumPy's wrapping of negative bounds) has a
  shape the program cannot have.  Where the bounds known while building (a loop index over
  a static range, `runtime.index_facts`) prove it fits, nothing is added; elsewhere an
  always-on ``window`` guard (`runtime.checks.always_guard`) raises `PSCRuntimeIndexError`
  at the line when the call returns.  A negative start counts from the end, as in NumPy
  (``x[-3:-1]``).
* A traced boolean mask, or a slice with a traced bound, selects a data-dependent number
  of elements: ``x[mask]`` and ``x[:k]`` are `masked.Masked` values (the full-size data and
  which elements are there), which element-wise operations, reductions, ``np.dot`` and
  assignment through the same slice or mask accept; anything needing their length is an
  error.  ``x[mask] = v`` is a ``select`` when ``v`` broadcasts over the selection.
* With repeated indices, ``x[idx] = v`` writes one of the values, not necessarily the
  last one as NumPy does (XLA's scatter leaves the order unspecified).
"""
from __future__ import annotations

import dataclasses
import operator

import numpy as np

from .. import dtypes
from ..builder import Builder
from ..checks import always_guard, guard, is_active
from ..errors import PSCIndexError, PSCShapeError, PSCTypeError, PSCValueError
from ..index_facts import affine
from ..ir import Value
from ..translation import has_traced, register_translation_rule
from . import masked
from ._core import broadcast_to, lift, static_int
from .elementwise import UFUNC_RULES

_INVALID_INDEX = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) "
                  "and integer or boolean arrays are valid indices")
_MASK_HINT = "use np.where(mask, x, other) instead"

# Augmented-assignment modes: the ufunc, and whether NumPy's in-place casting rule
# (same_kind) applies, as it does to ``x[i:j] += v`` but not to ``np.minimum``-style updates.
_MODES = {
    "add": (np.add, True), "sub": (np.subtract, True), "mul": (np.multiply, True),
    "truediv": (np.true_divide, True), "floordiv": (np.floor_divide, True),
    "mod": (np.remainder, True), "pow": (np.power, True), "and": (np.bitwise_and, True),
    "or": (np.bitwise_or, True), "xor": (np.bitwise_xor, True),
    "lshift": (np.left_shift, True), "rshift": (np.right_shift, True),
    "min": (np.minimum, False), "max": (np.maximum, False),
}


# --- normalizing the index ----------------------------------------------------------------

@dataclasses.dataclass
class _Window:
    """A slice with a traced start and a static length (``x[i:i + K]``, ``x[i - 1:i + 2]``,
    ``x[2 * i:2 * i + 2]``): ``count`` elements ``step`` apart from ``start``, which NumPy
    gives only when they lie inside the axis (it clips, giving fewer, otherwise).
    ``length`` is ``stop - start``, known from the bounds' affine forms
    (`runtime.index_facts`)."""

    start: Value
    length: int
    step: int
    size: int    # the axis

    @property
    def count(self) -> int:
        return -(-self.length // self.step)

    @property
    def span(self) -> int:
        """The elements of the axis the window covers, first to last."""
        return (self.count - 1) * self.step + 1

    def __len__(self) -> int:
        return self.count


def _is_slice_entry(e) -> bool:
    return isinstance(e, (range, _Window))


@dataclasses.dataclass
class _Plan:
    """A normalized index.  ``entries`` has one entry per axis of ``shape`` (``x``'s shape
    with unit axes for ``None``): a ``range`` (a slice), a `_Window` (a slice at a traced
    start), an ``int``, an integer ``np.ndarray``, or an integer `Value` (a traced scalar
    or array)."""

    shape: tuple
    entries: list
    scalar: bool   # an all-integer index: NumPy gives a scalar (it matters for casting)

    @property
    def advanced(self) -> bool:
        return any(isinstance(e, np.ndarray) or (isinstance(e, Value) and e.ndim > 0)
                   for e in self.entries)

    @property
    def slice_axes(self) -> list[int]:
        return [a for a, e in enumerate(self.entries) if _is_slice_entry(e)]

    @property
    def index_axes(self) -> list[int]:
        return [a for a, e in enumerate(self.entries) if not _is_slice_entry(e)]

    @property
    def windows(self) -> list[int]:
        return [a for a, e in enumerate(self.entries) if isinstance(e, _Window)]

    @property
    def batch_position(self) -> int:
        """Where the advanced dimensions go among the slice dimensions of the result."""
        axes = self.index_axes
        adjacent = axes == list(range(axes[0], axes[-1] + 1)) if axes else True
        return axes[0] if adjacent and axes else 0


def _parse(b: Builder, shape: tuple, index) -> _Plan:
    items = [_item(b, item) for item in (index if isinstance(index, tuple) else (index,))]
    if sum(item is Ellipsis for item in items) > 1:
        raise b.error(PSCValueError, "an index can only have a single ellipsis ('...')")
    used = sum(_axes_used(item) for item in items)
    if used > len(shape):
        raise b.error(PSCIndexError, f"too many indices for array: array is "
                      f"{len(shape)}-dimensional, but {used} were indexed")
    scalar = used == len(shape) and all(_is_integer(item) for item in items)
    new_shape, entries, axis = [], [], 0
    if not any(item is Ellipsis for item in items):
        items.append(Ellipsis)
    for item in items:
        if item is Ellipsis:
            for _ in range(len(shape) - used):
                new_shape.append(shape[axis])
                entries.append(range(shape[axis]))
                axis += 1
        elif item is None or _is_bool_scalar(item):
            # A 0-d boolean is a new axis indexed by [0] (True) or [] (False).
            new_shape.append(1)
            entries.append(range(1) if item is None else np.arange(int(item), dtype=np.int64))
        elif isinstance(item, np.ndarray) and item.dtype == np.bool_:
            _check_mask_shape(b, item, shape[axis:axis + item.ndim], axis)
            new_shape += shape[axis:axis + item.ndim]
            entries += list(np.nonzero(item))
            axis += item.ndim
        else:
            new_shape.append(shape[axis])
            entries.append(_entry(b, item, axis, shape[axis]))
            axis += 1
    return _Plan(tuple(new_shape), entries, scalar)


def _item(b: Builder, item):
    """One index item as None, Ellipsis, a slice, an int, an integer or boolean ndarray,
    or an integer or boolean `Value`."""
    if item is None or item is Ellipsis or isinstance(item, slice):
        return item
    if isinstance(item, Value):
        if not (dtypes.is_integer(item.dtype) or dtypes.is_bool(item.dtype)):
            raise b.error(PSCTypeError, _INVALID_INDEX, f"the index is {item.dtype}")
        return item
    if isinstance(item, (bool, np.bool_)):
        return np.asarray(item)
    if isinstance(item, (int, np.integer)):
        return operator.index(item)
    if isinstance(item, (list, tuple)):
        if has_traced(item):
            return _stack(b, item)
        try:
            item = np.asarray(item)
        except ValueError as err:
            raise b.error(PSCTypeError, f"{_INVALID_INDEX} ({err})") from None
        if item.size == 0 and item.dtype.kind == "f":   # NumPy reads [] as an empty index
            item = item.astype(np.intp)
    if isinstance(item, np.ndarray):
        if item.dtype == np.bool_:
            return item
        if item.dtype.kind in "iu":
            return int(item) if item.ndim == 0 else item
    if isinstance(item, masked.Masked):
        raise b.error(PSCValueError, f"an index array made by {item.what}, whose length is "
                      "only known when the program runs, can only index alone (x[cols]), "
                      "not in a tuple with other indices",
                      "index the full arrays and select: x[i, j] = np.where(mask, v, x[i, j])")
    raise b.error(PSCTypeError, _INVALID_INDEX)


def _stack(b: Builder, seq) -> Value:
    """A (nested) list holding traced integers as one int64 array."""
    parts = [_stack(b, e) if isinstance(e, (list, tuple)) else lift(b, e) for e in seq]
    if not all(dtypes.is_integer(p.dtype) for p in parts):
        raise b.error(PSCTypeError, _INVALID_INDEX)
    if len({p.shape for p in parts}) != 1:
        raise b.error(PSCShapeError, "an index list must not be ragged")
    parts = [b.reshape(b.convert(p, np.int64), (1,) + p.shape) for p in parts]
    return b.concatenate(parts, 0)


def _is_bool_scalar(item) -> bool:
    return isinstance(item, np.ndarray) and item.dtype == np.bool_ and item.ndim == 0


def _is_integer(item) -> bool:
    return isinstance(item, int) or (isinstance(item, Value) and item.ndim == 0
                                     and dtypes.is_integer(item.dtype))


def _axes_used(item) -> int:
    if item is None or item is Ellipsis:
        return 0
    if isinstance(item, (np.ndarray, Value)) and item.dtype == np.bool_:
        return item.ndim
    return 1


def _check_mask_shape(b: Builder, mask, shape, first_axis: int) -> None:
    for i, (size, mask_size) in enumerate(zip(shape, mask.shape)):
        if size != mask_size:
            raise b.error(PSCValueError, f"boolean index did not match indexed array along "
                          f"axis {first_axis + i}; size of axis is {size} but size of "
                          f"corresponding boolean axis is {mask_size}")


def _entry(b: Builder, item, axis: int, size: int):
    """The entry for an index item that consumes one axis, checked against its size."""
    if isinstance(item, slice):
        window = _window(item, size)
        if window is not None:
            return window
        bounds = [None if v is None else static_int(b, v, "a slice bound")
                  for v in (item.start, item.stop, item.step)]
        if bounds[2] == 0:
            raise b.error(PSCValueError, "slice step cannot be zero")
        return range(*slice(*bounds).indices(size))
    if isinstance(item, Value):
        if item.dtype == np.bool_:
            raise b.error(PSCValueError, "indexing with a traced boolean mask gives an array "
                          "whose size is only known when the program runs", _MASK_HINT)
        if size == 0 and item.size > 0:
            raise b.error(PSCIndexError, f"index is out of bounds for axis {axis} with size 0")
        return item
    indices = np.asarray(item)   # compared before narrowing, so huge indices cannot wrap
    bad = indices[(indices < -size) | (indices >= size)]
    if bad.size:
        raise b.error(PSCIndexError, f"index {bad.flat[0]} is out of bounds for axis {axis} "
                      f"with size {size}")
    indices = indices.astype(np.int64)
    indices = np.where(indices < 0, indices + size, indices)
    return int(indices) if isinstance(item, int) else indices


def _run_time_length_slice(shape: tuple, index) -> bool:
    """Whether ``index`` has a slice with a traced bound whose length is only known when
    the program runs (a `masked` window).  A slice of static length at a traced start
    (`_window`) is not one: it is a dynamic slice, with a shape."""
    if masked.traced_slice_position(index) is None:
        return False
    items = index if isinstance(index, tuple) else (index,)
    if any(isinstance(item, (list, tuple)) for item in items):
        return True   # not parsed here: the masked rules decide what they take
    after_ellipsis = len(shape) - sum(_axes_used(item) for item in items)
    axis = 0
    for item in items:
        if item is Ellipsis:
            axis += max(after_ellipsis, 0)
            continue
        if isinstance(item, slice) and masked.traced_slice_position(item) is not None:
            if axis >= len(shape) or _window(item, shape[axis]) is None:
                return True
        axis += _axes_used(item)
    return False


def _window(item: slice, size: int) -> _Window | None:
    """``item`` as a `_Window` when its start is traced, its step static and positive, and
    its stop is the start plus a static length (None otherwise: then its bounds must be
    static).  The length must fit the axis (else NumPy always gives fewer elements), and
    ``size + length`` the dtype (so that, for a start inside the axis, ``stop == start +
    length`` holds without wrapping)."""
    start, stop, step = item.start, item.stop, item.step
    if not (isinstance(start, Value) and isinstance(stop, Value)):
        return None
    if not (start.ndim == 0 and stop.ndim == 0 and start.dtype == stop.dtype
            and dtypes.is_integer(start.dtype)):
        return None
    if step is None:
        step = 1
    elif isinstance(step, (int, np.integer)) and not isinstance(step, (bool, np.bool_)):
        step = int(step)
    else:
        return None
    first, last = affine(start), affine(stop)
    if first.root is not last.root or first.scale != last.scale or step <= 0:
        return None
    window = _Window(start, last.offset - first.offset, step, size)
    if window.length <= 0 or window.span > size or \
            size + window.length > np.iinfo(start.dtype).max:
        return None
    return window


# --- shapes of the result -----------------------------------------------------------------

def _batch_shape(b: Builder, plan: _Plan) -> tuple:
    """The broadcast shape of the advanced indices (() without any)."""
    if not plan.advanced:
        return ()
    shapes = [np.shape(plan.entries[a]) if not isinstance(plan.entries[a], Value)
              else plan.entries[a].shape for a in plan.index_axes]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise b.error(PSCShapeError, "shape mismatch: indexing arrays could not be broadcast "
                      "together with shapes " + " ".join(map(_fmt_shape, shapes))) from None


def _result_shape(b: Builder, plan: _Plan) -> tuple:
    sizes = [len(plan.entries[a]) for a in plan.slice_axes]
    p = plan.batch_position
    return tuple(sizes[:p]) + _batch_shape(b, plan) + tuple(sizes[p:])


def _fmt_shape(shape) -> str:
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _index_dtype(plan: _Plan) -> np.dtype:
    """int32 unless an axis or a traced index needs 64 bits (narrowing would wrap a big
    traced index back into range instead of clamping it)."""
    starts = [e.start if isinstance(e, _Window) else e for e in plan.entries]
    wide = any(n >= 2**31 for n in plan.shape) or any(
        isinstance(e, Value) and (e.dtype.itemsize > 4 or e.dtype == np.uint32)
        for e in starts)
    return dtypes.int64 if wide else dtypes.int32


# --- reading ------------------------------------------------------------------------------

def getitem(b: Builder, x, index) -> Value:
    """``x[index]`` with NumPy's semantics (see the module docstring)."""
    python_number = _is_list_of_python_numbers(x) and not isinstance(index, tuple)
    x = lift(b, x)
    if _run_time_length_slice(x.shape, index):
        return masked.getitem_window(b, getitem, x, index)
    if _traced_mask(index) is not None:   # a selection of run-time length
        return masked.getitem_selection(b, x, index, _traced_mask(index))
    plan = _parse(b, x.shape, index)
    stored = _stored_at(b, x, plan)
    if stored is not None:
        return stored
    y = b.reshape(x, plan.shape)
    if plan.windows:
        y, plan = _open_windows(b, y, plan)[1:]
    result = _take(b, y, plan)
    if python_number and result.ndim == 0:
        # ``[1.5, 2.5][i]`` is a Python float: weak, as the list's elements are.
        result = b.broadcast_in_dim(result, (), ())
        result.weak = True
    return result


def _is_list_of_python_numbers(x) -> bool:
    """A flat Python list or tuple of Python numbers (or traced values that came from
    them), whose elements stay Python numbers when indexed."""
    return isinstance(x, (list, tuple)) and len(x) > 0 and all(
        (e.weak and e.ndim == 0) if isinstance(e, Value) else type(e) in (int, float, complex)
        for e in x)


def _take(b: Builder, y: Value, plan: _Plan) -> Value:
    shape = _result_shape(b, plan)
    if 0 in shape:   # nothing to read; avoids gathering from empty axes
        return b.broadcast_in_dim(b.constant(np.zeros((), y.dtype)), shape, ())
    y = _slice_static(b, y, plan)
    if plan.advanced:
        return _gather(b, y, plan)
    return b.reshape(_slice_traced(b, y, plan), shape)


def _slice_bounds(r: range) -> tuple[int, int, int, bool]:
    """(start, limit, stride, reversed) of a positive-stride slice with the elements of
    ``r``; a negative step reads them the other way round."""
    if len(r) == 0:
        return 0, 0, 1, False
    if r.step > 0:
        return r[0], r[-1] + 1, r.step, False
    return r[-1], r[0] + 1, -r.step, len(r) > 1


def _slice_static(b: Builder, y: Value, plan: _Plan) -> Value:
    """Apply the slices (and, without advanced indices, the static integers)."""
    bounds = []
    for e, size in zip(plan.entries, y.shape):
        if isinstance(e, range):
            bounds.append(_slice_bounds(e))
        elif isinstance(e, int) and not plan.advanced:
            bounds.append((e, e + 1, 1, False))
        else:
            bounds.append((0, size, 1, False))
    starts, limits, strides, flips = zip(*bounds) if bounds else ((), (), (), ())
    if (starts, limits, strides) != ((0,) * y.ndim, y.shape, (1,) * y.ndim):
        y = b.slice(y, starts, limits, strides)
    return b.reverse(y, [a for a, flip in enumerate(flips) if flip])


def _slice_traced(b: Builder, y: Value, plan: _Plan) -> Value:
    traced = [a for a, e in enumerate(plan.entries) if isinstance(e, Value)]
    if not traced:
        return y
    dtype = _index_dtype(plan)
    zero = b.constant(0, dtype)
    starts = [_traced_index(b, e, n, dtype) if a in traced else zero
              for a, (e, n) in enumerate(zip(plan.entries, y.shape))]
    sizes = [1 if a in traced else n for a, n in enumerate(y.shape)]
    return b.dynamic_slice(y, starts, sizes)


def _gather(b: Builder, y: Value, plan: _Plan) -> Value:
    axes, batch = plan.index_axes, _batch_shape(b, plan)
    dtype = _index_dtype(plan)
    components = [(_component(b, plan.entries[a], y.shape[a], batch, dtype),
                   range(len(batch))) for a in axes]
    indices = _index_array(b, components, batch, dtype)
    p, rest = plan.batch_position, len(plan.slice_axes)
    offset_dims = list(range(p)) + list(range(p + len(batch), len(batch) + rest))
    return b.gather(y, indices, offset_dims=offset_dims, collapsed_slice_dims=axes,
                    start_index_map=axes, index_vector_dim=len(batch),
                    slice_sizes=[1 if a in axes else n for a, n in enumerate(y.shape)])


# --- slices at traced starts -------------------------------------------------------------

def _open_windows(b: Builder, y: Value, plan: _Plan):
    """(starts, block, plan'): ``block`` is the part of ``y`` the windows cover (one
    ``dynamic_slice`` at ``starts``, full along the other axes), ``plan'`` indexes it with
    the windows as static slices from 0."""
    dtype = _index_dtype(plan)
    zero = b.constant(0, dtype)
    starts, sizes, entries = [], [], []
    for a, (e, n) in enumerate(zip(plan.entries, y.shape)):
        if isinstance(e, _Window):
            starts.append(_window_start_index(b, e, a, dtype))
            sizes.append(e.span)
            entries.append(range(0, e.span, e.step))
        else:
            starts.append(zero)
            sizes.append(n)
            entries.append(e)
    block = b.dynamic_slice(y, starts, sizes)
    return starts, block, dataclasses.replace(plan, entries=entries)


def _window_start_index(b: Builder, w: _Window, axis: int, dtype) -> Value:
    """Where window ``w`` starts, as NumPy reads it (a negative start counts from the
    end), in ``dtype``.  Where its bounds (`runtime.index_facts`) do not prove that the
    window fits, an always-on ``window`` guard fails the run when it does not: NumPy
    would give fewer elements, and the dynamic slice would clamp instead, silently."""
    start, n = w.start, w.size
    signed = not dtypes.is_unsigned(start.dtype)
    # the starts NumPy reads as `count` elements: [0, n - span] and, counted from the
    # end, [-n, -length - 1] (a stop of 0 or more would end the slice at once)
    inside, from_end = (0, n - w.span), (-n, -w.length - 1) if signed else None
    bounds = affine(start).interval()
    info = np.iinfo(start.dtype)
    exact = bounds is not None and info.min <= bounds[0] and bounds[1] <= info.max
    if exact and inside[0] <= bounds[0] and bounds[1] <= inside[1]:
        return b.convert(start, dtype)
    if exact and from_end and from_end[0] <= bounds[0] and bounds[1] <= from_end[1]:
        return b.add(b.convert(start, dtype), b.constant(n, dtype))
    fits = _within(b, start, *inside)
    if from_end:
        fits = b.or_(fits, _within(b, start, *from_end))
    always_guard(b, "window", b.not_(fits),
                 f"a slice of {w.count} element{'s' if w.count > 1 else ''} at a traced "
                 f"start does not fit axis {axis} (size {n}): NumPy would give fewer")
    wide = b.convert(start, dtype)
    if not signed:
        return wide
    return b.select(b.lt(wide, b.constant(0, dtype)), b.add(wide, b.constant(n, dtype)),
                    wide)


def _within(b: Builder, v: Value, low: int, high: int) -> Value:
    """``low <= v <= high`` (a bool scalar), compared in ``v``'s dtype (which holds both
    bounds: `_window` checked ``n + length`` fits)."""
    return b.and_(b.ge(v, b.constant(low, v.dtype)), b.le(v, b.constant(high, v.dtype)))


# --- index arrays -------------------------------------------------------------------------

def _traced_index(b: Builder, v: Value, size: int, dtype) -> Value:
    """A traced index in ``dtype``, negative values wrapped as NumPy does (once: an index
    below ``-size`` stays negative, so out of range).  Out-of-range indices are left so:
    gather and the dynamic slices clamp them, a scatter drops their updates."""
    signed = dtypes.is_integer(v.dtype) and not dtypes.is_unsigned(v.dtype)
    known = _known_range(v)
    if known is not None and 0 <= known[0] and known[1] < size:   # a loop index in range
        return b.convert(v, dtype)
    if known is not None and -size <= known[0] and known[1] < 0:
        return b.add(b.convert(v, dtype), b.constant(size, dtype))
    if is_active("index"):
        _guard_index(b, v, size, signed)
    v = b.convert(v, dtype)
    if signed:
        zeros = b.broadcast_in_dim(b.constant(0, dtype), v.shape, ())
        wrapped = b.add(v, b.broadcast_in_dim(b.constant(size, dtype), v.shape, ()))
        v = b.select(b.lt(v, zeros), wrapped, v)
    return v


def _known_range(v: Value) -> tuple[int, int] | None:
    """Inclusive bounds of a traced integer scalar known while the program is built
    (`runtime.index_facts`: a staged loop's index and affine forms of it), or None."""
    if v.ndim != 0 or v.dtype.kind not in "iu":
        return None
    return affine(v).interval()


def _in_range(e, n: int) -> bool:
    """Is the traced index ``e`` known to lie in ``[-n, n)``?"""
    known = _known_range(e)
    return known is not None and -n <= known[0] and known[1] < n


def _guard_index(b: Builder, v: Value, size: int, signed: bool) -> None:
    """The ``index`` run-time check (`runtime.checks`): NumPy raises ``IndexError`` for
    an index outside ``[-size, size)``.  Compared in ``v``'s own dtype (a bound it cannot
    hold, it cannot reach)."""
    info = np.iinfo(v.dtype)
    failed = None
    if size <= info.max:
        failed = b.ge(v, b.broadcast_in_dim(b.constant(size, v.dtype), v.shape, ()))
    if signed and -size >= info.min:
        low = b.lt(v, b.broadcast_in_dim(b.constant(-size, v.dtype), v.shape, ()))
        failed = low if failed is None else b.or_(failed, low)
    if failed is not None:
        guard(b, "index", failed, f"a traced index is out of bounds for an axis of size "
              f"{size}")


def _component(b: Builder, entry, size: int, shape: tuple, dtype):
    """One index component (an advanced entry) broadcast to ``shape``: a static ndarray
    or a `Value`."""
    if isinstance(entry, Value):
        return broadcast_to(b, _traced_index(b, entry, size, dtype), shape)
    return np.broadcast_to(np.asarray(entry, dtype), shape)


def _index_array(b: Builder, components, batch: tuple, dtype):
    """Stack ``components`` (each ``(array, dims)``: ``array`` spans the dimensions
    ``dims`` of ``batch``) into one index array of shape ``batch + (k,)``."""
    placed = []
    for array, dims in components:
        dims = list(dims)
        if isinstance(array, Value):
            placed.append(b.broadcast_in_dim(array, batch, dims))
        else:
            expanded = [array.shape[dims.index(d)] if d in dims else 1
                        for d in range(len(batch))]
            placed.append(np.broadcast_to(array.reshape(expanded), batch))
    if not any(isinstance(p, Value) for p in placed):
        return b.constant(np.stack(placed, axis=-1).astype(dtype))
    columns = [b.reshape(p if isinstance(p, Value) else b.constant(p.astype(dtype)),
                         batch + (1,)) for p in placed]
    return columns[0] if len(columns) == 1 else b.concatenate(columns, len(batch))


# --- writing ------------------------------------------------------------------------------

def setitem(b: Builder, x, index, value, mode: str = "set") -> Value:
    """``x`` with ``x[index] = value`` applied (``mode`` "add" is ``x[index] += value``,
    and so on), as a new array."""
    x = lift(b, x)
    if mode != "set" and mode not in _MODES:
        raise b.error(PSCValueError, f"unknown assignment mode {mode!r}; expected 'set' or "
                      f"one of {sorted(_MODES)}")
    mask = _traced_mask(index)
    if mask is not None and isinstance(value, masked.Masked):   # Z[I] = f(Z[I])
        return masked.setitem_selection(b, x, index, mask, value, mode, _masked_combine)
    if mask is not None:
        return _masked_update(b, x, index, mask, value, mode)
    if masked.involved(index, value) and (isinstance(value, masked.Masked) or
                                          _run_time_length_slice(x.shape, index)):
        # y[:k] = v, y[:k] += v with a traced k
        return masked.setitem_window(b, getitem, setitem, x, index, value, mode,
                                     _masked_combine)
    plan = _parse(b, x.shape, index)
    y = b.reshape(x, plan.shape)
    if plan.windows:   # the windows' block read, updated, and written back
        starts, block, inner = _open_windows(b, y, plan)
        written = _set_plan(b, block, inner, value, mode)
        return b.reshape(b.dynamic_update_slice(y, written, starts), x.shape)
    # writing the elements an earlier write made `x` with: write into the array before it
    base = _overwritten(b, x, plan)
    updated = []
    result = b.reshape(_set_plan(b, y, plan, value, mode, updated,
                                 into=b.reshape(base, plan.shape)), x.shape)
    _remember_store(b, result, plan, updated[0], base)
    return result


def _set_plan(b: Builder, y: Value, plan: _Plan, value, mode: str, updated=None,
              into: Value | None = None) -> Value:
    """``y`` with ``y[plan] (mode)= value``; ``into``: the array to write into instead of
    ``y`` (one that differs from ``y`` at most in the elements written)."""
    target = _result_shape(b, plan)
    if mode == "set":
        update = _cast(b, value, y.dtype)
    else:
        current = _stored_at(b, y, plan) if y.shape == plan.shape else None
        current = _take(b, y, plan) if current is None else current
        update = _combine(b, mode, current, value, y.dtype, plan.scalar)
    update = _fit(b, update, target)
    if updated is not None:
        updated.append(update)
    if 0 in target:
        return y
    return _write(b, y if into is None else into, plan, update)


# --- reading back what was just written ---------------------------------------------------
#
# ``A[i, j] -= s; A[i, j] /= A[j, j]`` reads ``A`` after the first statement wrote it.  Read
# from the new array, the write cannot happen in place (XLA copies the whole array, twice
# per statement in a loop).  The value is known without it: each array that a basic index
# (integers, traced scalars, slices) wrote remembers the index, the value written and the
# array before; a read of the same index returns the value (basic indices never repeat an
# element), and a read of one element at another index reads the array before, selecting
# the written value where the two indices turn out equal at run time.

_READ_THROUGH_DEPTH = 4   # writes a one-element read looks through


def _store_key(plan: _Plan):
    if plan.advanced or plan.windows:
        return None
    entries = []
    for e in plan.entries:
        if isinstance(e, Value):
            entries.append(("traced", e.id))
        elif isinstance(e, range):
            entries.append(("slice", e.start, e.stop, e.step))
        elif isinstance(e, (int, np.integer)):
            entries.append(("int", int(e)))
        else:
            return None
    return plan.shape, tuple(entries), plan.scalar


def _stores(b: Builder) -> dict:
    stores = getattr(b, "_psc_element_stores", None)
    if stores is None:
        stores = b._psc_element_stores = {}
    return stores


def _remember_store(b: Builder, written: Value, plan: _Plan, update: Value,
                    before: Value) -> None:
    key = _store_key(plan)
    if key is not None and written is not before:
        # the record keeps the plan's traced entries alive, so their ids stay theirs
        _stores(b)[written.id] = (written, key, update, plan, before)


def _stored_at(b: Builder, x, plan: _Plan, depth: int = 0) -> Value | None:
    """``x[plan]`` from what the write that made ``x`` remembers; None when unknown."""
    if not isinstance(x, Value):
        return None
    record = _stores(b).get(x.id)
    if record is None or record[0] is not x:
        return None
    _, key, update, written_plan, before = record
    if key == _store_key(plan):
        return update
    # Only one-element reads look further: a block read from the array before would keep
    # that array alive past the write, which then cannot be done in place (stencils).
    if depth >= _READ_THROUGH_DEPTH or not (_one_element(plan) and _one_element(written_plan)):
        return None
    same = _same_element(b, written_plan, plan, x.shape)
    older = _stored_at(b, before, plan, depth + 1)
    if older is None and same is not True:
        older = _take(b, before, plan)
    if same is False:
        return older
    if same is True:
        return update
    return b.select(same, update, older)


def _overwritten(b: Builder, x: Value, plan: _Plan) -> Value:
    """The array before the write that made ``x``, when that write wrote exactly the
    elements of ``plan`` (``A[i, j] -= s; A[i, j] /= d``: one update of ``A``); else ``x``."""
    record = _stores(b).get(x.id)
    if record is not None and record[0] is x and record[1] == _store_key(plan):
        return record[4]
    return x


def _one_element(plan: _Plan) -> bool:
    return plan.scalar and not plan.advanced and not plan.windows and all(
        isinstance(e, (Value, int, np.integer)) for e in plan.entries)


def _same_element(b: Builder, first: _Plan, second: _Plan, shape: tuple):
    """Do two one-element indices name the same element: True, False, or a traced bool."""
    dtype = np.dtype(np.int64)
    test = None
    for e, f, n in zip(first.entries, second.entries, shape):
        if not isinstance(e, Value) and not isinstance(f, Value):
            if int(e) % n != int(f) % n:
                return False
            continue
        if e is f:
            continue
        equal = b.eq(*(_traced_index(b, v, n, dtype) if isinstance(v, Value) else
                       b.constant(int(v) % n, dtype) for v in (e, f)))
        test = equal if test is None else b.and_(test, equal)
    return True if test is None else test


def add_at(b: Builder, x, index, value) -> Value:
    """``np.add.at(x, index, value)`` as a new array: repeated indices accumulate (unlike
    ``x[index] += value``).  Not registered, since ``np.add.at`` works in place."""
    x = lift(b, x)
    plan = _parse(b, x.shape, index)
    y = b.reshape(x, plan.shape)
    if plan.windows:
        starts, block, inner = _open_windows(b, y, plan)
        written = _add_at_plan(b, block, inner, value)
        return b.reshape(b.dynamic_update_slice(y, written, starts), x.shape)
    return b.reshape(_add_at_plan(b, y, plan, value), x.shape)


def _add_at_plan(b: Builder, y: Value, plan: _Plan, value) -> Value:
    target = _result_shape(b, plan)
    update = _fit(b, _cast(b, value, y.dtype), target)
    if 0 in target:
        return y
    if not plan.advanced:   # basic indices never repeat an element
        return _write(b, y, plan, b.add(_take(b, y, plan), update))
    return _scatter(b, y, plan, update, "add")


def _cast(b: Builder, value, dtype) -> Value:
    """``value`` converted to the array's dtype as NumPy's assignment does (unsafe)."""
    return lift(b, value, dtype)


def _combine(b: Builder, mode: str, current: Value, value, dtype, scalar: bool) -> Value:
    """``ufunc(current, value)`` cast back to ``dtype``: NumPy's augmented assignment, whose
    in-place operation refuses a cast across kinds or a bigger broadcast shape, unless
    ``x[index]`` is a scalar."""
    ufunc, in_place = _MODES[mode]
    result = UFUNC_RULES[ufunc](b, current, value)
    if in_place and not scalar and result.shape != current.shape:
        raise b.error(PSCShapeError, f"non-broadcastable output operand with shape "
                      f"{_fmt_shape(current.shape)} doesn't match the broadcast shape "
                      f"{_fmt_shape(result.shape)}")
    if in_place and not scalar and not np.can_cast(result.dtype, dtype, "same_kind"):
        raise b.error(PSCTypeError, f"Cannot cast ufunc '{ufunc.__name__}' output from "
                      f"dtype('{result.dtype}') to dtype('{dtype}') with casting rule "
                      "'same_kind'")
    return b.convert(result, dtype)


def _masked_combine(b: Builder, mode: str, current: Value, value, dtype) -> Value:
    return _combine(b, mode, current, value, dtype, scalar=False)


def _fit(b: Builder, v: Value, shape: tuple) -> Value:
    """Broadcast an assigned value to the indexed shape; like NumPy, extra leading unit
    dimensions of the value are dropped."""
    vshape = v.shape
    while len(vshape) > len(shape) and vshape[0] == 1:
        vshape = vshape[1:]
    if len(vshape) > len(shape) or any(
            d not in (1, t) for d, t in zip(reversed(vshape), reversed(shape))):
        raise b.error(PSCShapeError, f"could not broadcast input array from shape "
                      f"{_fmt_shape(v.shape)} into shape {_fmt_shape(shape)}")
    return broadcast_to(b, b.reshape(v, vshape), shape)


def _strided(e) -> bool:
    return isinstance(e, range) and len(e) > 1 and abs(e.step) > 1


def _write(b: Builder, y: Value, plan: _Plan, update: Value) -> Value:
    """``y`` with ``update`` (shaped like ``y[plan]``) written at ``plan``."""
    if plan.advanced or any(_strided(e) for e in plan.entries):
        return _scatter(b, y, plan, update, "set")
    return _write_block(b, y, plan, update)


def _window_start(e: range) -> int:
    return min(e) if len(e) else 0


def _write_block(b: Builder, y: Value, plan: _Plan, update: Value) -> Value:
    """The indexed part is one block (step +-1 slices and integers): one
    ``dynamic_update_slice``, the update reversed where a slice steps backwards."""
    flips = [i for i, a in enumerate(plan.slice_axes) if plan.entries[a].step < 0]
    update = b.reverse(update, flips)
    update = b.reshape(update, [len(e) if isinstance(e, range) else 1 for e in plan.entries])
    dtype = _index_dtype(plan)
    starts = [_traced_index(b, e, n, dtype) if isinstance(e, Value) else
              b.constant(_window_start(e) if isinstance(e, range) else e, dtype)
              for e, n in zip(plan.entries, y.shape)]
    # dynamic_update_slice clamps its starts, which would write over a neighbour: a write
    # at an out-of-range traced index is dropped instead (see the module docstring), by
    # writing back what the clamped window holds.  Selecting on the window, not on the
    # whole array, keeps the update in place (``y`` is read only by the window's slice).
    traced = [(start, n) for e, start, n in zip(plan.entries, starts, y.shape)
              if isinstance(e, Value) and not _in_range(e, n)]
    if traced:
        held = b.dynamic_slice(y, starts, update.shape)
        update = b.select(b.broadcast_in_dim(_all_in_bounds(b, traced, dtype),
                                             update.shape, ()), update, held)
    return b.dynamic_update_slice(y, update, starts)


def _all_in_bounds(b: Builder, starts, dtype) -> Value:
    """A scalar bool: every wrapped traced index ``start`` lies in ``[0, n)``."""
    ok = None
    for start, n in starts:
        inside = b.and_(b.ge(start, b.constant(0, dtype)), b.lt(start, b.constant(n, dtype)))
        ok = inside if ok is None else b.and_(ok, inside)
    return ok


def _scatter(b: Builder, y: Value, plan: _Plan, update: Value, mode: str) -> Value:
    """One scatter: advanced indices and strided slices index single elements (their
    dimensions are scatter dimensions), the step +-1 slices are windows."""
    entries, batch = plan.entries, _batch_shape(b, plan)
    strided = [a for a in plan.slice_axes if _strided(entries[a])]
    windows = [a for a in plan.slice_axes if a not in strided]
    # Scatter wants the update as (advanced dims, strided dims, window dims).
    labels = [("axis", a) for a in plan.slice_axes]
    p = plan.batch_position
    labels[p:p] = [("batch", i) for i in range(len(batch))]
    order = ([("batch", i) for i in range(len(batch))]
             + [("axis", a) for a in strided + windows])
    update = b.transpose(update, [labels.index(label) for label in order])
    n_scatter = len(batch) + len(strided)
    update = b.reverse(update, [n_scatter + i for i, a in enumerate(windows)
                                if entries[a].step < 0 and len(entries[a]) > 1])
    scatter_shape = batch + tuple(len(entries[a]) for a in strided)
    dtype = _index_dtype(plan)
    offsets = [a for a in windows if _window_start(entries[a]) != 0]
    components = (
        [(_component(b, entries[a], y.shape[a], batch, dtype),
          range(len(batch))) for a in plan.index_axes]
        + [(np.asarray(entries[a], dtype), (len(batch) + i,)) for i, a in enumerate(strided)]
        + [(np.asarray(_window_start(entries[a]), dtype), ()) for a in offsets])
    indices = _index_array(b, components, scatter_shape, dtype)
    return b.scatter(y, indices, update,
                     update_window_dims=range(n_scatter, n_scatter + len(windows)),
                     inserted_window_dims=sorted(plan.index_axes + strided),
                     scatter_dims_to_operand_dims=plan.index_axes + strided + offsets,
                     index_vector_dim=len(scatter_shape), mode=mode)


# --- traced boolean masks -----------------------------------------------------------------

def _traced_mask(index):
    """The traced boolean mask in ``index``, or None."""
    items = index if isinstance(index, tuple) else (index,)
    masks = [item for item in items if isinstance(item, Value) and item.dtype == np.bool_]
    return masks[0] if masks else None


def _masked_update(b: Builder, x: Value, index, mask: Value, value, mode: str) -> Value:
    """``x[..., mask, ...] = value`` as a ``select``: the value must broadcast over the
    selected elements, whose number is only known when the program runs."""
    p = masked.mask_position(b, x, index, mask, "in an assignment", _MASK_HINT)
    value = _cast(b, value, x.dtype) if mode == "set" else lift(b, value)
    value = _fit_masked(b, value, x.shape, p, mask.ndim)
    new = value if mode == "set" else _combine(b, mode, x, value, x.dtype, scalar=False)
    new = broadcast_to(b, new, x.shape)
    selected = b.broadcast_in_dim(mask, x.shape, range(p, p + mask.ndim))
    return b.select(selected, new, x)


def _fit_masked(b: Builder, v: Value, shape: tuple, p: int, k: int) -> Value:
    """``v`` fitted to NumPy's indexed shape ``shape[:p] + (n,) + shape[p + k:]`` for an
    unknown count ``n`` (so it must be 1 there), then laid out along ``shape``."""
    indexed = shape[:p] + (1,) + shape[p + k:]
    vshape = v.shape
    while len(vshape) > len(indexed) and vshape[0] == 1:
        vshape = vshape[1:]
    vshape = (1,) * (len(indexed) - len(vshape)) + vshape
    if len(vshape) > len(indexed) or any(d not in (1, t) for d, t in zip(vshape, indexed)):
        raise b.error(PSCShapeError, f"cannot assign an array of shape "
                      f"{_fmt_shape(v.shape)} through a traced boolean mask: the number of "
                      "selected elements is only known when the program runs",
                      "assign a value that broadcasts over the selected elements (a scalar, "
                      "or one row of the masked axes)")
    result = b.reshape(v, vshape[:p] + (1,) * k + vshape[p + 1:])
    result.weak = v.weak   # a Python scalar keeps adapting to x's dtype
    return result


register_translation_rule("operator.getitem", getitem)
register_translation_rule("operator.setitem", setitem)
