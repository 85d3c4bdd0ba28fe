"""Shape, joining, selection, sorting and creation rules against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_same, run_rule
from runtime import PSCError, PSCTracedValueError, PSCValueError, StagedFunction, translate

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("fn,args", [
    (np.reshape, ((4, 6),)), (np.reshape, ((-1, 4),)), (np.reshape, ((24,),)),
    (np.reshape, ((2, -1, 2),)), (np.transpose, ()), (np.transpose, ((1, 0, 2),)),
    (np.transpose, ((-1, 0, 1),)), (np.swapaxes, (0, 2)), (np.moveaxis, (0, -1)),
    (np.moveaxis, ((0, 1), (2, 0))), (np.expand_dims, (0,)), (np.expand_dims, (-1,)),
    (np.expand_dims, ((0, 4),)), (np.ravel, ()), (np.flip, ()), (np.flip, (1,)),
    (np.flip, ((0, 2),)), (np.roll, (2,)), (np.roll, (-1, 1)), (np.roll, ((1, 2), (0, 2))),
    (np.tile, (2,)), (np.tile, ((2, 1, 1, 2),)), (np.repeat, (2,)), (np.repeat, (3, 1)),
    (np.sort, ()), (np.sort, (0,)), (np.sort, (None,)), (np.argsort, ()),
    (np.argsort, (1,)), (np.broadcast_to, ((3, 2, 3, 4),)), (np.atleast_1d, ()),
    (np.matrix_transpose, ()),
])
def test_shape_functions(fn, args):
    static = tuple(range(1, 1 + len(args)))
    assert_same(run_rule(fn, X, *args, static=static), fn(X, *args))


@pytest.mark.parametrize("x", [np.float64(3.0), np.arange(3.0), np.ones((2, 1))],
                         ids=["0d", "1d", "2d"])
@pytest.mark.parametrize("fn", [np.atleast_1d, np.atleast_2d, np.atleast_3d, np.squeeze,
                                np.ravel], ids=lambda f: f.__name__)
def test_rank_functions(fn, x):
    assert_same(run_rule(fn, np.asarray(x)), fn(np.asarray(x)))


def test_squeeze_axis_and_error():
    x = np.ones((1, 3, 1))
    assert_same(run_rule(np.squeeze, x, axis=2), np.squeeze(x, axis=2))
    with pytest.raises(PSCValueError, match="size not equal to one"):
        run_rule(np.squeeze, x, axis=1)


def test_reshape_errors_like_numpy():
    with pytest.raises(PSCValueError, match=r"cannot reshape array of size 24 into shape "
                                            r"\(5, 5\)"):
        run_rule(np.reshape, X, (5, 5), static=(1,))
    with pytest.raises(PSCValueError, match="only specify one unknown dimension"):
        run_rule(np.reshape, X, (-1, -1), static=(1,))


def test_traced_shape_is_a_traced_value_error():
    with pytest.raises(PSCTracedValueError, match="static"):
        run_rule(np.reshape, X, np.int64(24))


def test_method_forms():
    def build(b, x):
        return [translate(b, "numpy.ndarray.reshape", x, 6, 4),
                translate(b, "numpy.ndarray.reshape", x, (4, 6)),
                translate(b, "numpy.ndarray.transpose", x, 2, 0, 1),
                translate(b, "numpy.ndarray.transpose", x),
                translate(b, "numpy.ndarray.astype", x, np.int32),
                translate(b, "numpy.ndarray.flatten", x)]
    expected = [X.reshape(6, 4), X.reshape((4, 6)), X.transpose(2, 0, 1), X.transpose(),
                X.astype(np.int32), X.flatten()]
    assert_same(StagedFunction(build)(X), expected)


@pytest.mark.parametrize("fn,kwargs", [
    (np.concatenate, {}), (np.concatenate, {"axis": 1}), (np.concatenate, {"axis": None}),
    (np.concatenate, {"axis": -1}), (np.stack, {}), (np.stack, {"axis": 2}),
    (np.stack, {"axis": -1}), (np.vstack, {}), (np.hstack, {}), (np.column_stack, {}),
])
def test_joining(fn, kwargs):
    a = np.arange(6.0).reshape(2, 3)
    b = -np.arange(6, dtype=np.int32).reshape(2, 3)
    assert_same(run_rule(fn, [a, b], **kwargs), fn([a, b], **kwargs))


def test_joining_mixes_traced_and_static_parts():
    a = np.arange(3.0)
    static_part = np.array([10, 11], np.int32)

    def build(b, x):
        return translate(b, np.concatenate, [x, static_part, [7.5]])
    assert_same(StagedFunction(build)(a), np.concatenate([a, static_part, [7.5]]))


def test_vstack_hstack_of_1d():
    a, c = np.arange(3.0), np.ones(3)
    assert_same(run_rule(np.vstack, [a, c]), np.vstack([a, c]))
    assert_same(run_rule(np.hstack, [a, c]), np.hstack([a, c]))
    assert_same(run_rule(np.column_stack, [a, c]), np.column_stack([a, c]))


def test_concatenate_errors():
    with pytest.raises(PSCError, match="must match exactly"):
        run_rule(np.concatenate, [np.ones((2, 3)), np.ones((3, 2))])
    with pytest.raises(PSCValueError, match="same number of dimensions"):
        run_rule(np.concatenate, [np.ones((2, 3)), np.ones(3)])
    with pytest.raises(PSCValueError, match="zero-dimensional"):
        run_rule(np.concatenate, [np.float64(1), np.float64(2)])


def test_array_of_traced_scalars_and_nested_lists():
    def build(b, s, t):
        return [translate(b, np.array, [s, t, 1.0]),
                translate(b, np.array, [[s, t], [t, s]]),
                translate(b, np.asarray, [s, t], dtype=np.float32)]
    s, t = np.float64(2.0), np.float64(3.0)
    expected = [np.array([s, t, 1.0]), np.array([[s, t], [t, s]]),
                np.asarray([s, t], dtype=np.float32)]
    assert_same(StagedFunction(build)(s, t), expected)


@pytest.mark.parametrize("x,y", [(1.0, 0.0), (np.arange(3), 2.5),
                                 (np.ones(3, np.float32), 2), (np.arange(3), np.arange(3.0))])
def test_where_promotes_like_numpy(x, y):
    cond = np.array([True, False, True])
    assert_same(run_rule(np.where, cond, x, y), np.where(cond, x, y))


def test_where_non_bool_condition_and_broadcast():
    cond = np.array([[0], [3]])
    x = np.arange(4.0)
    assert_same(run_rule(np.where, cond, x, -x), np.where(cond, x, -x))


def test_where_with_one_argument_is_rejected():
    with pytest.raises(PSCValueError, match="depends on the data"):
        run_rule(np.where, np.array([True, False]))


@pytest.mark.parametrize("lo,hi", [(0, 3), (1.5, None), (None, 2), (np.int32(1), 20)])
def test_clip(lo, hi):
    x = np.arange(-3, 6, dtype=np.int32)
    assert_same(run_rule(np.clip, x, lo, hi, static=(1, 2)), np.clip(x, lo, hi))


def test_sort_with_nans_and_duplicates():
    x = np.array([[3.0, np.nan, 1.0, 1.0], [np.inf, -np.inf, 0.0, -0.0]])
    assert_same(run_rule(np.sort, x), np.sort(x))
    keys = np.array([2, 1, 2, 1, 0, 2])
    assert_same(run_rule(np.argsort, keys, kind="stable"), np.argsort(keys, kind="stable"))


# --- creation ------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [np.zeros_like, np.ones_like], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [None, np.int32, np.bool_])
def test_like_functions(fn, dtype):
    assert_same(run_rule(fn, X, dtype=dtype), fn(X, dtype=dtype))


def test_empty_like_shape_and_dtype():
    result = np.asarray(run_rule(np.empty_like, X))
    assert result.shape == X.shape and result.dtype == X.dtype


def test_full_and_full_like_with_traced_fill():
    fill = np.float32(2.5)
    assert_same(run_rule(np.full, (2, 3), fill, static=(0,)), np.full((2, 3), fill))
    assert_same(run_rule(np.full_like, X, fill), np.full_like(X, fill))
    assert_same(run_rule(np.full, (2,), 3.5, static=(0,), dtype=np.int64),
                np.full((2,), 3.5, dtype=np.int64))


@pytest.mark.parametrize("num,endpoint", [(5, True), (5, False), (1, True), (0, True)])
def test_linspace_with_traced_end_points(num, endpoint):
    start, stop = np.float64(-1.0), np.float64(3.0)
    assert_same(run_rule(np.linspace, start, stop, num, static=(2,), endpoint=endpoint),
                np.linspace(start, stop, num, endpoint=endpoint))


def test_linspace_vector_end_points_and_int_dtype():
    start, stop = np.array([0.0, 1.0]), np.array([10.0, -1.0])
    assert_same(run_rule(np.linspace, start, stop, 4, static=(2,)),
                np.linspace(start, stop, 4))
    assert_same(run_rule(np.linspace, np.float64(0), 10.0, 4, static=(2,), dtype=np.int32),
                np.linspace(0, 10.0, 4, dtype=np.int32))


@pytest.mark.parametrize("fn", [np.zeros, np.ones, np.arange, np.eye], ids=lambda f: f.__name__)
def test_traced_sizes_are_rejected(fn):
    with pytest.raises(PSCTracedValueError):
        run_rule(fn, np.int64(3))


def test_static_calls_run_numpy_directly():
    def build(b, x):
        return translate(b, np.add, x, translate(b, np.arange, 4.0))
    x = np.ones(4)
    assert_same(StagedFunction(build)(x), x + np.arange(4.0))
