"""np.gradient and np.geomspace on traced arrays (`runtime.numpy_rules.calculus`),
differential against NumPy: values, dtypes, shapes over float32/float64/int/complex, every
spacing form (static and traced), edge orders, negative and tuple axes; NumPy's errors as
PSC errors; grads against jax.grad of jnp.gradient and central differences."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from runtime import PSCError
from transpiler import grad, jit_ps
from ad_corpus.oracles import jax_x64  # noqa: F401,E402  (JAX in float64 while this module runs)


def _assert_same(actual, expected, rtol=1e-12):
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            _assert_same(a, e, rtol)
        return
    actual = np.asarray(actual)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * 10)


# --- gradient ------------------------------------------------------------------------------

X = np.array([0.0, 0.5, 1.5, 1.75, 3.0])           # non-uniform coordinates
Y = np.array([0.0, 2.0, 4.0, 6.0])                  # uniform coordinates
STATIC_SPACINGS = {"none": (), "scalar": (0.5,), "np32": (np.float32(0.25),),
                   "per_axis": (2, 0.5), "coords": (Y, X), "mixed": (Y, 3.0),
                   "int_coords": (np.array([0, 1, 3, 6]), 1)}


@jit_ps(static_argnames=("spacing", "axis", "edge_order"))
def _gradient_static(f, spacing, axis, edge_order):
    return np.gradient(f, *STATIC_SPACINGS[spacing], axis=axis, edge_order=edge_order)


@jit_ps(static_argnames=("axis", "edge_order"))
def _gradient_traced(f, a, c, axis, edge_order):
    return np.gradient(f, a, c, axis=axis, edge_order=edge_order)


@jit_ps
def _gradient_listed(f, t):
    return np.gradient(f, [0.0, t, 3.0, 3.5, 5.0])   # a list holding a traced coordinate


@jit_ps(static_argnames=("edge_order",))
def _gradient_scalar(f, h, edge_order):
    return np.gradient(f, h, edge_order=edge_order)


def _data(dtype, shape, seed=0):
    values = np.random.default_rng(seed).normal(size=shape) * 4
    if np.dtype(dtype).kind == "c":
        values = values + 1j * np.random.default_rng(seed + 1).normal(size=shape)
    return values.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.complex128])
@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_static_spacings(dtype, edge_order):
    f = _data(dtype, (4, 5))
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    for spacing, axis in [("none", None), ("scalar", None), ("np32", -1), ("per_axis", None),
                          ("coords", None), ("mixed", (0, -1)), ("int_coords", None)]:
        expected = np.gradient(f, *STATIC_SPACINGS[spacing], axis=axis, edge_order=edge_order)
        _assert_same(_gradient_static(f, spacing, axis, edge_order), expected, rtol)


def test_gradient_traced_spacings():
    f = _data(np.float64, (4, 5), seed=2)
    for a, c, edge_order in [(Y, X, 2), (np.float64(0.5), X, 1),   # uniform and not
                             (Y.astype(np.float32), np.float32(2.0), 2),
                             (np.array([0, 1, 3, 4]), np.arange(5), 1)]:   # int coordinates
        expected = np.gradient(f, a, c, edge_order=edge_order)
        _assert_same(_gradient_traced(f, a, c, None, edge_order), expected)
    _assert_same(_gradient_listed(f[0], 1.25), np.gradient(f[0], [0.0, 1.25, 3.0, 3.5, 5.0]))
    f32 = f.astype(np.float32)
    _assert_same(_gradient_traced(f32, Y, X, None, 1), np.gradient(f32, Y, X), 1e-5)
    for h, edge_order in ((0.5, 2), (np.float32(0.5), 1)):
        _assert_same(_gradient_scalar(f32, h, edge_order),
                     np.gradient(f32, h, edge_order=edge_order), 1e-5)


def test_gradient_axis_forms():
    f = _data(np.float64, (3, 4, 5), seed=3)
    for axis in (0, -1, (2, 0), (-2,), None):
        for edge_order in (1, 2):
            expected = np.gradient(f, axis=axis, edge_order=edge_order)
            _assert_same(_gradient_static(f, "none", axis, edge_order), expected)
    small = np.array([1.0, 4.0])   # two points: edge_order 1 only
    _assert_same(_gradient_static(small, "none", None, 1), np.gradient(small))
    five = np.arange(5.0) ** 2   # NumPy takes edge_order 0 as the second-order edges
    _assert_same(_gradient_static(five, "none", None, 0), np.gradient(five, edge_order=0))


@pytest.mark.parametrize("args, kwargs", [
    ((np.ones(2),), {"edge_order": 2}),
    ((np.ones(1),), {}),
    ((np.ones((3, 3)), 1.0, 2.0, 3.0), {}),
    ((np.ones(3), np.ones((3, 1))), {}),
    ((np.ones(3), np.arange(4.0)), {}),
    ((np.ones(4),), {"edge_order": 3}),
    ((np.ones((3, 3)),), {"axis": 2}),
    ((np.ones(2),), {"edge_order": 0}),
])
def test_gradient_errors_match_numpy(args, kwargs):
    with pytest.raises((ValueError, TypeError, IndexError)):
        np.gradient(*args, **kwargs)

    @jit_ps
    def traced(f):
        return np.gradient(f, *args[1:], **kwargs)
    with pytest.raises(PSCError):
        traced(args[0])


def _objective(f, x, edge_order):
    gx, gy = np.gradient(f, x, 0.5, edge_order=edge_order)
    return (gx * gx).sum() + (np.sin(gy)).sum()


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_grads(edge_order, jax_x64):
    f, x = _data(np.float64, (4, 5), seed=5), X[:4] * 1.3
    actual = grad(_objective)(f, x, edge_order)
    numeric = np.zeros_like(f)
    for index in np.ndindex(f.shape):
        up, down = f.copy(), f.copy()
        up[index] += 1e-6
        down[index] -= 1e-6
        numeric[index] = (_objective(up, x, edge_order)
                          - _objective(down, x, edge_order)) / 2e-6
    np.testing.assert_allclose(np.asarray(actual), numeric, rtol=1e-5, atol=1e-5)
    if edge_order == 2:
        return   # jnp.gradient has edge_order 1 only

    def jax_objective(v):
        gx, gy = jnp.gradient(v, jnp.asarray(x), 0.5)
        return (gx * gx).sum() + jnp.sin(gy).sum()
    np.testing.assert_allclose(np.asarray(actual), np.asarray(jax.grad(jax_objective)(f)),
                               rtol=1e-9, atol=1e-9)


# --- geomspace -----------------------------------------------------------------------------


@jit_ps(static_argnames=("num", "endpoint", "dtype", "axis"))
def _geomspace(start, stop, num, endpoint, dtype, axis):
    return np.geomspace(start, stop, num, endpoint, dtype, axis)


@pytest.mark.parametrize("start, stop", [
    (1.0, 1000.0), (1000.0, 1.0), (-1000.0, -1.0), (np.float32(2.0), np.float32(50.0)),
    (1j, 1000j), (-1 + 0j, 1 + 0j), (np.int64(3), np.int64(700)),
    (np.array([1.0, -2.0, 5.0]), np.array([100.0, -0.5, 5.0])),
    (np.array([[1.0], [2.0]]), np.array([3.0, 30.0, 300.0])),
])
def test_geomspace_matches_numpy(start, stop):
    for num, endpoint, dtype, axis in [(50, True, None, 0), (7, False, None, 0),
                                       (1, True, None, 0), (0, True, None, 0),
                                       (5, True, None, -1), (6, True, "float32", 0),
                                       (4, True, "complex128", 0)]:
        if np.iscomplexobj(start) and dtype == "float32":
            continue   # NumPy's ComplexWarning cast, not a case
        expected = np.geomspace(start, stop, num, endpoint, dtype, axis)
        rtol = 1e-5 if expected.dtype in (np.float32, np.complex64) else 1e-12
        _assert_same(_geomspace(start, stop, num, endpoint, dtype, axis), expected, rtol)


def test_geomspace_integer_dtype_and_float32_dtype():
    expected = np.geomspace(np.float32(1), np.float32(9), 9, True, "float32")
    _assert_same(_geomspace(np.float32(1), np.float32(9), 9, True, "float32", 0), expected, 1e-6)
    # an integer dtype truncates values that agree with NumPy's to a few ulps (XLA's log10
    # and pow are not libm's): a near-integer may land on either side (COVERAGE_NOTES)
    expected = np.geomspace(1.0, 256.0, 9, True, "int64")
    actual = np.asarray(_geomspace(1.0, 256.0, 9, True, "int64", 0))
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert np.abs(actual - expected).max() <= 1
    assert actual[0] == 1 and actual[-1] == 256   # the exact end points


def test_geomspace_zero_gives_nan():
    with pytest.raises(ValueError):
        np.geomspace(0.0, 10.0, 4)
    assert np.isnan(np.asarray(_geomspace(0.0, 10.0, 4, True, None, 0))).all()
    assert np.isnan(np.asarray(_geomspace(1.0, np.array([2.0, 0.0]), 3, True, None, 0))).all()


def test_geomspace_grad(jax_x64):
    def objective(s, t):
        return np.sum(np.geomspace(s, t, 6) ** 2)
    s, t = 1.5, 40.0
    ds, dt = grad(objective, argnums=(0, 1))(s, t)
    for actual, shift in ((ds, (1e-6, 0.0)), (dt, (0.0, 1e-6))):
        numeric = (objective(s + shift[0], t + shift[1])
                   - objective(s - shift[0], t - shift[1])) / 2e-6
        np.testing.assert_allclose(float(actual), numeric, rtol=1e-6)
