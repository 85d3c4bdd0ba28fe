"""Arrays whose length is only known when the program runs, staged over a static bound.

``r[:k]`` with a traced ``k``, ``a[row[i]:row[i + 1]]`` and ``data[mask]`` with a traced
boolean ``mask`` have a data-dependent number of elements, which an XLA array cannot have.
Indexing gives a `Masked` instead: the full-size data (a `Value` whose extent along the
masked axes is the indexed array's) and which of its elements are really there:

* a *window* (a slice with a traced bound, step 1) is *left-aligned*: its element ``j`` is
  at position ``j`` of the masked axis, and the positions ``0 <= j < length`` (a traced
  int64 scalar) are valid.  Two windows of one length line up whatever their starts, so
  ``np.dot(np.flip(r[:k]), y[:k])`` is an element-wise product and a sum.
* a *selection* (a traced boolean mask over ``k`` axes) keeps every element where it is:
  the mask says which are valid.  Two selections by one mask line up position by position
  (``Z[I] ** 2 + C[I]``); assigned through that mask, ``Z[I] = ...`` is a ``select``.

What a `Masked` supports, with NumPy's results on the valid elements:

* element-wise operations (operators, ufuncs, ``astype``, ``clip``, ``round``, ``copy``,
  3-argument ``np.where``) with scalars, with arrays broadcasting over the masked axis
  (size 1 there) and with other `Masked` values that line up.  Windows line up when their
  lengths are equal: provably (the same computation of the same values, `same_value`), or,
  under the ``index`` run-time check (``jit_ps(..., checks=True)``), checked when the
  program runs (a mismatch raises `PSCRuntimeIndexError`, also where NumPy would broadcast
  a length-1 operand).  Without the check, lengths that cannot be proven equal are an error
  when the program is built: never a silent difference from NumPy.  Selections line up
  when their masks are provably the same.
* reductions over everything or over the masked axis: ``sum``, ``prod``, ``mean``,
  ``max``, ``min``, ``any``, ``all`` (functions and methods), the invalid elements filled
  with the reduction's identity.  ``mean`` of nothing is NaN, as in NumPy (which also
  warns).  ``max``/``min`` of nothing, which NumPy refuses with ``ValueError``, is NaN for
  floating dtypes and the identity (the dtype's smallest/largest value) for integers; the
  ``index`` run-time check raises instead.
* ``np.dot``, ``@`` and ``np.vdot`` of two 1-d values that line up (the filled products
  summed); ``np.flip`` of a window along its masked axis; ``x[m]`` with ``m`` an integer
  `Masked` (a gather: invalid lanes read a clamped, in-bounds position).
* as an assigned value: ``y[:k] = v``, ``y[:k] += v`` (`setitem_window`) and ``Z[I] = f(Z[I])``
  (`setitem_selection`).

Anything that needs the length itself (``.shape``, ``len``, returning it, carrying it
through a loop, a NumPy function without a masked rule) is a `PSCValueError` at the line,
saying so and suggesting a masked form (a reduction, ``np.where``).
"""
from __future__ import annotations

import operator

import numpy as np
from jax import tree_util

from .. import dtypes
from ..builder import Builder
from ..checks import guard, is_active
from ..context import current_builder, has_builder
from ..errors import PSCIndexError, PSCShapeError, PSCTypeError, PSCValueError
from ..ir import Value
from ..translation import lookup_rule, qualified_name
from . import masked_chunks as chunked
from ._core import broadcast_to, lift, static_int

_HINT = ("keep the full size instead: reduce it (sum, mean, max, np.dot), or use "
         "np.where(mask, x, 0) over the whole array")


class Masked:
    """``data`` with its valid elements: see the module docstring.

    ``axis`` is the first masked axis of ``data`` and ``k`` the number of masked axes (1
    for a window); a window has ``length`` (a traced int64 scalar), a selection ``mask``
    (a bool `Value` of shape ``data.shape[axis:axis + k]``).  ``what`` names where it was
    made, for error messages.
    """

    __slots__ = ("_data", "axis", "k", "length", "mask", "what", "origin", "in_place",
                 "begin")
    __array_ufunc__ = None   # ndarray + Masked: NumPy defers to Masked.__radd__

    def __init__(self, data: Value, axis: int, *, length: Value | None = None,
                 mask: Value | None = None, what: str = "a slice with a traced bound"):
        self.data, self.axis, self.length, self.mask, self.what = data, axis, length, mask, what
        self.k = 1 if mask is None else mask.ndim
        # where it was made: the error's place when it escapes where no line is current
        self.origin = current_builder().location if has_builder() else None

    # A window may also be held *in place*: ``in_place`` is the data with element j at
    # position ``begin + j`` (as in the array it was sliced from), and ``data`` (the
    # left-aligned form every rule reads) is shifted from it only when first read.  The
    # rules that keep positions (element-wise operations of windows that start alike, a
    # product along the free axis, an assignment through a slice with the same start) use
    # ``in_place`` and never shift: ``cov[i:, i] = data[:, i] @ data[:, i:]`` is one
    # matrix-vector product and a masked write, not two shifts of a matrix per step.

    @property
    def data(self) -> Value:
        if self._data is None:
            self._data = _shift_left(current_builder(), self.in_place, self.axis, self.begin)
        return self._data

    @data.setter
    def data(self, value: Value) -> None:
        self._data, self.in_place, self.begin = value, None, None

    @classmethod
    def window_in_place(cls, in_place: Value, axis: int, begin: Value, length: Value,
                        what: str = "a slice with a traced bound") -> "Masked":
        out = cls(None, axis, length=length, what=what)
        out.in_place, out.begin = in_place, begin
        return out

    def with_in_place(self, in_place: Value, axis: int) -> "Masked":
        out = Masked.window_in_place(in_place, axis, self.begin, self.length, self.what)
        out.origin = self.origin
        return out

    @property
    def is_window(self) -> bool:
        return self.mask is None

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def ndim(self) -> int:
        """NumPy's: the masked axes are one axis of the result."""
        return self.data.ndim - self.k + 1

    @property
    def extent(self) -> tuple:
        """The static extent of the masked axes of ``data``."""
        return self.data.shape[self.axis:self.axis + self.k]

    def with_data(self, data: Value, axis: int | None = None) -> "Masked":
        out = Masked(data, self.axis if axis is None else axis, length=self.length,
                     mask=self.mask, what=self.what)
        out.origin = self.origin
        return out

    def valid(self, b: Builder) -> Value:
        """A bool `Value` shaped like ``data``: which elements are there."""
        if self.is_window:
            n = self.data.shape[self.axis]
            lanes = b.iota((n,), dtypes.int64)
            here = b.lt(lanes, b.broadcast_in_dim(self.length, (n,), ()))
        else:
            here = self.mask
        return b.broadcast_in_dim(here, self.data.shape, range(self.axis, self.axis + self.k))

    def count(self, b: Builder) -> Value:
        """The number of valid positions of the masked axes (an int64 scalar)."""
        if self.is_window:
            return self.length
        return b.reduce(b.convert(self.mask, dtypes.int64), "sum", range(self.k))

    def filled_in_place(self, b: Builder, fill) -> Value:
        """Like `filled`, but a window held in place stays there: for a reduction over
        the masked axis, where positions along it do not matter."""
        if self.in_place is None:
            return self.filled(b, fill)
        other = b.broadcast_in_dim(b.constant(np.asarray(fill, self.dtype)),
                                   self.in_place.shape, ())
        return b.select(_inside(b, self.in_place.shape, self.axis, self.begin, self.length),
                        self.in_place, other)

    def filled(self, b: Builder, fill) -> Value:
        """``data`` with ``fill`` (a scalar of its dtype) where nothing is."""
        other = b.broadcast_in_dim(b.constant(np.asarray(fill, self.dtype)), self.data.shape, ())
        return b.select(self.valid(b), self.data, other)

    # --- what needs the length ----------------------------------------------------------

    def __psc_escape__(self, what: str):
        error = PSCValueError(f"{what} needs the length of an array made by {self.what}, "
                              "which is only known when the program runs", hint=_HINT)
        location = current_builder().location if has_builder() else None
        raise error.with_location(location or self.origin)

    @property
    def shape(self):
        self.__psc_escape__("its .shape")

    @property
    def size(self):
        self.__psc_escape__("its .size")

    def __len__(self):
        self.__psc_escape__("len()")

    def __iter__(self):
        self.__psc_escape__("iterating over it")

    def __array__(self, *args, **kwargs):
        self.__psc_escape__("converting it to a NumPy array (returning it, or passing it "
                            "where an array of known shape is needed)")

    def __bool__(self):
        self.__psc_escape__("its truth value")

    def __index__(self):
        self.__psc_escape__("its integer value")

    def __float__(self):
        self.__psc_escape__("its Python float")

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        self.__psc_escape__(f".{name}")

    def __repr__(self) -> str:
        form = "window" if self.is_window else "selection"
        return f"Masked({form}, axis={self.axis}, data={self.data!r})"

    __hash__ = object.__hash__

    # --- calls --------------------------------------------------------------------------

    @classmethod
    def __psc_translate__(cls, b: Builder, fn, args, kwargs):
        """`translation.translate` hands over every call that has a `Masked` argument."""
        name = fn if isinstance(fn, str) else (qualified_name(fn) or getattr(
            fn, "__name__", repr(fn)))
        rule = _MASKED_RULES.get(name)
        if rule is not None:
            return rule(b, lookup_rule(fn) or lookup_rule(name), *args, **kwargs)
        if name in _ELEMENTWISE:
            return elementwise(b, lookup_rule(fn) or lookup_rule(name), args, kwargs)
        masked = next(a for a in _leaves((args, kwargs)) if isinstance(a, Masked))
        shown = name.replace("numpy.ndarray.", "ndarray.").replace("numpy.", "np.")
        raise b.error(PSCValueError, f"{shown} has no rule for an array made by "
                      f"{masked.what}, whose length is only known when the program runs",
                      _HINT)

    def __getitem__(self, index):
        return _apply(operator.getitem, self, index)

    def __setitem__(self, index, value):
        raise PSCTypeError("traced arrays cannot be changed in place",
                           hint="assign into the array it was taken from instead")

    def __round__(self, ndigits=None):
        return _apply("numpy.round", self, 0 if ndigits is None else ndigits)

    @property
    def T(self):
        return _apply("numpy.transpose", self)

    @property
    def real(self):
        return _apply("numpy.real", self)

    @property
    def imag(self):
        return _apply("numpy.imag", self)


def _leaves(tree):
    return tree_util.tree_leaves(tree)


def _apply(fn, *args, **kwargs):
    b = current_builder()
    return Masked.__psc_translate__(b, fn, args, kwargs)


def _binary(op):
    return lambda self, other: _apply(op, self, other)


def _reflected(op):
    return lambda self, other: _apply(op, other, self)


def _unary(op):
    return lambda self: _apply(op, self)


def _inplace(op):
    def method(self, other):   # NumPy's in-place rule: the dtype is kept
        result = _apply(op, self, other)
        if not np.can_cast(result.dtype, self.dtype, "same_kind"):
            b = current_builder()
            raise b.error(PSCTypeError, f"Cannot cast ufunc output from dtype("
                          f"'{result.dtype}') to dtype('{self.dtype}') with casting rule "
                          "'same_kind'")
        return result.with_data(current_builder().convert(result.data, self.dtype))
    return method


_BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
           "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
           "pow": operator.pow, "matmul": operator.matmul, "and": operator.and_,
           "or": operator.or_, "xor": operator.xor, "lshift": operator.lshift,
           "rshift": operator.rshift}
for _name, _op in _BINARY.items():
    setattr(Masked, f"__{_name}__", _binary(_op))
    setattr(Masked, f"__r{_name}__", _reflected(_op))
    setattr(Masked, f"__i{_name}__", _inplace(_op))
for _name, _op in {"lt": operator.lt, "le": operator.le, "gt": operator.gt,
                   "ge": operator.ge, "eq": operator.eq, "ne": operator.ne}.items():
    setattr(Masked, f"__{_name}__", _binary(_op))
for _name, _op in {"neg": operator.neg, "pos": operator.pos, "invert": operator.invert,
                   "abs": operator.abs}.items():
    setattr(Masked, f"__{_name}__", _unary(_op))
for _name in ("sum", "mean", "prod", "max", "min", "all", "any", "astype", "clip", "copy",
              "round", "dot", "conj", "conjugate"):
    setattr(Masked, _name, (lambda q: lambda self, *a, **kw: _apply(q, self, *a, **kw))(
        f"numpy.ndarray.{_name}"))


# --- proving two values equal -----------------------------------------------------------

_UNCOMPARED = frozenset({"while", "case", "check", "debug_callback", "parameter"})


def same_value(x, y, _memo=None) -> bool:
    """Whether ``x`` and ``y`` are provably equal when the program runs: the same value,
    equal constants, or the same operation applied to provably equal operands (pure ops
    only; ``A_row[i + 1] - A_row[i]`` computed twice is the same length)."""
    if x is y:
        return True
    if not isinstance(x, Value) or not isinstance(y, Value):
        if isinstance(x, Value) or isinstance(y, Value):
            return False
        return bool(np.array_equal(np.asarray(x), np.asarray(y)))
    memo = {} if _memo is None else _memo
    key = (x.id, y.id)
    if key in memo:
        return memo[key]
    memo[key] = False   # while comparing (no cycles in SSA, but be safe)
    px, py = x.producer, y.producer
    result = (px is not None and py is not None and x.aval == y.aval
              and px.name == py.name and px.name not in _UNCOMPARED
              and not px.regions and not py.regions
              and px.results.index(x) == py.results.index(y)
              and _same_attrs(px.attrs, py.attrs)
              and len(px.operands) == len(py.operands)
              and all(same_value(a, c, memo) for a, c in zip(px.operands, py.operands)))
    memo[key] = result
    return result


def _same_attrs(a: dict, c: dict) -> bool:
    if a.keys() != c.keys():
        return False
    for key, value in a.items():
        other = c[key]
        if isinstance(value, np.ndarray) or isinstance(other, np.ndarray):
            if not (isinstance(value, np.ndarray) and isinstance(other, np.ndarray)
                    and value.dtype == other.dtype and value.shape == other.shape
                    and np.array_equal(value, other, equal_nan=value.dtype.kind in "fc")):
                return False
        else:
            try:
                if type(value) is not type(other) or value != other:
                    return False
            except (TypeError, ValueError):
                return False
    return True


# --- element-wise -----------------------------------------------------------------------

def _line_up(b: Builder, ref: Masked, other: Masked) -> None:
    """Check that ``other``'s elements pair with ``ref``'s, position by position."""
    right = ref.data.ndim - ref.axis - ref.k
    if other.is_window != ref.is_window or other.k != ref.k or \
            other.data.ndim - other.axis - other.k != right:
        raise b.error(PSCValueError, f"cannot combine an array made by {ref.what} with "
                      f"one made by {other.what}: their elements cannot be paired before "
                      "the program runs", _HINT)
    if ref.is_window:
        if same_value(ref.length, other.length):
            return
        if is_active("index"):
            guard(b, "index", b.ne(ref.length, other.length),
                  "operands could not be broadcast together: two slices with traced bounds "
                  "have different lengths")
            return
        n, m = ref.data.shape[ref.axis], other.data.shape[other.axis]
        sizes = f" of arrays of different sizes ({n} and {m}, which clip the bounds " \
            "differently)" if n != m else ""
        raise b.error(PSCShapeError, "cannot prove that two slices with traced bounds"
                      f"{sizes} have the same length, which NumPy requires (it raises "
                      "ValueError when they differ)", "compute both bounds the same way, or "
                      "turn on the 'index' run-time check (jit_ps(..., checks=True)) to "
                      "check it when the program runs")
    if ref.mask.shape != other.mask.shape or not same_value(ref.mask, other.mask):
        raise b.error(PSCValueError, "cannot combine two arrays selected by traced boolean "
                      "masks that are not provably the same: their elements cannot be paired "
                      "before the program runs", "use one mask, or np.where(mask, x, y) "
                      "over the whole arrays")


def _common_extent(b: Builder, masked: list) -> list:
    """Windows of one length taken from arrays of different sizes: trimmed to the
    smallest (the length fits in all of them)."""
    if not masked[0].is_window:
        return masked
    n = min(m.data.shape[m.axis] for m in masked)
    trimmed = []
    for m in masked:
        if m.data.shape[m.axis] != n:
            limits = list(m.data.shape)
            limits[m.axis] = n
            m = m.with_data(b.slice(m.data, [0] * m.data.ndim, limits))
        trimmed.append(m)
    return trimmed


def _plain_operand(b: Builder, x, ref: Masked):
    """A plain operand, as data: it must broadcast over the masked axis (size 1 there),
    and gets ``k - 1`` more unit axes for a selection over ``k`` axes."""
    shape = np.shape(x) if not isinstance(x, Value) else x.shape
    right = ref.data.ndim - ref.axis - ref.k   # NumPy axes right of the masked one
    if len(shape) <= right:
        return x
    at = len(shape) - right - 1
    if shape[at] != 1:
        raise b.error(PSCShapeError, f"an array of shape {tuple(shape)} cannot be combined "
                      f"with an array made by {ref.what}: NumPy needs its size along that "
                      f"axis ({shape[at]}) to equal a length only known when the program "
                      "runs", "take the same slice (or mask) of it, or make that axis size 1")
    if ref.k == 1:
        return x
    new = tuple(shape[:at]) + (1,) * ref.k + tuple(shape[at + 1:])
    return b.reshape(x, new) if isinstance(x, Value) else np.reshape(x, new)


def _lane_data(b: Builder, m: Masked) -> Value:
    """``m``'s data for an element-wise rule: under the 'div' run-time check, integer
    lanes where nothing is hold 1, so that they cannot fail it."""
    if is_active("div") and dtypes.is_integer(m.dtype):
        return m.filled(b, 1)
    return m.data


def elementwise(b: Builder, rule, args, kwargs) -> Masked:
    """``rule`` (an element-wise NumPy rule) applied to the data, valid where the first
    `Masked` operand is (all of them line up: `_line_up`)."""
    masked = [a for a in args if isinstance(a, Masked)]
    if any(isinstance(v, Masked) for v in kwargs.values()):
        raise b.error(PSCValueError, "an array made by a traced slice or mask cannot be a "
                      "keyword argument", _HINT)
    ref = masked[0]
    for other in masked[1:]:
        _line_up(b, ref, other)
    if _all_in_place_alike(masked) and not (is_active("div") and
                                            dtypes.is_integer(ref.dtype)):
        data = [a.in_place if isinstance(a, Masked) else _plain_operand(b, a, ref)
                for a in args]
        result = rule(b, *data, **kwargs)
        right = ref.in_place.ndim - ref.axis - 1
        return ref.with_in_place(result, result.ndim - right - 1)
    masked = iter(_common_extent(b, masked))
    data = [_lane_data(b, next(masked)) if isinstance(a, Masked) else
            _plain_operand(b, a, ref) for a in args]
    result = rule(b, *data, **kwargs)
    right = ref.data.ndim - ref.axis - ref.k   # data axes right of the masked ones
    return ref.with_data(result, result.ndim - right - ref.k)


def _all_in_place_alike(masked: list) -> bool:
    """Windows held in place, all starting at one position of axes of one extent."""
    first = masked[0]
    return all(m.in_place is not None for m in masked) and all(
        m.in_place.shape[m.axis] == first.in_place.shape[first.axis] and
        same_value(m.begin, first.begin) for m in masked[1:])


def _method_map(b: Builder, rule, m, *args, **kwargs):
    """``m.astype(t)``, ``np.clip(m, lo, hi)``, ``np.round(m, 2)``...: the rule on the data
    (other array arguments must not touch the masked axis)."""
    if not isinstance(m, Masked) or any(isinstance(a, Masked) for a in _leaves((args, kwargs))):
        return elementwise(b, rule, (m,) + args, kwargs)
    return m.with_data(rule(b, m.data, *args, **kwargs))


def _where(b: Builder, rule, condition, x=None, y=None):
    if x is None or y is None:
        masked = next(a for a in (condition, x, y) if isinstance(a, Masked))
        raise b.error(PSCValueError, f"np.where(condition) of an array made by "
                      f"{masked.what} gives indices whose number is only known when the "
                      "program runs", _HINT)
    return elementwise(b, rule, (condition, x, y), {})


# --- reductions -------------------------------------------------------------------------

def _reduced_axes(b: Builder, m: Masked, axis, name: str):
    """The data axes reduced for NumPy's ``axis`` (None: all; the masked axis: it)."""
    if axis is None:
        return tuple(range(m.data.ndim))
    numpy_axes = sorted({_normalized_axis(b, a, m.ndim)
                         for a in (axis if isinstance(axis, tuple) else (axis,))})
    if numpy_axes == list(range(m.ndim)):
        return tuple(range(m.data.ndim))
    if numpy_axes == [m.axis]:
        return tuple(range(m.axis, m.axis + m.k))
    raise b.error(PSCValueError, f"{name} along an axis other than the one whose length is "
                  f"only known when the program runs (made by {m.what}) is not supported",
                  "reduce along that axis (or all axes) first")


def _normalized_axis(b: Builder, axis, ndim: int) -> int:
    axis = static_int(b, axis, "axis")
    if not -ndim <= axis < ndim:
        raise b.error(PSCValueError, f"axis {axis} is out of bounds for array of dimension "
                      f"{ndim}")
    return axis % ndim


def _static_count(m: Masked, axes) -> int:
    return int(np.prod([m.data.shape[a] for a in axes
                        if not m.axis <= a < m.axis + m.k], dtype=np.int64))


def _filled_reduction(fill_of, nothing_is_nan: bool = False, is_sum: bool = False):
    """A reduction of the data with ``fill_of(dtype)`` where nothing is (a sum of a long
    1-d window: `masked_chunks`)."""
    def rule(b, value_rule, m, axis=None, *args, keepdims=False, **kwargs):
        name = getattr(value_rule, "__name__", "reduction")
        if not isinstance(m, Masked) or args or any(
                isinstance(v, Masked) for v in kwargs.values()):
            raise b.error(PSCValueError, "a reduction's extra arguments cannot be arrays "
                          "made by a traced slice or mask", _HINT)
        if keepdims:
            raise b.error(PSCValueError, "keepdims=True keeps an axis whose length is only "
                          f"known when the program runs (made by {m.what})", _HINT)
        axes = _reduced_axes(b, m, axis, name)
        if is_sum and summed_in_chunks(m, kwargs):
            return _chunked_sum(b, value_rule, m, kwargs)
        # the identity where nothing is; ``initial`` is then applied by the rule itself
        result = value_rule(b, m.filled_in_place(b, fill_of(m.dtype)), axis=axes, **kwargs)
        if nothing_is_nan and kwargs.get("initial") is None:
            result = _empty_extremum(b, m, result)
        return result
    return rule


def summed_in_chunks(m: Masked, kwargs) -> bool:
    """Whether a sum of ``m`` goes chunk by chunk: a 1-d window long enough for
    `masked_chunks`, ``dtype=`` the only keyword."""
    return m.is_window and m.ndim == 1 and set(kwargs) <= {"dtype"} and chunked.worth_it(
            m.in_place if m.in_place is not None else m.data)


def _chunked_sum(b: Builder, value_rule, m: Masked, kwargs) -> Value:
    def sum_chunk(sub, chunk):
        return value_rule(sub, chunk, **kwargs)
    if m.in_place is not None:
        return chunked.reduce_window(b, sum_chunk, [m.in_place], m.begin, m.length)
    return chunked.reduce_window(b, sum_chunk, [m.data], b.constant(0, dtypes.int64),
                                 m.length)


def _identity(value):
    return lambda dtype: value


def _extremum_fill(largest: bool):
    def fill(dtype):
        dtype = np.dtype(dtype)
        if dtypes.is_complex(dtype):
            return None
        if dtype == np.bool_:
            return not largest
        if dtypes.is_integer(dtype):
            info = np.iinfo(dtype)
            return info.min if largest else info.max
        return -np.inf if largest else np.inf
    return fill


def _extremum(largest: bool):
    fill_of = _extremum_fill(largest)

    def rule(b, value_rule, m, axis=None, *args, **kwargs):
        if isinstance(m, Masked) and dtypes.is_complex(m.dtype):
            raise b.error(PSCTypeError, "max/min of complex values taken by a traced slice "
                          "or mask are not supported", "compare np.abs(x) or x.real instead")
        return _filled_reduction(fill_of, nothing_is_nan=True)(b, value_rule, m, axis,
                                                               *args, **kwargs)
    return rule


def _empty_extremum(b: Builder, m: Masked, result: Value) -> Value:
    """max/min of nothing: NumPy raises ValueError.  The ``index`` check raises when the
    program runs; floats give NaN; integers keep the identity."""
    empty = b.eq(m.count(b), b.constant(0, dtypes.int64))
    if is_active("index"):
        guard(b, "index", empty, "zero-size array to reduction operation maximum/minimum "
              "which has no identity (a slice or selection made when the program ran was "
              "empty)")
    if not dtypes.is_inexact(result.dtype):
        return result
    nan = b.broadcast_in_dim(b.constant(np.asarray(np.nan, result.dtype)), result.shape, ())
    return b.select(b.broadcast_in_dim(empty, result.shape, ()), nan, result)


def _mean(b: Builder, value_rule, m, axis=None, dtype=None, **kwargs):
    if not isinstance(m, Masked):
        raise b.error(PSCValueError, "np.mean's extra arguments cannot be arrays made by a "
                      "traced slice or mask", _HINT)
    if kwargs.pop("keepdims", False):
        raise b.error(PSCValueError, "keepdims=True keeps an axis whose length is only known "
                      f"when the program runs (made by {m.what})", _HINT)
    sum_rule = lookup_rule("numpy.sum")
    axes = _reduced_axes(b, m, axis, "mean")
    requested = None if dtype is None else np.dtype(dtype)
    out = np.asarray(np.mean(np.ones((1,), m.dtype), dtype=requested)).dtype
    acc = np.dtype(np.float32) if out == np.float16 else out
    total = sum_rule(b, m.filled_in_place(b, 0), axis=axes, dtype=acc, **kwargs)
    if not m.is_window and acc in (np.float64, np.complex128):
        # counted in float64 (exact below 2**53): XLA:CPU sums it in one fused pass, where
        # an int64 count is a separate array of the mask's size and a tree of reductions
        f64 = np.dtype(np.float64)
        count = b.mul(b.reduce(b.convert(m.mask, f64), "sum", range(m.k)),
                      b.constant(float(_static_count(m, axes)), f64))
    else:
        count = b.mul(m.count(b), b.constant(_static_count(m, axes), dtypes.int64))
    count = b.broadcast_in_dim(b.convert(count, acc), total.shape, ())
    return b.convert(b.div(total, count), out)


# --- products, flips, gathers ------------------------------------------------------------

def _dot(b: Builder, value_rule, x, y, *args, **kwargs):
    """np.dot / @ / np.vdot of 1-d values that line up: the products of valid pairs."""
    if args or kwargs:
        raise b.error(PSCValueError, "np.dot of arrays made by a traced slice or mask takes "
                      "no extra arguments", _HINT)
    one_side = _product_along_free_axis(b, value_rule, x, y)
    if one_side is not None:
        return one_side
    if not (isinstance(x, Masked) and isinstance(y, Masked)) or x.ndim != 1 or y.ndim != 1:
        m = x if isinstance(x, Masked) else y
        raise b.error(PSCValueError, f"a matrix product with an array made by {m.what} "
                      "needs both operands 1-d and made the same way (two slices of one "
                      "length, or one mask)", _HINT)
    _line_up(b, x, y)
    if _all_in_place_alike([x, y]):   # both in place, at one start: no shift
        if chunked.worth_it(x.in_place):
            return chunked.reduce_window(b, value_rule, [x.in_place, y.in_place], x.begin,
                                         x.length)
        return value_rule(b, x.filled_in_place(b, 0), y.filled_in_place(b, 0))
    x, y = _common_extent(b, [x, y])
    if chunked.worth_it(x.data):
        return chunked.reduce_window(b, value_rule, [x.data, y.data],
                                     b.constant(0, dtypes.int64), x.length)
    return value_rule(b, x.filled(b, 0), y.filled(b, 0))


def _product_along_free_axis(b: Builder, value_rule, x, y):
    """A matrix product where one operand is a window along an axis the product keeps
    (``v @ A[:, i:]``, ``A[i:, :] @ v``): every valid lane of the result comes from valid
    lanes only, so the product of the full data is the result's data, a window of the
    same length along the result's corresponding axis.  None for any other product."""
    if isinstance(x, Masked) == isinstance(y, Masked):
        return None
    m, other = (x, y) if isinstance(x, Masked) else (y, x)
    other_ndim = np.ndim(other) if not isinstance(other, Value) else other.ndim
    if not m.is_window or m.ndim != 2 or other_ndim not in (1, 2):
        return None
    if m is y and m.axis == 1:        # (k,) @ (k, M) or (n, k) @ (k, M): M is the last axis
        if m.in_place is not None:
            result = value_rule(b, other, m.in_place)
            return m.with_in_place(result, result.ndim - 1)
        result = value_rule(b, other, m.data)
        return m.with_data(result, axis=result.ndim - 1)
    if m is x and m.axis == 0:        # (N, k) @ (k,) or (N, k) @ (k, m): N is the first axis
        if m.in_place is not None:
            return m.with_in_place(value_rule(b, m.in_place, other), 0)
        return m.with_data(value_rule(b, m.data, other), axis=0)
    return None


def _flip(b: Builder, value_rule, m, axis=None):
    if not isinstance(m, Masked):
        raise b.error(PSCValueError, "np.flip's axis cannot be a traced array", _HINT)
    if axis is None:
        axes = tuple(range(m.ndim))
    else:
        axes = tuple(sorted(_normalized_axis(b, a, m.ndim)
                            for a in (axis if isinstance(axis, tuple) else (axis,))))
    others = [a if a < m.axis else a + m.k - 1 for a in axes if a != m.axis]
    data = b.reverse(m.data, others)
    if m.axis not in axes:
        return m.with_data(data)
    if not m.is_window:
        raise b.error(PSCValueError, f"np.flip of an array made by {m.what} reverses "
                      "elements whose positions are only known when the program runs", _HINT)
    # Element j of the flipped window is element length-1-j: reverse all n positions (j
    # goes to n-1-j), then shift left by n - length (through n padding positions).
    n = m.data.shape[m.axis]
    data = b.reverse(data, [m.axis])
    shift = b.sub(b.constant(n, dtypes.int64), m.length)
    return m.with_data(_shift_left(b, data, m.axis, shift))


def _shift_left(b: Builder, data: Value, axis: int, shift: Value) -> Value:
    """``out[..., j, ...] = data[..., j + shift, ...]`` (zeros past the end), for
    ``0 <= shift <= n``."""
    n = data.shape[axis]
    high = [0] * data.ndim
    high[axis] = n
    padded = b.pad(data, b.constant(np.zeros((), data.dtype)), [0] * data.ndim, high)
    zero = b.constant(0, dtypes.int64)
    starts = [b.convert(shift, dtypes.int64) if a == axis else zero for a in range(data.ndim)]
    return b.dynamic_slice(padded, starts, data.shape)


def _shift_right(b: Builder, data: Value, axis: int, shift: Value) -> Value:
    """``out[..., i, ...] = data[..., i - shift, ...]`` (zeros before), ``0 <= shift <= n``."""
    n = data.shape[axis]
    low = [0] * data.ndim
    low[axis] = n
    padded = b.pad(data, b.constant(np.zeros((), data.dtype)), low, [0] * data.ndim)
    zero = b.constant(0, dtypes.int64)
    start = b.sub(b.constant(n, dtypes.int64), shift)
    starts = [start if a == axis else zero for a in range(data.ndim)]
    return b.dynamic_slice(padded, starts, data.shape)


def _getitem(b: Builder, value_rule, x, index):
    """``x[m]`` with an integer `Masked` ``m`` (a gather of the full-size indices: invalid
    lanes read some in-bounds element), valid where ``m`` is."""
    if isinstance(x, Masked):
        raise b.error(PSCValueError, f"indexing an array made by {x.what} is not supported",
                      _HINT)
    if not isinstance(index, Masked):
        raise b.error(PSCValueError, "an index made by a traced slice or mask can only be "
                      "used alone (x[cols])", _HINT)
    if not dtypes.is_integer(index.dtype):
        raise b.error(PSCValueError, f"indexing with an array made by {index.what} needs "
                      "integer elements", _HINT)
    x = lift(b, x)
    # (the gather clamps, so lanes where nothing is read in bounds; under the 'index'
    # check they read index 0, so that what is not there cannot fail it)
    if index.in_place is not None:   # the gather keeps the positions: stays in place
        data = value_rule(b, x, index.filled_in_place(b, 0) if is_active("index") else
                          index.in_place)
        return index.with_in_place(data, index.axis)
    data = value_rule(b, x, index.filled(b, 0) if is_active("index") else index.data)
    return index.with_data(data)


def _setitem(b: Builder, value_rule, x, index, value, mode="set"):
    """``x[index] = value`` with a `Masked` value: the indexing rule handles it."""
    if isinstance(x, Masked):
        raise b.error(PSCValueError, f"an array made by {x.what} cannot be assigned into",
                      "assign into the array it was taken from instead")
    return value_rule(b, x, index, value, mode)


_ELEMENTWISE = frozenset(
    [f"numpy.{u.__name__}" for u in vars(np).values() if isinstance(u, np.ufunc)]
    + [f"operator.{op}" for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow",
                                   "neg", "pos", "invert", "abs", "eq", "ne", "lt", "le",
                                   "gt", "ge", "and_", "or_", "xor", "lshift", "rshift")]
    + ["builtins.abs", "numpy.abs", "numpy.conjugate", "numpy.real", "numpy.imag"])

_SUM = _filled_reduction(_identity(0), is_sum=True)
_PROD = _filled_reduction(_identity(1))
_MASKED_RULES = {}
for _names, _rule in (
        (("sum",), _SUM), (("prod",), _PROD), (("mean",), _mean),
        (("max", "amax"), _extremum(True)), (("min", "amin"), _extremum(False)),
        (("any",), _filled_reduction(_identity(False))),
        (("all",), _filled_reduction(_identity(True))),
        (("dot", "vdot"), _dot), (("astype", "copy", "clip", "round", "around", "conj",
                                   "conjugate"), _method_map)):
    for _n in _names:
        _MASKED_RULES[f"numpy.{_n}"] = _rule
        _MASKED_RULES[f"numpy.ndarray.{_n}"] = _rule
_MASKED_RULES["operator.matmul"] = _dot
_MASKED_RULES["numpy.matmul"] = _dot
_MASKED_RULES["numpy.flip"] = _flip
_MASKED_RULES["numpy.where"] = _where
_MASKED_RULES["operator.getitem"] = _getitem
_MASKED_RULES["operator.setitem"] = _setitem


# --- made by indexing: windows ----------------------------------------------------------

def traced_slice_position(index) -> int | None:
    """Where ``index`` has a slice with a traced bound (start, stop or step), or None."""
    items = index if isinstance(index, tuple) else (index,)
    for i, item in enumerate(items):
        if isinstance(item, slice) and any(isinstance(v, Value) for v in
                                           (item.start, item.stop, item.step)):
            return i
    return None


def _clipped_bound(b: Builder, v, n: int, default: int) -> Value:
    """A slice bound as NumPy's ``slice.indices`` makes it for step 1: negative values
    count from the end, then clip into ``[0, n]`` (an int64 scalar)."""
    if v is None:
        return b.constant(default, dtypes.int64)
    if not isinstance(v, Value):
        bound = static_int(b, v, "a slice bound")
        return b.constant(slice(bound, None).indices(n)[0], dtypes.int64)
    if v.ndim or not dtypes.is_integer(v.dtype):
        raise b.error(PSCTypeError, "slice indices must be integers or None or have an "
                      "__index__ method", f"the bound is a traced {v.dtype} array of shape "
                      f"{v.shape}")
    if dtypes.is_unsigned(v.dtype) and v.dtype.itemsize >= 8:
        # above int64's range it would wrap negative: clip in its own dtype first
        v = b.min(v, b.constant(np.asarray(n, v.dtype)))
    v = b.convert(v, dtypes.int64)
    size = b.constant(n, dtypes.int64)
    zero = b.constant(0, dtypes.int64)
    v = b.select(b.lt(v, zero), b.add(v, size), v)
    return b.min(b.max(v, zero), size)


def _window_items(b: Builder, shape: tuple, index, position: int):
    """(the index with ':' for the traced slice, the axis of the indexed result it gives,
    the slice, the size of the axis it slices)."""
    items = list(index) if isinstance(index, tuple) else [index]
    item = items[position]
    if item.step is not None and (isinstance(item.step, Value) or
                                  static_int(b, item.step, "a slice step") != 1):
        raise b.error(PSCValueError, "a slice with a traced bound must have step 1 (or none)",
                      "slice with a static step first: x[::2][:k]")
    if traced_slice_position(items[position + 1:]) is not None:
        raise b.error(PSCValueError, "only one slice of an index can have a traced bound",
                      "index in two steps: x[a:b][:, c:d]")
    for other in items:
        if (isinstance(other, (np.ndarray, Value, list)) and np.ndim(other) > 0) or \
                isinstance(other, Masked) or (isinstance(other, (Value, np.ndarray))
                                              and other.dtype == np.bool_):
            raise b.error(PSCValueError, "a slice with a traced bound cannot be combined "
                          "with array indices", "index in two steps")
    used = sum(1 for o in items if o is not None and o is not Ellipsis)
    before = items[:position]
    axis_in = sum(1 for o in before if o is not None and o is not Ellipsis)
    axis_out = sum(1 for o in before if o is None or isinstance(o, slice))
    if any(o is Ellipsis for o in before):
        axis_in += len(shape) - used
        axis_out += len(shape) - used
    if axis_in >= len(shape):
        raise b.error(PSCIndexError, f"too many indices for array: array is "
                      f"{len(shape)}-dimensional, but {used} were indexed")
    items[position] = slice(None)
    return tuple(items), axis_out, item, shape[axis_in]


def window(b: Builder, full: Value, axis: int, start, stop) -> Masked:
    """``full`` sliced ``start:stop`` (step 1) along ``axis``, left-aligned."""
    n = full.shape[axis]
    begin = _clipped_bound(b, start, n, 0)
    end = _clipped_bound(b, stop, n, n)
    length = b.max(b.sub(end, begin), b.constant(0, dtypes.int64))
    if _starts_at_0(start, n):
        return Masked(full, axis, length=length)
    return Masked.window_in_place(full, axis, begin, length)


def _starts_at_0(start, n: int) -> bool:
    return start is None or (not isinstance(start, Value)
                             and slice(operator.index(start), None).indices(n)[0] == 0)


def getitem_window(b: Builder, take, x: Value, index) -> Masked:
    """``x[index]`` where one slice of ``index`` has a traced bound; ``take`` is the plain
    `getitem` for the rest of the index."""
    rest, axis, item, _ = _window_items(b, x.shape, index, traced_slice_position(index))
    return window(b, take(b, x, rest), axis, item.start, item.stop)


def setitem_window(b: Builder, take, put, x: Value, index, value, mode: str,
                   combine) -> Value:
    """``x[index] = value`` (``mode``: ``x[index] op= value``) where one slice of
    ``index`` has a traced bound.  ``take``/``put`` are the plain getitem/setitem for the
    rest of the index; ``combine(b, mode, current, value, dtype)`` is NumPy's augmented
    assignment of plain values."""
    if traced_slice_position(index) is None:
        shown = value.what if isinstance(value, Masked) else "a traced slice or mask"
        raise b.error(PSCValueError, f"cannot assign an array made by {shown} here: its "
                      "length is only known when the program runs, so it cannot be checked "
                      "against the indexed part", "assign it through the same slice or mask "
                      "(y[:k] = f(x[:k]), Z[I] = f(Z[I])), or use np.where")
    position = traced_slice_position(index)
    rest, axis, item, _ = _window_items(b, x.shape, index, position)
    whole = all(_is_full(o) for o in rest)
    sub = x if whole and len(rest) <= 1 else take(b, x, rest)
    current = window(b, sub, axis, item.start, item.stop)
    dtype = x.dtype
    if mode == "set":
        new = elementwise(b, lambda b_, cur, v: broadcast_to(b_, lift(b_, v, dtype),
                                                             cur.shape), (current, value), {})
    else:
        new = elementwise(b, lambda b_, cur, v: combine(b_, mode, cur, v, dtype),
                          (current, value), {})
    n = sub.shape[axis]
    begin = _clipped_bound(b, item.start, n, 0)
    if new.in_place is not None and new.in_place.shape[axis] == n and \
            same_value(new.begin, begin):   # in place already: no shift
        placed = broadcast_to(b, new.in_place, sub.shape)
        if sub is not x and _scatters_alone(rest, position):
            return _scatter_inside(b, put, x, rest, position, placed, axis, begin,
                                   current.length)
        written = b.select(_inside(b, sub.shape, axis, begin, current.length), placed, sub)
        return written if sub is x else put(b, x, rest, written)
    data = new.data
    if data.shape[axis] < n:   # trimmed to a shorter operand's extent: pad back
        high = [0] * data.ndim
        high[axis] = n - data.shape[axis]
        data = b.pad(data, b.constant(np.zeros((), data.dtype)), [0] * data.ndim, high)
    data = broadcast_to(b, data, sub.shape)
    placed = data if _starts_at_0(item.start, n) else _shift_right(b, data, axis, begin)
    written = b.select(_inside(b, sub.shape, axis, begin, current.length), placed, sub)
    return written if sub is x else put(b, x, rest, written)


def _scatters_alone(rest: tuple, position: int) -> bool:
    """Can a line through ``x`` (``rest``: ':' at the window's ``position``, the other
    items slices or scalar integers) be written as a scatter whose index array takes the
    window's place?  Its result keeps the line's axis order when the scalar items and the
    window are one run (NumPy puts the advanced axes there), and the out-of-range lanes
    it drops must not meet the 'index' check."""
    if is_active("index"):
        return False
    run = []
    for i, item in enumerate(rest):
        if i == position:
            run.append(i)
        elif isinstance(item, slice):
            if not _is_full(item):
                return False
        elif _is_scalar_index(item):
            run.append(i)
        else:
            return False
    return run == list(range(run[0], run[-1] + 1))


def _is_scalar_index(item) -> bool:
    if isinstance(item, Value):
        return item.ndim == 0 and dtypes.is_integer(item.dtype)
    return isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_))


def _scatter_inside(b: Builder, put, x: Value, rest: tuple, position: int, placed: Value,
                    axis: int, begin: Value, length: Value) -> Value:
    """``x`` with the window of the line ``x[rest]`` set from ``placed`` (the line's shape,
    the window in place): a scatter at the window's lanes, the other lanes sent out of
    range, so dropped.  Unlike a select against the line, it does not read ``x``, which
    keeps a second line written in the same step (``cov[i:, i] = cov[i, i:] = v``) an
    update in place."""
    n = placed.shape[axis]
    lanes = b.iota((n,), dtypes.int64)
    inside = b.and_(b.ge(lanes, b.broadcast_in_dim(begin, (n,), ())),
                    b.lt(lanes, b.broadcast_in_dim(b.add(begin, length), (n,), ())))
    target = b.select(inside, lanes, b.broadcast_in_dim(b.constant(n, dtypes.int64), (n,), ()))
    items = list(rest)
    items[position] = target
    return put(b, x, tuple(items), placed)


def _inside(b: Builder, shape: tuple, axis: int, begin: Value, length: Value) -> Value:
    """A bool `Value` of ``shape``: positions ``begin <= j < begin + length`` of ``axis``."""
    n = shape[axis]
    lanes = b.iota((n,), dtypes.int64)
    inside = b.and_(b.ge(lanes, b.broadcast_in_dim(begin, (n,), ())),
                    b.lt(lanes, b.broadcast_in_dim(b.add(begin, length), (n,), ())))
    return b.broadcast_in_dim(inside, shape, (axis,))


def _is_full(item) -> bool:
    return isinstance(item, slice) and (item.start, item.stop, item.step) == (None,) * 3 \
        or item is Ellipsis


# --- made by indexing: selections ---------------------------------------------------------

def mask_position(b: Builder, x: Value, index, mask: Value, where: str = "in an index",
                  hint: str = _HINT) -> int:
    """The first axis of ``x`` that ``mask`` (in ``index`` with only ':' and '...')
    spans; the mask's shape is checked against ``x``'s as NumPy does.  ``where`` and
    ``hint`` complete the message for an index it cannot take."""
    items = index if isinstance(index, tuple) else (index,)
    pos = next(i for i, item in enumerate(items) if item is mask)
    others = items[:pos] + items[pos + 1:]
    if not all(_is_full(o) for o in others) or sum(o is Ellipsis for o in others) > 1:
        raise b.error(PSCValueError, "a traced boolean mask can only be combined with ':' "
                      f"and '...' {where}", hint)
    used = mask.ndim + sum(isinstance(o, slice) for o in others)
    if used > x.ndim:
        raise b.error(PSCIndexError, f"too many indices for array: array is {x.ndim}-"
                      f"dimensional, but {used} were indexed")
    before = items[:pos]
    p = sum(isinstance(o, slice) for o in before) + \
        (x.ndim - used) * any(o is Ellipsis for o in before)
    for i, (size, mask_size) in enumerate(zip(x.shape[p:p + mask.ndim], mask.shape)):
        if size != mask_size:
            raise b.error(PSCValueError, f"boolean index did not match indexed array along "
                          f"axis {p + i}; size of axis is {size} but size of corresponding "
                          f"boolean axis is {mask_size}")
    return p


def getitem_selection(b: Builder, x: Value, index, mask: Value) -> Masked:
    """``x[mask]`` (with ':' and '...' around it) for a traced boolean ``mask``."""
    if mask.ndim == 0:
        raise b.error(PSCValueError, "a traced 0-d boolean index gives an array whose size "
                      "is only known when the program runs", _HINT)
    p = mask_position(b, x, index, mask)
    return Masked(x, p, mask=mask, what="a traced boolean mask")


def setitem_selection(b: Builder, x: Value, index, mask: Value, value: Masked, mode: str,
                      combine) -> Value:
    """``x[mask] = value`` where ``value`` was selected by the same mask (``Z[I] = Z[I]**2
    + C[I]``): ``np.where(mask, value's data, x)``."""
    p = mask_position(b, x, index, mask)
    target = Masked(x, p, mask=mask, what="a traced boolean mask")
    if mode == "set":
        new = elementwise(b, lambda b_, cur, v: broadcast_to(b_, lift(b_, v, x.dtype),
                                                             cur.shape), (target, value), {})
    else:
        new = elementwise(b, lambda b_, cur, v: combine(b_, mode, cur, v, x.dtype),
                          (target, value), {})
    data = broadcast_to(b, new.data, x.shape)
    return b.select(target.valid(b), data, x)


def involved(index, value=None) -> bool:
    """Whether indexing with ``index`` (assigning ``value``) needs this module."""
    items = index if isinstance(index, tuple) else (index,)
    return (traced_slice_position(index) is not None or isinstance(value, Masked)
            or any(isinstance(item, Masked) for item in items))
