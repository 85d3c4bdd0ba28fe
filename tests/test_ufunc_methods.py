"""``ufunc.reduce``, ``.accumulate``, ``.reduceat``, ``.outer`` and ``.at`` on traced
arrays (`runtime.numpy_rules.ufunc_methods`), differential against NumPy for binary ufuncs
of every kind (XLA reductions, associative folds, left folds) over float/int/bool/complex:
where NumPy answers, the values, dtype and shape agree; where NumPy raises, PSC raises a
PSCError at the line."""
from __future__ import annotations

import numpy as np
import pytest

from runtime import PSCError, PSCUnsupportedCallError, PSCValueError
from transpiler import jit_ps

UFUNCS = ["add", "multiply", "maximum", "minimum", "logical_and", "logical_or",
          "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "subtract", "divide",
          "power", "fmax", "arctan2", "floor_divide", "remainder", "equal"]
CASES = [("reduce", {}), ("reduce", {"axis": -1, "keepdims": True}),
         ("reduce", {"axis": None}), ("reduce", {"axis": 1, "initial": 2}),
         ("reduce", {"axis": (0, 1)}), ("reduce", {"dtype": np.float64}),
         ("accumulate", {}), ("accumulate", {"axis": -1}),
         ("reduceat", {"indices": (0, 2, 1, 3), "axis": 1}), ("outer", None)]


@jit_ps(static_argnames=("name", "method", "options"))
def _method(a, name, method, options):
    if method == "outer":
        return getattr(np, name).outer(a[0], a[:, 1])
    return getattr(getattr(np, name), method)(a, **dict(options))


def _input(dtype, shape=(3, 4)):
    rng = np.random.default_rng(0)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(1, 4, shape).astype(dtype)
    x = rng.standard_normal(shape) * 3
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _numpy(x, name, method, options):
    if method == "outer":
        return getattr(np, name).outer(x[0], x[:, 1])
    axis = options.get("axis", 0)
    if method == "reduce" and x.ndim > 1 and x.size and isinstance(axis, int) and \
            axis % x.ndim != 0:
        # NumPy's reduce is a left fold along the axis; NumPy 2.4.6 on this AVX-512
        # machine computes ``np.power.reduce``/``np.arctan2.reduce`` along a contiguous
        # axis otherwise (x0 ** x3 for four elements, the middle ones skipped), while
        # along a strided axis it folds as documented.  The oracle reduces a copy whose
        # axis 0 (strided) is the reduced one.
        moved = dict(options, axis=0, keepdims=False)
        out = getattr(np, name).reduce(np.ascontiguousarray(np.moveaxis(x, axis, 0)),
                                       **moved)
        return np.expand_dims(out, axis) if options.get("keepdims") else out
    return getattr(getattr(np, name), method)(x, **options)


def _check(x, name, method, options):
    try:
        with np.errstate(all="ignore"):
            expected = np.asarray(_numpy(x, name, method, options))
    except (TypeError, ValueError, IndexError):
        with pytest.raises(PSCError):
            _method(x, name, method, tuple(sorted((options or {}).items())))
        return
    actual = np.asarray(_method(x, name, method, tuple(sorted((options or {}).items()))))
    where = (name, method, options, x.dtype)
    assert actual.dtype == expected.dtype, where
    assert actual.shape == expected.shape, where
    np.testing.assert_allclose(actual.astype(complex), expected.astype(complex), rtol=2e-3,
                               atol=1e-3, equal_nan=True, err_msg=str(where))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8, np.bool_,
                                   np.complex128, np.float16])
@pytest.mark.parametrize("name", UFUNCS)
def test_methods_match_numpy(name, dtype):
    x = _input(dtype)
    for method, options in CASES:
        _check(x, name, method, options)


@pytest.mark.parametrize("name", ["add", "maximum", "subtract", "logical_xor", "power"])
def test_empty_and_zero_d(name):
    for x in (np.zeros((0, 3)), np.zeros((2, 0)), np.float64(2.5) * np.ones(())):
        for method, options in [("reduce", {}), ("reduce", {"axis": -1}),
                                ("reduce", {"initial": 1.0}), ("accumulate", {})]:
            _check(x, name, method, options)


@jit_ps(static_argnames=("name", "options"))
def _masked(a, w, name, options):
    return getattr(np, name).reduce(a, where=w, **dict(options))


def test_where():
    x = np.array([[1.0, 5, 3], [4, -2, np.nan]])
    w = np.array([True, False, True])
    for name, options in [("add", {}), ("add", {"initial": 3.0, "axis": 1}),
                          ("maximum", {"initial": -10.0}), ("multiply", {"axis": None}),
                          ("minimum", {"initial": 0.0, "axis": 1}), ("logical_or", {})]:
        expected = getattr(np, name).reduce(x, where=w, **options)
        np.testing.assert_allclose(_masked(x, w, name, tuple(options.items())), expected)
    with pytest.raises(PSCValueError, match="does not have an identity"):
        _masked(x, w, "maximum", ())


@jit_ps
def _add_at(a):
    return np.add.at(a, [0, 0], 1.0)


@jit_ps
def _sin_reduce(a):
    return np.sin.reduce(a)


@jit_ps
def _long_subtract(a):
    return np.subtract.reduce(a)


def test_refusals():
    with pytest.raises(PSCUnsupportedCallError, match="in place") as info:
        _add_at(np.zeros(3))
    assert "bincount" in str(info.value)
    with pytest.raises(PSCValueError, match="only supported for binary functions"):
        _sin_reduce(np.zeros(3))
    with pytest.raises(PSCUnsupportedCallError, match="not associative"):
        _long_subtract(np.zeros(1000))


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "logical_xor"])
def test_long_associative_accumulate_is_exact(name):
    """Past the unrolling limit an associative ufunc accumulates by a log-step scan, with
    NaNs where NumPy's sequential loop has them."""
    rng = np.random.default_rng(1)
    x = rng.choice([-0.0, 0.0, -1.0, 2.0, np.nan], size=(2, 1500), p=[.3, .3, .2, .19, .01])
    if name == "logical_xor":
        x = x > 0
    expected = getattr(np, name).accumulate(x, axis=1)
    actual = _method(x, name, "accumulate", (("axis", 1),))
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual, expected)
