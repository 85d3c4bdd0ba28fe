"""NumPy indexing rules (``x[i]`` and ``x[i] = v``), differential against NumPy."""
from __future__ import annotations

import operator

import numpy as np
import pytest

from runtime import StagedFunction, translate
from runtime.builder import Builder
from runtime.errors import (PSCError, PSCIndexError, PSCOverflowError, PSCShapeError, PSCTracedValueError, PSCTypeError,
                            PSCValueError)
from runtime.numpy_rules.masked import Masked
from runtime.numpy_rules.indexing import add_at, getitem, setitem
from runtime.translation import lookup_rule

from conftest import assert_same

T, F = True, False
S = slice(None)


class Traced:
    """Marks an index item (or the assigned value) that is passed as a traced argument."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"Traced({self.value!r})"


def plain(index):
    """``index`` with the `Traced` markers replaced by their values (NumPy's index)."""
    if isinstance(index, tuple):
        return tuple(plain(i) for i in index)
    return index.value if isinstance(index, Traced) else index


def run(fn, x, index, *rest, static_x=False, **kwargs):
    """``fn(x, index, *rest)`` compiled through the rules; ``x`` is traced unless
    ``static_x``, the `Traced` items of ``index`` and of ``rest`` are traced, the others
    are build-time constants."""
    is_tuple = isinstance(index, tuple)
    items = list(index) if is_tuple else [index]
    parts = [x if static_x else Traced(x), *items, *rest]

    def build(b, *values):
        it = iter(values)
        call = [next(it) if isinstance(p, Traced) else p for p in parts]
        idx = tuple(call[1:1 + len(items)]) if is_tuple else call[1]
        if fn in (operator.getitem, operator.setitem):
            return translate(b, fn, call[0], idx, *call[1 + len(items):], **kwargs)
        return fn(b, call[0], idx, *call[1 + len(items):], **kwargs)
    return StagedFunction(build, name="indexing")(
        *[p.value for p in parts if isinstance(p, Traced)])


def numpy_set(x, index, value, mode="set"):
    """What NumPy's ``x[index] = value`` (or ``x[index] op= value``) leaves in a copy."""
    expected = x.copy()
    if mode == "set":
        expected[index] = value
    elif mode == "add":
        expected[index] += value
    elif mode == "mul":
        expected[index] *= value
    elif mode == "sub":
        expected[index] -= value
    elif mode == "min":
        expected[index] = np.minimum(expected[index], value)
    elif mode == "max":
        expected[index] = np.maximum(expected[index], value)
    return expected


def check_get(x, index, **kwargs):
    assert_same(run(operator.getitem, x, index, **kwargs), x[plain(index)])


def setitem_modes(b, x, index, value, modes):
    return tuple(translate(b, operator.setitem, x, index, value, mode=m) for m in modes)


def check_set(x, index, value, *modes, **kwargs):
    """``x[index] = value`` (or ``op=`` for the other modes), all the modes NumPy accepts
    in one compiled computation; where NumPy refuses, building must fail too."""
    expected = {}
    for mode in modes or ("set",):
        try:
            expected[mode] = numpy_set(x, plain(index), plain(value), mode)
        except (IndexError, ValueError, TypeError):
            with pytest.raises(PSCError):
                run(operator.setitem, x, index, value, mode=mode, **kwargs)
    actual = run(setitem_modes, x, index, value, modes=tuple(expected), **kwargs)
    assert_same(list(actual), list(expected.values()))


def arange(shape, dtype=np.float64):
    """Distinct values (for bool: a fixed pattern) of ``shape`` and ``dtype``."""
    values = np.asarray(np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape))
    if np.dtype(dtype) == np.bool_:
        return np.asarray(values % 3 == 1)
    values = values * 1.5 - 7 if np.dtype(dtype).kind == "f" else values - 7
    return np.asarray(values).astype(dtype)


# --- basic indexing: ints, slices, None, Ellipsis -----------------------------------------

BASIC = [
    ((), ()), ((), Ellipsis), ((), None), ((), (None, Ellipsis, None)),
    ((7,), 0), ((7,), -1), ((7,), -7), ((7,), 6), ((7,), S),
    ((7,), slice(None, None, -1)), ((7,), slice(None, None, -2)), ((7,), slice(5, 1, -1)),
    ((7,), slice(1, 5, 2)), ((7,), slice(-3, None)), ((7,), slice(None, -10)),
    ((7,), slice(10, None)), ((7,), slice(None, None, 3)), ((7,), slice(-1, -8, -3)),
    ((7,), slice(2, 2)), ((7,), slice(5, 1)), ((7,), slice(1, 5, -1)),
    ((7,), slice(100, -100, -1)), ((7,), (None, slice(1, None))),
    ((3, 4), 1), ((3, 4), (-1, -1)), ((3, 4), (S, 2)), ((3, 4), (Ellipsis, 1)),
    ((3, 4), (None, 1, None)), ((3, 4), (1, None, slice(None, None, -1))),
    ((3, 4), (Ellipsis, None)), ((3, 4), (None, Ellipsis, None)),
    ((3, 4), (slice(1, None), slice(None, None, -2))), ((3, 4), ()),
    ((3, 4), (slice(None, None, -1), Ellipsis)), ((3, 4), (2, slice(3, 0, -2))),
    ((2, 3, 4), (1, Ellipsis, 2)), ((2, 3, 4), (Ellipsis, slice(None, None, -1), 0)),
    ((2, 3, 4), (S, None, 1, Ellipsis, None)), ((2, 3, 4), (-1, -2, -3)),
    ((2, 3, 4), (slice(None, None, 2), slice(2, 0, -1), None, slice(1, 4, 2))),
    ((2, 3, 4, 5), (1, Ellipsis, 2)), ((2, 3, 4, 5), (S, -1, S, slice(None, None, -2))),
    ((2, 3, 4, 5), (None, -1, None, Ellipsis, None, 4, None)),
    ((2, 3, 4, 5), (slice(None, None, -1), slice(1, 3), slice(3, None, -3), 0)),
    ((0,), S), ((0,), slice(None, None, -1)), ((0, 3), (S, 1)), ((0, 3), (Ellipsis, 1)),
    ((0, 3), (S, slice(None, None, -1))), ((3, 0), 1), ((3, 0), (slice(1, 2), Ellipsis)),
    ((3, 0), (slice(None, None, -1), None)),
]


@pytest.mark.parametrize("shape,index", BASIC, ids=repr)
def test_basic_getitem(shape, index):
    check_get(arange(shape), index)


DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_]
ONE_OF_EACH = [(2, Ellipsis), (slice(None, None, -2), None), (Ellipsis, [0, 2]),
               (Traced(-1), S), (S, Traced(np.array([2, 0, 2]))),
               np.array([True, False, True])]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index", ONE_OF_EACH, ids=repr)
def test_getitem_dtypes(dtype, index):
    check_get(arange((3, 3), dtype), index)


def test_getitem_0d_and_static_array():
    x = np.array(3.5, np.float32)
    check_get(x, ())
    check_get(x, Ellipsis)
    check_get(x, (None, Ellipsis))
    # A static operand with a traced index (the rule lifts the operand).
    check_get(arange((4, 3)), (Traced(-2), slice(None, None, -1)), static_x=True)


# --- traced integer scalars ---------------------------------------------------------------

TRACED_SCALARS = [
    ((5,), Traced(2)), ((5,), Traced(-1)), ((5,), Traced(np.int32(-5))),
    ((5,), Traced(np.int64(4))), ((5,), Traced(np.uint8(3))), ((5,), Traced(np.int8(-2))),
    ((3, 4), (Traced(-1), slice(None, None, -1))), ((3, 4), (slice(1, None), Traced(2))),
    ((3, 4), (Traced(1), Traced(np.int32(-2)))), ((3, 4), (Ellipsis, Traced(0), None)),
    ((2, 3, 4), (Traced(1), 2, slice(None, None, 2))), ((2, 3, 4), (None, S, Traced(-3))),
    ((3, 0), Traced(1)),
]


@pytest.mark.parametrize("shape,index", TRACED_SCALARS, ids=repr)
def test_traced_scalar_getitem(shape, index):
    check_get(arange(shape), index)


@pytest.mark.parametrize("i", [5, 100, -6, -100])
def test_traced_out_of_bounds_index_is_clamped_for_reads_and_dropped_for_writes(i):
    x = arange((5, 2))
    wrapped = i + 5 if i < 0 else i
    expected = x[min(max(wrapped, 0), 4)]
    assert_same(run(operator.getitem, x, Traced(i)), expected)
    assert_same(run(operator.getitem, x, Traced(np.array([i, 0]))),
                x[[min(max(wrapped, 0), 4), 0]])
    # Writes are dropped: clamping them would overwrite a neighbour.
    value = np.array([[-1.0, -2.0]])
    assert_same(run(operator.setitem, x, Traced(i), value), x)
    assert_same(run(operator.setitem, x, (Traced(np.array([i])), S), value), x)


# --- integer array (advanced) indices -----------------------------------------------------

ADVANCED = [
    ((5,), [0, 4, -1]), ((5,), np.array([[0, 1], [2, -3]])), ((5,), []),
    ((5,), np.array([], np.int64)), ((5,), np.array([4, 0], np.uint8)),
    ((5,), [[0, 0], [4, 4]]), ((5,), (Ellipsis, [1])),
    ((5,), Traced(np.array([3, -1, 0]))), ((5,), Traced(np.array([[1], [2]], np.int32))),
    ((5,), Traced(np.array([], np.int64))), ((5,), Traced(np.array([4, 0], np.uint8))),
    ((3, 4, 5), [0, 2]), ((3, 4, 5), (S, [0, 1], [1, 2])), ((3, 4, 5), ([0, 1], S, [1, 2])),
    ((3, 4, 5), ([[0], [1]], [1, 2, 3])), ((3, 4, 5), (0, S, [1, 2])),
    ((3, 4, 5), (S, 0, [1, 2])), ((3, 4, 5), ([0, 1], None, [0, 1])),
    ((3, 4, 5), (Ellipsis, [0, -1])), ((3, 4, 5), (None, [0, 1], slice(None, None, -1))),
    ((3, 4, 5), (slice(1, None), [[0, 1], [2, 3]], slice(None, None, 2))),
    ((3, 4, 5), (1, [0, 1], 2)), ((3, 4, 5), ([2], -1, [[1], [0]])),
    ((3, 4, 5), (S, [0, 3], None, [[1], [4]])), ((3, 4, 5), ([1, 1], Ellipsis, [0, 4])),
    ((3, 4, 5), (Traced(np.array([0, 2])), S, Traced(np.int64(-1)))),
    ((3, 4, 5), (Traced(np.array([[0], [2]])), [1, 2])),
    ((3, 4, 5), (S, Traced(np.array([3, -4], np.int32)), Traced(np.array([0, 4])))),
    ((3, 4, 5), (Traced(1), [0, 1], slice(None, None, -2))),
    ((3, 4, 5), (S, S, Traced(np.array([[[-1]]])))),
    ((2, 3, 4, 5), (S, [0, 1], S, [1, 2])), ((2, 3, 4, 5), (S, [0, 1], [1, 2], S)),
    ((2, 3, 4, 5), ([1, 0], Ellipsis, [3, 0])), ((2, 3, 4, 5), (0, S, [1, 2])),
    ((2, 3, 4, 5), (None, S, [2], 1, None, slice(4, None, -3))),
    ((0, 3), (S, [0, 2])), ((3, 0), ([0, 2],)), ((3, 0), ([0, 2], S)),
    ((0, 3), ([], [])), ((3, 4), ([True, False, True], [0, 1])),
    ((3, 4), (True, [0, 1])), ((3, 4), ([0, 1], True)), ((3, 4), (True,)), ((3, 4), False),
    ((3, 4), (np.True_, Ellipsis, np.False_)), ((3, 4), (np.array(1), np.array([0, -1]))),
]


@pytest.mark.parametrize("shape,index", ADVANCED, ids=repr)
def test_advanced_getitem(shape, index):
    check_get(arange(shape), index)


def test_list_of_traced_scalars():
    x = arange((4, 3))

    def build(b, x, i, j):
        return translate(b, operator.getitem, x, ([i, j, -1], [[0], [j]]))
    actual = StagedFunction(build)(x, 2, np.int32(-3))
    assert_same(actual, x[[2, -3, -1], [[0], [-3]]])


# --- static boolean masks -----------------------------------------------------------------

MASKS = [
    ((5,), np.array([T, F, T, T, F])), ((5,), np.zeros(5, bool)), ((5,), np.ones(5, bool)),
    ((3, 4), arange((3, 4), bool)), ((3, 4), np.array([F, T, T])),
    ((3, 4), (S, np.array([T, F, F, T]))), ((3, 4), (Ellipsis, np.array([F, F, F, T]))),
    ((3, 4), (np.array([T, F, T]), [0, -1])), ((2, 3, 4), (S, arange((3, 4), bool))),
    ((2, 3, 4), (arange((2, 3), bool), slice(None, None, -1))),
    ((2, 3, 4), (np.array([F, T]), None, S, np.array([T, F, T, T]))),
    ((0, 2), np.zeros(0, bool)), ((), np.array(True)), ((), np.array(False)),
]


@pytest.mark.parametrize("shape,index", MASKS, ids=repr)
def test_static_mask_getitem(shape, index):
    check_get(arange(shape), index)


# --- setitem ------------------------------------------------------------------------------

SETS = [
    ((7,), 3, 9.0), ((7,), -1, np.float64(9)), ((7,), S, np.arange(7.0)),
    ((7,), slice(None, None, -1), np.arange(7.0)), ((7,), slice(5, 1, -1), [1.0, 2, 3, 4]),
    ((7,), slice(1, None, 3), np.array([5.0, 6.0])), ((7,), slice(None, None, -3), 1.0),
    ((7,), slice(2, 2), 4.0), ((7,), slice(2, 2), np.zeros((1, 0))), ((7,), (None, 1), 2.0),
    ((3, 4), (1,), np.arange(4.0)), ((3, 4), (S, -1), np.arange(3.0)),
    ((3, 4), (Ellipsis, slice(None, None, -2)), np.arange(2.0)),
    ((3, 4), (slice(1, None), slice(None, None, -1)), np.ones((1, 1, 4))),
    ((3, 4), (), 5.0), ((3, 4), Ellipsis, np.arange(4.0)), ((3, 4), (2, 3), -1.0),
    ((2, 3, 4), (slice(None, None, -1), 1, slice(1, None, 2)), np.arange(4.0).reshape(2, 2)),
    ((2, 3, 4), (None, S, slice(None, None, 2), 0), np.arange(2.0).reshape(2, 1)),
    ((2, 3, 4), (slice(None, None, 2), slice(None, None, -2), slice(None, None, -3)), 1.0),
    ((3, 0), 1, 2.0), ((0, 3), (S, 1), 2.0), ((), (), 7.0), ((), Ellipsis, 7.0),
    ((7,), [0, 6, -2], [1.0, 2.0, 3.0]), ((7,), [[1], [2]], np.arange(2.0)[:, None]),
    ((7,), [], 5.0), ((7,), np.array([T, F, T, F, F, F, T]), [7.0, 8.0, 9.0]),
    ((3, 4), (S, [0, 3]), np.arange(6.0).reshape(3, 2)), ((3, 4), ([0, 2], [1, 2]), 5.0),
    ((3, 4, 5), ([0, 1], S, [1, 2]), np.arange(8.0).reshape(2, 4)),
    ((3, 4, 5), (S, [0, 1], [1, 2]), np.arange(6.0).reshape(3, 2)),
    ((3, 4, 5), (0, slice(None, None, -2), [1, 2]), np.arange(4.0).reshape(2, 2)),
    ((3, 4, 5), ([[0], [2]], slice(3, 0, -1), [1, 4]), np.arange(12.0).reshape(2, 2, 3)),
    ((3, 4, 5), (slice(None, None, 2), None, [1, 3], 2), np.arange(4.0).reshape(2, 1, 2)),
    ((3, 4, 5), (True, 1, [0, 1]), np.arange(10.0).reshape(1, 2, 5)),
    ((3, 4, 5), (arange((3, 4), bool), slice(1, 3)), 3.0),
    ((7,), Traced(-2), 9.0), ((7,), Traced(np.int32(3)), Traced(np.float32(2.5))),
    ((3, 4), (Traced(1), slice(None, None, -1)), Traced(np.arange(4.0))),
    ((3, 4), (slice(None, None, 2), Traced(-1)), np.arange(2.0)),
    ((3, 4), (Traced(np.array([2, -3])), Traced(np.array([[0], [1]]))), np.arange(2.0)),
    ((3, 4), (S, Traced(np.array([0, 3, 1]))), Traced(np.arange(9.0).reshape(3, 3))),
    ((3, 4, 5), (Traced(2), S, [1, 2]), 1.5),
]
MODES = ["set", "add", "mul", "min", "max"]


@pytest.mark.parametrize("shape,index,value", SETS, ids=repr)
def test_setitem(shape, index, value):
    check_set(arange(shape), index, value, *MODES)


@pytest.mark.parametrize("dtype,value", [
    (np.int32, 2.7), (np.int64, -2.7), (np.int32, np.array([1.9, -1.9])), (np.bool_, 0.5),
    (np.bool_, 0), (np.float32, np.float64(1 / 3)), (np.int64, True), (np.int32, 2**20),
    (np.int32, Traced(np.array([1.9, -1.9]))), (np.bool_, Traced(np.array([0.0, 2.0]))),
    (np.float32, Traced(np.int64(7))), (np.int64, Traced(3.9)),
])
def test_setitem_casts_the_value(dtype, value):
    check_set(arange((4,), dtype), slice(1, 3), value)


def test_setitem_static_array_and_traced_value():
    check_set(arange((3, 2)), (Traced(-1), S), Traced(np.array([4.0, 5.0])), static_x=True)


def test_augmented_assignment_to_a_scalar_truncates_like_numpy():
    # x[i] gives a NumPy scalar, so `x[0] += 1.5` truncates; array views refuse (below).
    check_set(arange((3,), np.int64), 0, 1.5, "add")
    check_set(arange((3,), np.int64), Traced(-1), 1.5, "add")
    check_set(arange((2, 2), np.int32), (1, 0), 2.5, "mul")


def test_repeated_indices_augmented_assignment_is_buffered():
    # NumPy's x[idx] += v reads all of x[idx] first: a repeated index adds once.
    check_set(arange((4,)), [0, 0, 1, 0], 1.0, "add")
    check_set(arange((4,)), Traced(np.array([2, 2, -2])), 3.0, "add")
    check_set(arange((4,)), [3, 3], 5.0, "set")


@pytest.mark.parametrize("index,value", [
    ([0, 0, 1, 0], np.array([1.0, 2.0, 3.0, 4.0])),
    ((S, [2, 2]), np.arange(6.0).reshape(3, 2)),
    (([1, -2], Ellipsis), 1.0),
    ((Traced(np.array([0, 2, 0])), slice(None, None, -1)), np.arange(4.0)),
    ((slice(1, None), 2), np.array([5.0, 6.0])),
])
def test_add_at_accumulates_like_numpy(index, value):
    x = arange((3, 4))
    expected = x.copy()
    np.add.at(expected, plain(index), value)
    assert_same(run(add_at, x, index, value), expected)


# --- traced boolean masks in setitem ------------------------------------------------------

TRACED_MASKS = [
    ((5,), Traced(np.array([T, F, T, T, F])), 9.0),
    ((3, 4), Traced(arange((3, 4), bool)), -1.0),
    ((3, 4), Traced(np.array([F, T, T])), np.arange(4.0)),
    ((3, 4), (S, Traced(np.array([T, F, F, T]))), np.arange(3.0)[:, None]),
    ((3, 4), (Ellipsis, Traced(np.array([F, F, F, T]))), 2.0),
    ((2, 3, 4), (S, Traced(arange((3, 4), bool))), np.arange(2.0)[:, None]),
    ((2, 3, 4), (Traced(arange((2, 3), bool)), Ellipsis), Traced(np.arange(4.0))),
    ((2, 3, 4), (Ellipsis, Traced(np.array([T, F, T])), S), np.arange(4.0)),
    ((3,), Traced(np.array(True)), 5.0), ((3,), (Ellipsis, Traced(np.array(False))), 5.0),
    ((0, 2), Traced(np.zeros(0, bool)), 1.0),
]


@pytest.mark.parametrize("shape,index,value", TRACED_MASKS, ids=repr)
def test_traced_mask_setitem(shape, index, value):
    check_set(arange(shape), index, value, *MODES)


def test_traced_mask_setitem_drops_leading_unit_dims():
    check_set(arange((3, 4)), Traced(np.array([F, T, T])), np.ones((1, 1, 4)))


def test_traced_mask_setitem_casts():
    check_set(arange((4,), np.int32), Traced(np.array([T, F, T, T])), 2.9)
    check_set(arange((4,), np.int32), Traced(np.array([T, F, T, T])), 2, "mul")


# --- errors -------------------------------------------------------------------------------

def _builder_and_x(shape, dtype=np.float64):
    b = Builder("errors")
    return b, b.parameter(0, shape, dtype)


@pytest.mark.parametrize("shape,index,cls,message", [
    ((3,), 5, PSCIndexError, "index 5 is out of bounds for axis 0 with size 3"),
    ((3,), -4, PSCIndexError, "index -4 is out of bounds for axis 0 with size 3"),
    ((3, 4), (S, [0, 4]), PSCIndexError, "index 4 is out of bounds for axis 1 with size 4"),
    ((3, 4), (None, 1, -5), PSCIndexError,
     "index -5 is out of bounds for axis 1 with size 4"),
    ((0,), 0, PSCIndexError, "index 0 is out of bounds for axis 0 with size 0"),
    ((3,), (0, 0), PSCIndexError,
     "too many indices for array: array is 1-dimensional, but 2 were indexed"),
    ((3, 4), (np.ones((3, 4), bool), 0), PSCIndexError,
     "too many indices for array: array is 2-dimensional, but 3 were indexed"),
    ((3, 4), (Ellipsis, Ellipsis), PSCValueError,
     "an index can only have a single ellipsis ('...')"),
    ((3, 4), 1.0, PSCTypeError, "only integers, slices (`:`), ellipsis (`...`), "
     "numpy.newaxis (`None`) and integer or boolean arrays are valid indices"),
    ((3, 4), [0.5], PSCTypeError, "only integers, slices"),
    ((3, 4), "a", PSCTypeError, "only integers, slices"),
    ((3, 4), slice(None, None, 0), PSCValueError, "slice step cannot be zero"),
    ((3, 4), np.ones(4, bool), PSCValueError, "boolean index did not match indexed array "
     "along axis 0; size of axis is 3 but size of corresponding boolean axis is 4"),
    ((3, 4), (S, np.ones(3, bool)), PSCValueError, "along axis 1; size of axis is 4"),
    ((3, 4), ([0, 1], [0, 1, 2]), PSCShapeError, "shape mismatch: indexing arrays could not "
     "be broadcast together with shapes (2,) (3,)"),
])
def test_getitem_errors(shape, index, cls, message):
    numpy_error = IndexError if "slice step" not in message else ValueError
    with pytest.raises(numpy_error):   # the case is an error in NumPy too
        np.zeros(shape)[index]
    b, x = _builder_and_x(shape)
    with pytest.raises(cls) as info:
        getitem(b, x, index)
    assert message in info.value.message


def test_traced_mask_getitem_is_a_masked_value_or_an_error():
    # (what a masked value can do: tests/test_masked_values.py)
    b, x = _builder_and_x((3,))
    assert isinstance(getitem(b, x, b.parameter(1, (3,), np.bool_)), Masked)
    with pytest.raises(PSCValueError) as info:   # a 0-d mask: a new axis of run-time size
        getitem(b, x, b.parameter(2, (), np.bool_))
    assert "np.where(mask, x, 0)" in info.value.hint


def test_traced_slice_bound_is_a_masked_value():
    b, x = _builder_and_x((5,))
    i = b.parameter(1, (), np.int64)
    assert isinstance(getitem(b, x, slice(i, None)), Masked)


def test_traced_float_index_is_an_error():
    b, x = _builder_and_x((5,))
    with pytest.raises(PSCTypeError):
        getitem(b, x, b.parameter(1, (), np.float64))


def test_errors_point_at_the_source_line():
    b, x = _builder_and_x((3,))
    b.at("model.py", 12, 4, "    y = x[5]")
    with pytest.raises(PSCError) as info:
        translate(b, operator.getitem, x, 5)
    assert info.value.location.line == 12
    assert "model.py:12:5" in str(info.value)


@pytest.mark.parametrize("index,value,mode,cls,message", [
    (slice(0, 2), np.ones(2), "set", PSCShapeError,
     "could not broadcast input array from shape (2,) into shape (2,3)"),
    (0, np.ones((2, 3)), "set", PSCShapeError,
     "could not broadcast input array from shape (2,3) into shape (3,)"),
    (slice(0, 0), np.ones(2), "set", PSCShapeError, "from shape (2,) into shape (0,3)"),
    (slice(0, 2), np.ones((1, 1, 3), int), "add", PSCShapeError, "non-broadcastable output "
     "operand with shape (2,3) doesn't match the broadcast shape (1,2,3)"),
    (slice(0, 2), 1.5, "add", PSCTypeError, "Cannot cast ufunc 'add' output from "
     "dtype('float64') to dtype('int64') with casting rule 'same_kind'"),
    ([0, 1], 1.5, "add", PSCTypeError, "Cannot cast ufunc 'add' output"),
    (Ellipsis, 2.0, "mul", PSCTypeError, "Cannot cast ufunc 'multiply' output"),
    (5, 1, "set", PSCIndexError, "index 5 is out of bounds for axis 0 with size 3"),
])
def test_setitem_errors(index, value, mode, cls, message):
    with pytest.raises((ValueError, TypeError, IndexError)):   # NumPy refuses too
        numpy_set(np.zeros((3, 3), np.int64), index, value, mode)
    b, x = _builder_and_x((3, 3), np.int64)
    with pytest.raises(cls) as info:
        setitem(b, x, index, value, mode=mode)
    assert message in info.value.message


def test_setitem_overflowing_python_int_is_an_error():
    with pytest.raises(OverflowError):
        np.zeros(3, np.uint8)[0] = -1
    b, x = _builder_and_x((3,), np.uint8)
    with pytest.raises(PSCOverflowError):
        setitem(b, x, 0, -1)


@pytest.mark.parametrize("index,value", [
    (("mask",), np.ones(2)),                     # a value per selected element
    (("mask", 0), 1.0),                          # only ':' and '...' may come with it
    ((0, "mask"), 1.0),
    (("mask", S, S), 1.0),                       # too many indices
])
def test_traced_mask_setitem_errors(index, value):
    b, x = _builder_and_x((3, 4))
    mask = b.parameter(1, (3,), np.bool_)
    index = tuple(mask if i == "mask" else i for i in index)
    with pytest.raises((PSCShapeError, PSCValueError, PSCIndexError)):
        setitem(b, x, index, value)


def test_traced_mask_shape_mismatch():
    b, x = _builder_and_x((3, 4))
    with pytest.raises(PSCValueError) as info:
        setitem(b, x, b.parameter(1, (4,), np.bool_), 1.0)
    assert "size of axis is 3 but size of corresponding boolean axis is 4" in \
        info.value.message


def test_unknown_mode():
    b, x = _builder_and_x((3,))
    with pytest.raises(PSCValueError):
        setitem(b, x, 0, 1.0, mode="frobnicate")


def test_rules_are_registered():
    assert lookup_rule("operator.getitem") is getitem
    assert lookup_rule("operator.setitem") is setitem
    assert lookup_rule(operator.getitem) is getitem
