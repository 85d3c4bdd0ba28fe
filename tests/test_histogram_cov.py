"""np.histogram and np.cov (runtime/numpy_rules/statistics.py) against NumPy: values,
dtypes and shapes of (hist, bin_edges) for integer bins with and without a range, edge
sequences, weights, density, integer and float32 data, values on the edges; np.cov's
shapes (1-d input: 0-d), dtypes, rowvar, bias, ddof, y; user errors."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_same, run_rule
from runtime.errors import PSCTypeError, PSCUnsupportedCallError, PSCValueError
from transpiler import jit_ps


def data(shape, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(dtype)


def check(fn, *args, rtol=1e-12, atol=1e-12, **kwargs):
    """``fn(*args)`` through its rule, the data traced (histogram: the bins static)."""
    expected = fn(*args, **kwargs)
    static = (1,) if fn is np.histogram else ()
    actual = run_rule(fn, *args, static=static, **kwargs)
    assert_same(actual, expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
@pytest.mark.parametrize("bins", [1, 7, 10, 64])
def test_histogram_integer_bins(dtype, bins):
    x = data((500,), np.float64) * 10
    check(np.histogram, x.astype(dtype), bins)


@pytest.mark.parametrize("range_", [(0.0, 1.0), (-1, 2), (0.25, 0.25), (np.float32(-0.5),
                                                                          np.float32(0.5))])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_histogram_static_range(range_, dtype):
    x = (data((300,)) * 2).astype(dtype)
    check(np.histogram, x, 6, range=range_)


def test_values_on_edges_and_last_bin_closed():
    x = np.array([0.0, 0.25, 0.5, 0.75, 1.0, 1.0, 0.1, 0.3000000001, 0.2999999999])
    check(np.histogram, x, 4)
    check(np.histogram, x, 3)
    check(np.histogram, x, 10, range=(0.0, 1.0))
    check(np.histogram, np.arange(11.0), 10)
    check(np.histogram, np.full(5, 3.0), 4)          # zero width: widened by 0.5
    check(np.histogram, np.array([2, 2, 2]), 3)      # ... for integers too (float edges)


def test_histogram_2d_input_is_flattened():
    check(np.histogram, data((4, 5)), 5)


@pytest.mark.parametrize("wdtype", [np.float64, np.float32, np.int64])
def test_histogram_weights(wdtype):
    x, w = data((400,)), (data((400,), seed=1) * 5).astype(wdtype)
    tol = dict(rtol=1e-5, atol=1e-4) if wdtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    check(np.histogram, x, 9, weights=w, **tol)
    check(np.histogram, x, [-1.0, 0.0, 0.5, 2.0], weights=w, **tol)


@pytest.mark.parametrize("bins", [[0.0, 0.5, 1.0], [-3, -1, 0, 1, 3], [0.0, 1.0, 1.0, 2.0],
                                  np.linspace(-2, 2, 9)])
def test_histogram_edge_sequence(bins):
    x = np.concatenate([data((200,)), [0.0, 0.5, 1.0, 2.0, -3.0, 3.0]])
    check(np.histogram, x, bins)


def test_histogram_traced_edges():
    def f(x, edges):
        return np.histogram(x, edges)
    x, edges = data((100,)), np.array([-1.0, 0.0, 0.3, 2.0])
    assert_same(jit_ps(f)(x, edges), f(x, edges))


def test_histogram_density():
    x = data((300,))
    check(np.histogram, x, 8, density=True)
    check(np.histogram, x, [-2.0, 0.0, 0.5, 3.0], density=True)


def test_histogram_empty_input():
    check(np.histogram, np.zeros(0), 3)


def test_azimint_hist_style():
    def kernel(data, radius, npt):
        histu = np.histogram(radius, npt)[0]
        histw = np.histogram(radius, npt, weights=data)[0]
        return histw / histu
    radius, values = np.abs(data((2000,))), data((2000,), seed=3)
    assert_same(jit_ps(kernel, static_argnames=("npt",))(values, radius, 50),
                kernel(values, radius, 50), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call, error", [
    (lambda x: np.histogram(x, 0), PSCValueError),
    (lambda x: np.histogram(x, 3, range=(1.0, 0.0)), PSCValueError),
    (lambda x: np.histogram(x, 3, range=(0.0, np.inf)), PSCValueError),
    (lambda x: np.histogram(x, [1.0, 0.0]), PSCValueError),
    (lambda x: np.histogram(x, 3, weights=np.ones(3)), PSCValueError),
    (lambda x: np.histogram(x, 2.5), PSCTypeError),
])
def test_histogram_errors(call, error):
    x = data((10,))
    with pytest.raises((ValueError, TypeError)):
        call(x)   # NumPy refuses it too
    with pytest.raises(error):
        jit_ps(call)(x)


def test_histogram_bin_estimators_are_refused():
    with pytest.raises(PSCUnsupportedCallError):
        jit_ps(lambda x: np.histogram(x, "auto"))(data((10,)))


# --- cov -------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(3, 10), (1, 10), (10,), (5, 2), (2, 1)])
@pytest.mark.parametrize("kwargs", [{}, {"bias": True}, {"ddof": 0}, {"ddof": 2},
                                    {"rowvar": False}, {"rowvar": False, "bias": True}])
def test_cov_matches_numpy(shape, kwargs):
    import warnings
    with warnings.catch_warnings():   # ddof >= N: NumPy warns and divides by 0
        warnings.simplefilter("ignore", RuntimeWarning)
        check(np.cov, data(shape), **kwargs)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float64])
def test_cov_dtypes(dtype):
    check(np.cov, (data((3, 8)) * 4).astype(dtype), rtol=1e-6, atol=1e-6)
    check(np.cov, (data((3, 8)) * 4).astype(dtype), dtype=np.float32, rtol=1e-5, atol=1e-5)


def test_cov_with_y():
    check(np.cov, data((2, 6)), data((6,), seed=1))
    check(np.cov, data((6, 2)), data((6, 3), seed=1), rowvar=False)


def test_covariance2_style():
    def kernel(M, float_n, data):
        return np.cov(np.transpose(data))
    d = data((20, 6))
    assert_same(jit_ps(kernel)(6, 20.0, d), kernel(6, 20.0, d), rtol=1e-12, atol=1e-12)


def test_cov_refusals():
    with pytest.raises(PSCUnsupportedCallError):
        run_rule(np.cov, data((2, 5)), fweights=np.ones(5, np.int64))
    with pytest.raises(PSCUnsupportedCallError):
        run_rule(np.cov, data((2, 5)).astype(np.complex128))
    with pytest.raises(PSCValueError):
        run_rule(np.cov, data((2, 2, 2)))
