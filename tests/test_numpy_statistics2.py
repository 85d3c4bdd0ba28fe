"""Order statistics, nan-reductions, differences and scans on traced arrays
(`runtime.numpy_rules.quantiles`, `nan_functions`, `statistics_extra`, the ``cumulative``
primitive's blocked scan), differential against NumPy: values, dtypes and shapes over
float32/float64/int/bool (complex where NumPy and the rules accept it), NaN inputs, empty
arrays, negative and tuple axes, keepdims; the errors NumPy raises at build time; grads
against jax.grad and central differences."""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from runtime import PSCError
from transpiler import grad, jit_ps
from ad_corpus.oracles import jax_x64  # noqa: F401,E402  (JAX in float64 while this module runs)

METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
           "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
           "normal_unbiased", "lower", "higher", "midpoint", "nearest")
AXES = ((), (("axis", 1),), (("axis", -2), ("keepdims", True)), (("axis", (0, 1)),))


_FUNCTIONS = {"maximum.accumulate": np.maximum.accumulate,
              "minimum.accumulate": np.minimum.accumulate}


def _function(name):
    return _FUNCTIONS[name] if name in _FUNCTIONS else getattr(np, name)


def _call(name, *args, **kwargs):
    """The NumPy oracle (its RuntimeWarnings for empty and all-NaN slices silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _function(name)(*args, **kwargs)


@jit_ps(static_argnames=("name", "calls"))
def _many(x, name, calls):
    """One program per (name, calls): each call is (positional extras, keyword items)."""
    fn = getattr(np, name) if "." not in name else getattr(np, name[:7]).accumulate
    return tuple(fn(x, *extra, **dict(kw)) for extra, kw in calls)


@jit_ps(static_argnames=("name", "kw"))
def _with_q(x, q, name, kw):
    return getattr(np, name)(x, q, **dict(kw))


def _same(actual, expected, rtol=None, tag=""):
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected), tag
        for a, e in zip(actual, expected):
            _same(a, e, rtol, tag)
        return
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, (tag, actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (tag, actual.shape, expected.shape)
    if rtol is None:
        rtol = 1e-5 if expected.dtype in (np.float32, np.complex64) else 1e-12
    finite = np.abs(expected[np.isfinite(expected)])
    scale = max(1.0, float(finite.max(initial=0)))
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale,
                               equal_nan=True, err_msg=str(tag))


def _compare_many(x, name, calls, rtol=None):
    expected = tuple(_call(name, x, *extra, **dict(kw)) for extra, kw in calls)
    _same(_many(x, name, calls), expected, rtol, (name, x.dtype, calls))


def _data(dtype, shape=(4, 7), seed=0, nans=False):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.bool_:
        return rng.random(shape) > 0.5
    x = rng.standard_normal(shape) * 5
    if np.dtype(dtype).kind in "iu":
        x = rng.integers(-20, 20, shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    x = x.astype(dtype)
    if nans and np.dtype(dtype).kind in "fc":
        x[1, 2] = np.nan
        x[-1] = np.nan   # an all-NaN slice along axis 1
    return x


# --- quantile, percentile, median --------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantile_methods(name, method):
    for dtype, nans in ((np.float64, False), (np.float64, True), (np.int32, False)):
        x = _data(dtype, nans=nans)
        calls = tuple(((q,), kw + (("method", method),))
                      for q in (0.0, 0.3, 1.0) for kw in AXES)
        _compare_many(x, name, calls)
    x = _data(np.float32, nans=True)
    _compare_many(x, name, (((0.25,), (("method", method), ("axis", 1))),))


@pytest.mark.parametrize("name", ["quantile", "percentile", "nanquantile", "nanpercentile"])
def test_quantile_q_arrays_and_traced_q(name):
    scale = 100 if "percentile" in name else 1
    x = _data(np.float32, nans=name.startswith("nan"))
    for q in (np.array([0.1, 0.5, 0.9]) * scale, np.array([[0.2], [0.7]]) * scale):
        for kw in ((("axis", 1),), (("axis", 0), ("keepdims", True))):
            _same(_with_q(x, q, name, kw), _call(name, x, q, **dict(kw)), tag=(name, q, kw))
            q32 = q.astype(np.float32)   # a float32 q keeps the arithmetic float32
            _same(_with_q(x, q32, name, kw), _call(name, x, q32, **dict(kw)))
    # a traced weak Python float q keeps float32 data float32, as a static one does
    _same(_with_q(x, 0.3 * scale, name, (("axis", 1),)), _call(name, x, 0.3 * scale, axis=1))


def test_median_and_nanmedian():
    for dtype in (np.float64, np.float32, np.int8, np.bool_):
        for nans in (False, True):
            x = _data(dtype, (4, 6), nans=nans)
            calls = tuple(((), kw) for kw in AXES + ((("axis", -1),),))
            _compare_many(x, "median", calls)
            _compare_many(x, "nanmedian", calls)
    odd = _data(np.float64, (3, 5), nans=True)
    _compare_many(odd, "nanmedian", (((), (("axis", 1),)), ((), (("axis", 0),))))


def test_empty_arrays():
    empty = np.zeros((0, 3))
    _compare_many(empty, "median", (((), (("axis", 0),)), ((), ())))
    _compare_many(empty, "nanmedian", (((), (("axis", 0),)),))
    _compare_many(empty, "nanquantile", (((0.5,), (("axis", 0),)),))
    _compare_many(np.zeros((3, 0)), "quantile", (((0.5,), (("axis", 0),)),))
    with pytest.raises(PSCError, match="out of bounds"):
        _many(empty, "quantile", (((0.5,), (("axis", 0),)),))


def test_quantile_errors():
    x = _data(np.float64)
    with pytest.raises(PSCError, match=r"range \[0, 1\]"):
        _many(x, "quantile", (((1.5,), ()),))
    with pytest.raises(PSCError, match=r"range \[0, 100\]"):
        _many(x, "percentile", (((-1,), ()),))
    with pytest.raises(PSCError, match="not a valid method"):
        _many(x, "quantile", (((0.5,), (("method", "bogus"),)),))
    with pytest.raises(PSCError, match="boolean subtract"):
        _many(_data(np.bool_), "quantile", (((0.5,), ()),))
    with pytest.raises(PSCError, match="out of bounds"):
        _many(x, "median", (((), (("axis", 2),)),))


# --- nan-functions ------------------------------------------------------------------------

NAN_FUNCTIONS = ("nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmin", "nanmax")


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_nan_reductions(dtype):
    x = _data(dtype, nans=True)
    for name in NAN_FUNCTIONS:
        calls = tuple(((), kw) for kw in AXES + ((("axis", -1),),))
        if name in ("nanvar", "nanstd"):
            calls += (((), (("axis", 1), ("ddof", 1))), ((), (("axis", 0), ("ddof", 4))))
        _compare_many(x, name, calls)
    for name in ("nancumsum", "nancumprod"):
        _compare_many(x, name, (((), ()), ((), (("axis", 1),)), ((), (("axis", -2),))))
    for name in ("nanargmin", "nanargmax"):
        clean = _data(dtype, nans=False)
        if dtype in (np.float64, np.float32):
            clean[0, 3] = np.nan   # NaNs, but no all-NaN slice: NumPy's index
        _compare_many(clean, name, (((), ()), ((), (("axis", 0),)),
                                    ((), (("axis", -1), ("keepdims", True)))))


def test_nan_functions_complex():
    x = _data(np.complex128, nans=True)
    for name in ("nansum", "nanprod", "nanmean", "nancumsum"):
        _compare_many(x, name, (((), ()), ((), (("axis", 1),))))


def test_nanargmax_of_an_all_nan_slice_is_minus_one():
    """NumPy raises ValueError at run time; the compiled program gives -1 (as jax)."""
    x = _data(np.float64, nans=True)
    result = _many(x, "nanargmax", (((), (("axis", 1),)),))[0]
    expected = np.asarray(jnp.nanargmax(jnp.asarray(x), axis=1))
    np.testing.assert_array_equal(result, expected)
    assert result[-1] == -1
    assert _many(np.full(3, np.nan), "nanargmin", (((), ()),))[0] == -1


def test_all_nan_slices_give_nan():
    x = np.full((2, 3), np.nan, np.float32)
    for name in ("nanmean", "nanvar", "nanstd", "nanmin", "nanmax", "nanmedian"):
        _compare_many(x, name, (((), (("axis", 1),)),))


# --- average, ptp, count_nonzero, diff, ediff1d, trapezoid, corrcoef, bin edges -------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_elementary_statistics(dtype):
    x = _data(dtype, (4, 20))
    cases = {
        "average": [(), (("axis", 1),), (("axis", 0), ("keepdims", True)),
                    (("returned", True),), (("axis", -1), ("returned", True))],
        "ptp": [(), (("axis", 1),), (("axis", 0), ("keepdims", True))],
        "count_nonzero": [(("axis", 1),), (("axis", (0, 1)),), (("axis", 0),
                                                                  ("keepdims", True))],
        "diff": [(), (("n", 2),), (("axis", 0),), (("prepend", 0),),
                 (("append", 1), ("axis", 0)), (("n", 0),)],
        "trapezoid": [(), (("axis", 0),), (("dx", 0.5),)],
        "corrcoef": [(), (("rowvar", False),)],
        "histogram_bin_edges": [(), (("bins", 4), ("range", (-1, 1)))],
        "maximum.accumulate": [(), (("axis", 1),)],
        "minimum.accumulate": [(), (("axis", -1),)],
    }
    if dtype == np.bool_:
        for name in ("ptp", "trapezoid", "corrcoef"):   # NumPy refuses (bool subtract) or
            del cases[name]                             # differs trivially; see errors test
    else:
        cases["ediff1d"] = [(), (("to_begin", 3),), (("to_end", (1, 2)),)]
    for name, kws in cases.items():
        _compare_many(x, name, tuple(((), kw) for kw in kws), rtol=1e-4)


@jit_ps(static_argnames=("name", "kw"))
def _two(x, y, name, kw):
    return getattr(np, name)(x, y, **dict(kw))


def test_with_second_operand():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5))
    for w, kw in ((rng.uniform(size=(3, 5)), ()),
                  (rng.uniform(size=5), (("axis", 1), ("returned", True))),
                  (rng.uniform(size=3).astype(np.float32), (("axis", -2),))):
        _same(_weighted(x, w, kw), _call("average", x, weights=w, **dict(kw)))
    xi = rng.integers(0, 9, (3, 5)).astype(np.int32)
    w32 = rng.uniform(size=(3, 5)).astype(np.float32)
    _same(_weighted(xi, w32, (("axis", 0),)), np.average(xi, weights=w32, axis=0))
    grid = np.cumsum(rng.uniform(size=5))
    _same(_two(x, grid, "trapezoid", ()), np.trapezoid(x, grid))
    _same(_two(x, np.cumsum(x, axis=0), "trapezoid", (("axis", 0),)),
          np.trapezoid(x, np.cumsum(x, axis=0), axis=0))
    _same(_two(x, x[::-1], "corrcoef", ()), np.corrcoef(x, x[::-1]))
    column = np.array([[9.0], [8.0], [7.0]])
    _same(_appended(x, column, ()), np.diff(x, append=column))
    _same(_appended(x, np.arange(5.0)[None], (("axis", 0), ("n", 2))),
          np.diff(x, append=np.arange(5.0)[None], axis=0, n=2))


@jit_ps(static_argnames=("kw",))
def _weighted(x, w, kw):
    return np.average(x, weights=w, **dict(kw))


@jit_ps(static_argnames=("kw",))
def _appended(x, extra, kw):
    return np.diff(x, append=extra, **dict(kw))


def test_statistics_errors():
    x = _data(np.float64, (3, 5))
    with pytest.raises(PSCError, match="non-negative"):
        _many(x, "diff", (((), (("n", -1),)),))
    with pytest.raises(PSCError, match="at least one dimensional"):
        _many(np.float64(2.0), "diff", (((), ()),))
    with pytest.raises(PSCError, match="Axis must be specified"):
        _weighted(x, np.ones(5), ())
    with pytest.raises(PSCError, match="not compatible"):
        _weighted(x, np.ones(4), (("axis", 1),))
    with pytest.raises(PSCError, match="boolean subtract"):
        _many(_data(np.bool_), "ediff1d", (((), ()),))
    with pytest.raises(PSCError, match="same_kind"):
        _many(_data(np.int32), "ediff1d", (((), (("to_begin", 0.5),)),))
    with pytest.raises(PSCError, match="estimators"):
        _many(x, "histogram_bin_edges", (((), (("bins", "auto"),)),))
    with pytest.raises(PSCError, match="scalar"):
        _many(np.float64(1.0), "maximum.accumulate", (((), ()),))


# --- scans --------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [16, 4097])
def test_long_scans_match_numpy(n):
    """Integer scans and max/min are exact at every length; float sums of a long axis
    associate in blocks of 16 (first block bit-exact), within a few ulps of NumPy's
    sequential loop for well-conditioned data."""
    rng = np.random.default_rng(n)
    ints = rng.integers(-5, 6, (2, n)).astype(np.int8)
    calls = (((), (("axis", 1),)), ((), ()), ((), (("axis", 0),)))
    expected = tuple(np.cumsum(ints, **dict(kw)) for _, kw in calls)
    _same(_many(ints, "cumsum", calls), expected)   # int8 -> int64, exact
    _compare_many(rng.random((2, n)) > 0.5, "cumsum", calls)   # bool -> int64
    floats = rng.uniform(0.5, 1.5, (2, n))
    _compare_many(floats, "cumsum", calls, rtol=1e-13)
    _compare_many(floats.astype(np.float32), "cumsum", calls, rtol=1e-5)
    _compare_many(floats, "maximum.accumulate", (((), (("axis", 1),)),), rtol=0)
    _compare_many(floats, "minimum.accumulate", (((), (("axis", 1),)),), rtol=0)
    near_one = 1 + 1e-3 * rng.standard_normal((2, n))
    _compare_many(near_one, "cumprod", (((), (("axis", 1),)),), rtol=1e-12)
    if n <= 16:   # one block: NumPy's order, to the bit
        np.testing.assert_array_equal(_many(floats, "cumsum", calls[:1])[0],
                                      np.cumsum(floats, axis=1))


def test_scan_negative_zero_and_empty():
    _compare_many(np.array([-0.0, -0.0]), "cumsum", (((), ()),))
    assert np.signbit(_many(np.array([-0.0] * 40), "cumsum", (((), ()),))[0]).all()
    _compare_many(np.zeros((0, 3)), "cumsum", (((), (("axis", 0),)), ((), ())))


# --- derivatives -------------------------------------------------------------------------

_JAX_OBJECTIVES = {
    "median": lambda x: jnp.median(x, axis=1).sum(),
    "quantile": lambda x: jnp.quantile(x, 0.3, axis=0).sum(),
    "percentile_hazen": None,   # jax has no 'hazen': central differences only
    "nanmean": lambda x: jnp.nanmean(x, axis=1).sum(),
    "nanvar": lambda x: jnp.nanvar(x, axis=0).sum(),
    "nansum": lambda x: jnp.nansum(x * x),
    "cumsum": lambda x: (jnp.cumsum(x, axis=1) ** 2).sum(),
    "trapezoid": lambda x: jnp.trapezoid(x * x).sum(),
    "average": lambda x: jnp.average(x, axis=0, weights=jnp.arange(4.0)).sum(),
}


def _objective(x, name):
    """The PSC objectives (plain NumPy when called outside jit_ps: the central
    differences' oracle)."""
    if name == "median":
        return np.median(x, axis=1).sum()
    if name == "quantile":
        return np.quantile(x, 0.3, axis=0).sum()
    if name == "percentile_hazen":
        return np.percentile(x, 70.0, method="hazen").sum()
    if name == "nanmean":
        return np.nanmean(x, axis=1).sum()
    if name == "nanvar":
        return np.nanvar(x, axis=0).sum()
    if name == "nansum":
        return np.nansum(x * x)
    if name == "cumsum":
        return (np.cumsum(x, axis=1) ** 2).sum()
    if name == "trapezoid":
        return np.trapezoid(x * x).sum()
    return np.average(x, axis=0, weights=np.arange(4.0)).sum()


@jit_ps(static_argnames=("name",))
def _grad_objective(x, name):
    return grad(_objective)(x, name)


@pytest.mark.parametrize("name", sorted(_JAX_OBJECTIVES))
def test_grads_match_jax(name, jax_x64):
    x = _data(np.float64, (4, 7), seed=3)
    if name.startswith("nan"):
        x[1, 2] = np.nan
    actual = np.asarray(_grad_objective(x, name))
    if _JAX_OBJECTIVES[name] is not None:
        expected = np.asarray(jax.grad(_JAX_OBJECTIVES[name])(jnp.asarray(x)))
        np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-9)
    finite = ~np.isnan(x)
    numeric = _central_difference(lambda v: _objective(v, name), x)
    np.testing.assert_allclose(actual[finite], numeric[finite], rtol=1e-5, atol=1e-6)


def test_grad_of_a_long_cumsum(jax_x64):
    """The vjp of a cumsum is a reverse cumsum: the blocked scan's reverse path."""
    x = _data(np.float64, (3, 40), seed=4)
    actual = np.asarray(_grad_objective(x, "cumsum"))
    expected = np.asarray(jax.grad(_JAX_OBJECTIVES["cumsum"])(jnp.asarray(x)))
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-9)
    numeric = _central_difference(lambda v: _objective(v, "cumsum"), x)
    np.testing.assert_allclose(actual, numeric, rtol=1e-5, atol=1e-5)


def _central_difference(f, x, eps=1e-6):
    out = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        if np.isnan(x[index]):
            continue
        up, down = x.copy(), x.copy()
        up[index] += eps
        down[index] -= eps
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[index] = (np.sum(f(up)) - np.sum(f(down))) / (2 * eps)
    return out
