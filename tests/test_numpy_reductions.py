"""Reduction and scan rules against NumPy: axes, keepdims, dtype rules, empty arrays, NaN."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from conftest import assert_same, run_rule
from runtime import PSCError, PSCValueError, StagedFunction, translate

DTYPES = [np.float32, np.float64, np.int8, np.int32, np.int64, np.uint8, np.bool_]
REDUCTIONS = [np.sum, np.prod, np.mean, np.max, np.min, np.all, np.any, np.std, np.var,
              np.argmax, np.argmin, np.cumsum, np.cumprod]
AXES = {np.argmax: [None, 0, -1], np.argmin: [None, 0, -1], np.cumsum: [None, 0, 1],
        np.cumprod: [None, 0, 2]}


def _data(dtype, shape, rng):
    if dtype == np.bool_:
        return rng.random(shape) > 0.4
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0 if dtype == np.uint8 else -3, 4, shape).astype(dtype)
    return rng.uniform(-2, 2, shape).astype(dtype)


def _expected(fn, x, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(x, **kwargs)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fn", REDUCTIONS, ids=lambda f: f.__name__)
def test_reduction_matches_numpy(fn, dtype, rng):
    x = _data(dtype, (2, 3, 4), rng)
    axes = AXES.get(fn, [None, 0, (0, 2), -1])
    calls = [dict(axis=a) for a in axes]
    if fn not in (np.cumsum, np.cumprod):
        calls.append(dict(axis=1, keepdims=True))
        calls.append(dict(axis=None, keepdims=True))

    def build(b, x):
        return [translate(b, fn, x, **kw) for kw in calls]
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    actual = StagedFunction(build, name=fn.__name__)(x)
    assert_same(actual, [_expected(fn, x, **kw) for kw in calls], rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("fn", [np.sum, np.prod, np.mean, np.cumsum, np.std],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.float16])
def test_dtype_keyword(fn, dtype, rng):
    x = _data(np.int16, (3, 4), rng)
    try:
        _expected(fn, x, axis=0, dtype=dtype)
    except TypeError:   # NumPy refuses (std with an integer dtype): so must we
        with pytest.raises(PSCError):
            run_rule(fn, x, axis=0, dtype=dtype)
        return
    assert_same(run_rule(fn, x, axis=0, dtype=dtype), _expected(fn, x, axis=0, dtype=dtype),
                rtol=1e-3)


@pytest.mark.parametrize("fn", [np.sum, np.prod, np.mean, np.all, np.any, np.cumsum],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape,axis", [((0,), None), ((2, 0), 1), ((0, 3), 0), ((), None)])
def test_empty_and_scalar_operands(fn, shape, axis):
    x = np.ones(shape, np.float64)
    assert_same(run_rule(fn, x, axis=axis), _expected(fn, x, axis=axis))


@pytest.mark.parametrize("fn", [np.max, np.min, np.argmax, np.argmin], ids=lambda f: f.__name__)
def test_empty_extremum_is_an_error_like_numpy(fn):
    with pytest.raises(PSCValueError, match="empty|zero-size"):
        run_rule(fn, np.ones((0, 3)), axis=0)


def test_extremum_with_initial_allows_empty():
    x = np.ones((0, 3))
    assert_same(run_rule(np.max, x, axis=0, initial=-5.0), np.max(x, axis=0, initial=-5.0))


@pytest.mark.parametrize("fn", [np.max, np.min, np.argmax, np.argmin, np.sum, np.mean],
                         ids=lambda f: f.__name__)
def test_nan_handling(fn):
    x = np.array([[1.0, np.nan, 3.0], [np.nan, 5.0, np.nan], [7.0, 8.0, 9.0]])
    for axis in (None, 0, 1):
        assert_same(run_rule(fn, x, axis=axis), fn(x, axis=axis))


def test_argmax_ties_pick_first():
    x = np.array([[3, 1, 3], [2, 2, 0]], np.int32)
    for axis in (None, 0, 1):
        assert_same(run_rule(np.argmax, x, axis=axis), np.argmax(x, axis=axis))
        assert_same(run_rule(np.argmin, x, axis=axis), np.argmin(x, axis=axis))


@pytest.mark.parametrize("ddof", [0, 1, 2])
def test_std_var_ddof(ddof, rng):
    x = rng.normal(size=(4, 5))
    assert_same(run_rule(np.var, x, axis=1, ddof=ddof), np.var(x, axis=1, ddof=ddof))
    assert_same(run_rule(np.std, x, ddof=ddof), np.std(x, ddof=ddof))


def test_initial_for_sum_and_prod():
    x = np.arange(1, 7).reshape(2, 3)
    assert_same(run_rule(np.sum, x, axis=1, initial=10), np.sum(x, axis=1, initial=10))
    assert_same(run_rule(np.prod, x, axis=0, initial=2), np.prod(x, axis=0, initial=2))


@pytest.mark.parametrize("axis", [3, -4, (0, 0)])
def test_bad_axis(axis):
    with pytest.raises(PSCValueError):
        run_rule(np.sum, np.ones((2, 3, 4)), axis=axis)


def test_method_names_are_registered():
    from runtime import lookup_rule
    for name in ("sum", "mean", "max", "argmax", "std", "cumsum", "any"):
        assert lookup_rule(f"numpy.ndarray.{name}") is lookup_rule(getattr(np, name))


def test_where_keyword_is_rejected():
    with pytest.raises(PSCError, match="where="):
        run_rule(np.sum, np.ones(3), where=np.array([True, False, True]))
