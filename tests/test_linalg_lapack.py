"""np.linalg.solve, inv and cholesky (jaxlib's LAPACK kernels, runtime/primitives/linalg.py)
against NumPy: values, dtypes and shapes for each LAPACK dtype, stacked and broadcast
inputs, NumPy 2's rule for b, integer promotion; singular matrices (NaN, or an error under
checks="nan"); user errors; derivatives against jax.grad (the oracle only)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ad_corpus.oracles import jax_x64  # noqa: F401  (a fixture)
from conftest import assert_same, run_rule
from runtime.errors import (PSCFloatingPointError, PSCShapeError, PSCTypeError,
                            PSCUnsupportedCallError)
from transpiler import grad, jit_ps

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def matrix(shape, dtype=np.float64, seed=0):
    """Well-conditioned random square matrices (diagonally dominant)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return (x + 3 * shape[-1] ** 0.5 * np.eye(shape[-1])).astype(dtype)


def data(shape, dtype=np.float64, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def positive_definite(shape, dtype=np.float64, seed=2):
    x = data(shape, dtype, seed)
    return (x @ np.swapaxes(x.conj(), -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def tol(dtype):
    single = np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.complex64))
    return dict(rtol=1e-4, atol=1e-5) if single else dict(rtol=1e-10, atol=1e-12)


def check(fn, *args, **kwargs):
    expected = fn(*args, **kwargs)
    actual = run_rule(fn, *args, **kwargs)
    assert_same(actual, expected, **tol(np.asarray(expected).dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("a_shape, b_shape", [
    ((4, 4), (4,)), ((4, 4), (4, 3)), ((2, 4, 4), (2, 4, 1)), ((3, 2, 4, 4), (3, 2, 4, 2)),
    ((2, 3, 3), (3,)),                 # a vector b solves every matrix of the stack
    ((2, 3, 3), (3, 5)),               # b broadcast against the stack
    ((5, 1, 3, 3), (2, 3, 1)),         # both stacks broadcast
])
def test_solve_matches_numpy(dtype, a_shape, b_shape):
    check(np.linalg.solve, matrix(a_shape, dtype), data(b_shape, dtype))


def test_solve_numpy2_rule_for_b():
    # b of shape (2, 3) with a (2, 3, 3) is a (3-row) matrix stack in NumPy 2: a mismatch
    a, b = matrix((2, 3, 3)), data((2, 3))
    with pytest.raises(ValueError):
        np.linalg.solve(a, b)
    with pytest.raises(PSCShapeError):
        run_rule(np.linalg.solve, a, b)
    check(np.linalg.solve, a, data((2, 3, 1)))


@pytest.mark.parametrize("a_dtype, b_dtype", [
    (np.int64, np.int64), (np.int32, np.float32), (np.float32, np.float64),
    (np.float32, np.complex64), (np.int8, np.float32), (np.bool_, np.float32),
])
def test_solve_common_type(a_dtype, b_dtype):
    a = np.array([[3, 1], [1, 2]], dtype=a_dtype)
    a[...] = np.eye(2, dtype=a_dtype) if a_dtype == np.bool_ else a
    check(np.linalg.solve, a, np.array([1, 2]).astype(b_dtype))


@pytest.mark.parametrize("dtype", DTYPES + [np.int64])
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (3, 4, 4), (2, 2, 3, 3)])
def test_inv_matches_numpy(dtype, shape):
    a = matrix(shape) if dtype == np.int64 else matrix(shape, dtype)
    if dtype == np.int64:
        a = np.round(a).astype(np.int64) + 3 * np.eye(shape[-1], dtype=np.int64)
    check(np.linalg.inv, a)


def test_empty_matrices():
    check(np.linalg.inv, np.zeros((0, 0)))
    check(np.linalg.inv, np.zeros((0, 3, 3)))
    check(np.linalg.solve, np.zeros((0, 0)), np.zeros((0,)))
    check(np.linalg.solve, matrix((3, 3)), np.zeros((3, 0)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5)])
def test_cholesky_matches_numpy(dtype, shape):
    check(np.linalg.cholesky, positive_definite(shape, dtype))


def test_cholesky_reads_only_the_lower_triangle():
    a = positive_definite((4, 4))
    a[np.triu_indices(4, 1)] = 99.0   # garbage above the diagonal: NumPy ignores it
    check(np.linalg.cholesky, a)
    a = positive_definite((4, 4))
    a[np.tril_indices(4, -1)] = 99.0   # upper=True reads the upper triangle
    check(np.linalg.cholesky, a, upper=True)
    check(np.linalg.cholesky, np.eye(3, dtype=np.int32))


@pytest.mark.parametrize("fn", [np.tril, np.triu])
@pytest.mark.parametrize("shape, k", [((4, 4), 0), ((3, 5), 1), ((2, 4, 3), -1), ((4,), 0),
                                      ((3, 3), 5), ((3, 3), -4)])
def test_tril_triu_match_numpy(fn, shape, k):
    check(fn, data(shape, np.float32), k=k)
    check(fn, np.arange(np.prod(shape)).reshape(shape), k=k)


def test_cholesky2_kernel_style():
    def kernel(A):
        return np.linalg.cholesky(A) + np.triu(A, k=1)
    a = positive_definite((6, 6))
    assert_same(jit_ps(kernel)(a), kernel(a), **tol(np.float64))


def test_contour_integral_style():
    def kernel(Ham, z, Y):
        Tz = np.zeros((4, 4), dtype=np.complex128)
        for n in range(3):
            Tz += np.power(z, 3 / 2 - n) * Ham[n]
        return np.linalg.inv(Tz), np.linalg.solve(Tz, Y)
    ham = np.stack([matrix((4, 4), np.complex128, seed=s) for s in range(3)])
    args = (ham, np.complex128(0.7 + 0.2j), data((4, 2), np.complex128))
    assert_same(jit_ps(kernel)(*args), kernel(*args), **tol(np.complex128))


@pytest.mark.parametrize("dtype", DTYPES + [np.int64])
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 4, 4), (0, 0), (2, 0, 0)])
def test_det_and_slogdet_match_numpy(dtype, shape):
    a = data(shape, dtype) * 3
    if dtype == np.int64:
        a = np.round(data(shape) * 3).astype(np.int64)
    check(np.linalg.det, a)
    got, want = run_rule(np.linalg.slogdet, a), np.linalg.slogdet(a)
    assert_same(list(got), list(want), **tol(want.sign.dtype))


def test_slogdet_result_fields_and_singular_matrices():
    def f(a):
        result = np.linalg.slogdet(a)
        return result.sign, result.logabsdet, np.linalg.det(a)
    a = np.stack([np.ones((3, 3)), np.diag([2.0, -1.0, 3.0])])
    assert_same(jit_ps(f)(a), f(a))


def test_det_derivative_is_det_times_inverse_transpose():
    # (more derivatives of det/slogdet: tests/test_linalg_decompositions.py)
    a = matrix((3, 3))
    got = grad(lambda a: np.linalg.det(a))(a)
    assert_same(np.asarray(got), np.linalg.det(a) * np.linalg.inv(a).T, **tol(np.float64))


# --- what NumPy raises at run time -----------------------------------------------------------

def test_singular_matrix_gives_nan_for_that_matrix_only():
    a = np.stack([np.ones((3, 3)), np.eye(3)])   # the first is singular
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.inv(a)
    got = np.asarray(run_rule(np.linalg.inv, a))
    assert np.isnan(got[0]).all()
    np.testing.assert_array_equal(got[1], np.eye(3))
    x = np.asarray(run_rule(np.linalg.solve, np.zeros((2, 2)), np.ones(2)))
    assert np.isnan(x).all()


def test_not_positive_definite_gives_nan():
    a = np.stack([-np.eye(2), np.eye(2)])
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(a)
    got = np.asarray(run_rule(np.linalg.cholesky, a))
    assert np.isnan(got[0]).all()
    np.testing.assert_array_equal(got[1], np.eye(2))


def test_singular_matrix_under_nan_checks_raises():
    def f(a):
        return np.linalg.inv(a)
    with pytest.raises(PSCFloatingPointError, match="inv"):
        jit_ps(f, checks=("nan",))(np.ones((3, 3)))
    assert_same(jit_ps(f, checks=("nan",))(np.eye(3) * 2), f(np.eye(3) * 2))


@pytest.mark.parametrize("fn, args, error", [
    (np.linalg.inv, (np.ones((2, 3)),), PSCShapeError),
    (np.linalg.inv, (np.ones(3),), PSCShapeError),
    (np.linalg.cholesky, (np.ones((3, 2)),), PSCShapeError),
    (np.linalg.solve, (np.ones((2, 3)), np.ones(2)), PSCShapeError),
    (np.linalg.solve, (np.eye(3), np.ones(2)), PSCShapeError),
    (np.linalg.inv, (np.eye(2, dtype=np.float16),), PSCTypeError),
])
def test_user_errors_match_numpy_kind(fn, args, error):
    with pytest.raises((ValueError, TypeError)) as numpy_error:
        fn(*args)
    with pytest.raises(error) as ours:
        run_rule(fn, *args)
    assert isinstance(ours.value, type(numpy_error.value).__mro__[1]) or \
        isinstance(ours.value, (ValueError, TypeError))


def test_complex_upper_cholesky_is_refused():
    with pytest.raises(PSCUnsupportedCallError):
        run_rule(np.linalg.cholesky, positive_definite((2, 2), np.complex128), upper=True)


# --- derivatives (batching: tests/primitive_cases.py) ---------------------------------------------------------------------

def _weights(shape, seed=5):
    return data(shape, np.float64, seed)


@pytest.mark.parametrize("shape_b", [(4,), (4, 2)])
@pytest.mark.usefixtures("jax_x64")
def test_grad_of_solve_matches_jax(shape_b):
    a, b, w = matrix((4, 4)), data(shape_b), _weights(shape_b)

    def loss(a, b):
        return np.sum(np.linalg.solve(a, b) * w)

    def jax_loss(a, b):
        return jnp.sum(jnp.linalg.solve(a, b) * w)
    want = jax.grad(jax_loss, argnums=(0, 1))(a, b)
    got = grad(loss, argnums=(0, 1))(a, b)
    for g, e in zip(got, want):
        assert_same(np.asarray(g), np.asarray(e), rtol=1e-9, atol=1e-11)


@pytest.mark.usefixtures("jax_x64")
def test_grad_of_inv_matches_jax():
    a, w = matrix((2, 3, 3)), _weights((2, 3, 3))
    want = jax.grad(lambda a: jnp.sum(jnp.linalg.inv(a) ** 2 * w))(a)
    got = grad(lambda a: np.sum(np.linalg.inv(a) ** 2 * w))(a)
    assert_same(np.asarray(got), np.asarray(want), rtol=1e-9, atol=1e-11)


@pytest.mark.usefixtures("jax_x64")
def test_grad_of_cholesky_matches_jax_on_the_lower_triangle():
    a, w = positive_definite((4, 4)), np.tril(_weights((4, 4)))

    def jax_loss(a):   # NumPy reads the lower triangle: give jax exactly that matrix
        low = jnp.tril(a)
        full = low + jnp.tril(a, -1).T
        return jnp.sum(jax.lax.linalg.cholesky(full, symmetrize_input=False) * w)
    want = jax.grad(jax_loss)(a)
    got = grad(lambda a: np.sum(np.linalg.cholesky(a) * w))(a)
    assert_same(np.asarray(got), np.asarray(want), rtol=1e-8, atol=1e-10)
