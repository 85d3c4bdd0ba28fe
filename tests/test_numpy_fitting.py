"""np.polyfit, np.histogram2d and np.histogramdd on traced data
(runtime/numpy_rules/fitting.py), differential against NumPy: values, dtypes and shapes of
every result (polyfit over float64/float32/int inputs, deg 0..3, weights, full, cov, 2-d y;
the histograms over integer bins with and without a range, edge arrays, weights, density,
values on the edges and outside the range); user errors as PSC errors where NumPy raises;
the gradient of a loss through polyfit against central differences."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_same, run_rule
from runtime.errors import PSCError, PSCTypeError, PSCValueError
from transpiler import grad, jit_ps


def data(shape, dtype=np.float64, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-5, 6, shape).astype(dtype)
    return (rng.standard_normal(shape) * scale).astype(dtype)


# --- polyfit ---------------------------------------------------------------------------------


@jit_ps
def fits_of_each_degree(x, y):
    return (np.polyfit(x, y, 0), np.polyfit(x, y, 1), np.polyfit(x, y, 2),
            np.polyfit(x, y, 3))


def _tolerance(*arrays):
    single = any(np.asarray(a).dtype == np.float32 for a in arrays)
    return dict(rtol=2e-3, atol=2e-4) if single else dict(rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("xtype, ytype", [(np.float64, np.float64), (np.float32, np.float32),
                                          (np.int64, np.int64), (np.int32, np.float32),
                                          (np.float32, np.float64)])
def test_polyfit_of_each_degree_and_dtype(xtype, ytype):
    x = np.linspace(-2, 2, 15).astype(xtype) if xtype != np.int64 else np.arange(-7, 8)
    x = x.astype(xtype)
    y = data(15, ytype, seed=1)
    expected = tuple(np.polyfit(x, y, d) for d in range(4))
    assert_same(fits_of_each_degree(x, y), expected, **_tolerance(x, y))


@jit_ps(static_argnames=("options",))
def polyfit_with(x, y, w, options):
    options = dict(options)
    if options.pop("weighted"):
        options["w"] = w
    return np.polyfit(x, y, options.pop("deg"), **options)


CASES = [dict(deg=2, full=True), dict(deg=1, cov=True), dict(deg=3, cov="unscaled"),
         dict(deg=2, weighted=True), dict(deg=2, weighted=True, full=True),
         dict(deg=2, weighted=True, cov=True), dict(deg=1, rcond=1e-3, full=True)]


@pytest.mark.parametrize("options, two_d", [(c, False) for c in CASES]
                         + [(c, True) for c in CASES[:3] + CASES[5:6]])
def test_polyfit_options_match_numpy(options, two_d):
    x, w = np.linspace(0, 3, 12), np.abs(data(12, seed=2)) + 0.5
    y = data((12, 3) if two_d else 12, seed=3)
    kwargs = {k: v for k, v in options.items() if k not in ("weighted", "deg")}
    if options.get("weighted"):
        kwargs["w"] = w
    expected = np.polyfit(x, y, options["deg"], **kwargs)
    given = dict(options, weighted=options.get("weighted", False))
    actual = polyfit_with(x, y, w, tuple(sorted(given.items())))
    assert_same(actual, expected, rtol=1e-9, atol=1e-12)


def test_polyfit_mixed_dtypes_and_exact_fit():
    x32, w32 = np.linspace(-1, 1, 8).astype(np.float32), np.ones(8, np.float32) * 2
    y = data(8, seed=4)
    for (x, w), options in [((x32, w32), dict(full=True)),
                            ((x32.astype(np.float64), w32), dict(cov=True)),
                            ((x32, w32.astype(np.float64)), {})]:
        if True:
            expected = np.polyfit(x, y, 2, w=w, **options)
            actual = run_rule(np.polyfit, x, y, 2, static=(2,), w=w, **options)
            assert_same(actual, expected, rtol=2e-3, atol=2e-4)
    z = x32.astype(np.float64) + 1j * data(8, seed=7)       # complex data: complex lstsq
    assert_same(run_rule(np.polyfit, z, y, 2, static=(2,), full=True),
                np.polyfit(z, y, 2, full=True), rtol=1e-9, atol=1e-12)
    with pytest.raises(PSCTypeError, match="same_kind"):       # NumPy: UFuncTypeError
        run_rule(np.polyfit, x32, y, 1, static=(2,), w=z)
    # as many points as coefficients: lstsq's residuals are empty, as in NumPy
    x, y = np.array([0.0, 1.0, 2.0]), np.array([1.0, 3.0, 7.0])
    assert_same(run_rule(np.polyfit, x, y, 2, static=(2,), full=True),
                np.polyfit(x, y, 2, full=True), rtol=1e-9, atol=1e-12)


def test_polyfit_errors():
    x, y = np.arange(5.0), np.ones(5)
    with pytest.raises(PSCValueError, match="deg >= 0"):
        run_rule(np.polyfit, x, y, -1, static=(2,))
    with pytest.raises(PSCTypeError, match="1D vector for x"):
        run_rule(np.polyfit, np.ones((5, 1)), y, 1, static=(2,))
    with pytest.raises(PSCTypeError, match="same length"):
        run_rule(np.polyfit, x, np.ones(4), 1, static=(2,))
    with pytest.raises(PSCTypeError, match="1D or 2D"):
        run_rule(np.polyfit, x, np.ones((5, 1, 1)), 1, static=(2,))
    with pytest.raises(PSCTypeError, match="1-d array for weights"):
        run_rule(np.polyfit, x, y, 1, static=(2,), w=np.ones((5, 1)))
    with pytest.raises(PSCTypeError, match="w and y"):
        run_rule(np.polyfit, x, y, 1, static=(2,), w=np.ones(4))
    with pytest.raises(PSCValueError, match="exceed order"):
        run_rule(np.polyfit, x[:3], y[:3], 2, static=(2,), cov=True)
    with pytest.raises(PSCTypeError, match="deg must be known"):
        run_rule(np.polyfit, x, y, 1)
    for args, kwargs in [((x, np.ones((5, 1, 1)), 1), {}), ((x, y, 1), dict(w=np.ones(4))),
                         ((x[:3], y[:3], 2), dict(cov=True)), ((x, y, -1), {})]:
        with pytest.raises((TypeError, ValueError)):   # NumPy raises for these too
            np.polyfit(*args, **kwargs)


XS = np.linspace(-1, 1, 10)
PROBE = np.array([-0.5, 0.3, 1.5])


def fit_loss(y, w):
    c = np.polyfit(XS, y, 2, w=w)
    return np.sum(np.polyval(c, PROBE) ** 2) + np.sum(c * np.array([0.3, -1.0, 2.0]))


def test_grad_through_polyfit_matches_central_differences():
    y, w = data(10, seed=5), np.abs(data(10, seed=6)) + 0.5
    gy, gw = grad(fit_loss, argnums=(0, 1))(y, w)
    step = 1e-6
    for i, (g, arg) in enumerate(((gy, y), (gw, w))):
        t = data(10, seed=30 + i)
        plus, minus = [y, w], [y, w]
        plus[i], minus[i] = arg + step * t, arg - step * t
        slope = (fit_loss(*plus) - fit_loss(*minus)) / (2 * step)
        np.testing.assert_allclose(np.dot(np.asarray(g), t), slope, rtol=1e-6, atol=1e-8)


# --- histogramdd, histogram2d ---------------------------------------------------------------


def check(fn, *args, rtol=1e-12, atol=1e-12, **kwargs):
    """``fn(*args)`` through its rule, the data traced, bins/range static."""
    assert_same(run_rule(fn, *args, **kwargs), fn(*args, **kwargs), rtol=rtol, atol=atol)


@jit_ps
def histograms_dd(s):
    return (np.histogramdd(s), np.histogramdd(s, bins=(3, 4, 5)),
            np.histogramdd(s, bins=4, range=[(-1, 1), None, (0.0, 4.0)]),
            np.histogramdd(s, bins=[np.array([-2.0, 0.0, 0.5, 3.0]), 3, np.arange(-4, 5)],
                           density=True))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_histogramdd_bins_and_ranges(dtype):
    s = data((200, 3), dtype, scale=3.0)
    actual = histograms_dd(s)
    expected = (np.histogramdd(s), np.histogramdd(s, bins=(3, 4, 5)),
                np.histogramdd(s, bins=4, range=[(-1, 1), None, (0.0, 4.0)]),
                np.histogramdd(s, bins=[np.array([-2.0, 0.0, 0.5, 3.0]), 3, np.arange(-4, 5)],
                               density=True))
    assert_same(actual, expected, rtol=1e-12, atol=1e-12)


def test_histogramdd_sample_forms_weights_density_and_edges():
    s = data((100, 2), seed=1)
    w = data(100, seed=2)
    check(np.histogramdd, s, bins=5, weights=w)
    check(np.histogramdd, s, bins=(3, 6), weights=np.abs(w), density=True)
    check(np.histogramdd, s, bins=3, weights=np.arange(100))        # int weights: float64
    check(np.histogramdd, s[:, 0], bins=7)                           # 1-d sample: D = 1
    check(np.histogramdd, (s[:, 0], s[:, 1]), bins=(2, 3))           # a sequence of D arrays
    on_edges = np.array([[0.0, 0.0], [0.5, 1.0], [1.0, 1.0], [1.0, 0.25], [0.25, 0.75],
                         [2.0, 0.5], [-0.1, 0.5], [np.nan, 0.5]])
    check(np.histogramdd, on_edges, bins=4, range=[(0, 1), (0, 1)])
    check(np.histogramdd, on_edges[:6], bins=(4, 2))
    check(np.histogramdd, np.full((5, 2), 3.0), bins=2)              # zero width: widened
    check(np.histogramdd, np.zeros((0, 2)), bins=3)                  # empty: range (0, 1)
    edges = (np.array([-1.0, 0.0, 2.0]), np.linspace(-2, 2, 5))
    assert_same(run_rule(np.histogramdd, s, edges), np.histogramdd(s, edges))   # traced edges


def test_histogram2d_matches_numpy():
    x, y = data(150, seed=3), data(150, np.float32, seed=4)
    check(np.histogram2d, x, y)
    check(np.histogram2d, x, y, bins=(4, 6), range=[(-2, 2), (-1, 3)])
    check(np.histogram2d, x, y, bins=[5, np.linspace(-3, 3, 4)], density=True)
    check(np.histogram2d, x, y, bins=np.array([-1.0, 0.0, 2.0, 3.0]), weights=x * x)
    check(np.histogram2d, x.astype(np.int32), y.astype(np.int32) * 2, bins=3)


def test_histogram_errors():
    s = data((10, 2))
    cases = [(np.histogramdd, (s,), dict(bins=(2, 3, 4)), PSCValueError, "dimension of bins"),
             (np.histogramdd, (s,), dict(range=[(0, 1)]), PSCValueError, "one entry per"),
             (np.histogramdd, (s,), dict(bins=0), PSCValueError, "must be positive"),
             (np.histogramdd, (s,), dict(bins=2.5), PSCTypeError, "must be an integer"),
             (np.histogramdd, (s,), dict(bins=[[1, 0], 2]), PSCValueError, "monotonically"),
             (np.histogramdd, (s,), dict(range=[(1, 0), None]), PSCValueError, "larger"),
             (np.histogramdd, (s,), dict(range=[(0, np.inf), None]), PSCValueError,
              "not finite"),
             (np.histogramdd, (s,), dict(weights=np.ones(9)), PSCValueError, "same length"),
             (np.histogram2d, (s[:, 0], s[:5, 1]), {}, PSCValueError, "same length")]
    for fn, args, kwargs, error, message in cases:
        with pytest.raises((TypeError, ValueError)):   # NumPy raises for each
            fn(*args, **kwargs)
        with pytest.raises(error, match=message):
            run_rule(fn, *args, **kwargs)
    with pytest.raises(PSCError):
        run_rule(np.histogramdd, s > 0)   # bool samples are refused
    with pytest.raises(PSCTypeError, match="known when"):
        run_rule(np.histogramdd, s, 3)    # traced bins
    with pytest.raises(PSCError, match="known when"):
        run_rule(np.histogramdd, s, 3, [(0.0, 1.0), (0.0, 1.0)], static=(1,))
