"""``A.T @ B`` on CPU: the left matrix is transposed behind an optimization barrier, so
that XLA:CPU multiplies with the contracted axis last in memory
(`primitives.contractions.lhs_transposed_first`).  Results against NumPy, gradients
against jax, the program's form in its text; never timed."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from runtime.primitives import contractions
from transpiler import grad, jit_ps

from ad_corpus.oracles import jax_x64  # noqa: F401  (the fixture)
from conftest import assert_same

MIN = contractions.TRANSPOSED_LHS_MIN


def gram(a):
    return a.T @ a


def cross_products(a, b):
    return a.T @ b, np.dot(a.T, b), a.T @ b[:, :3].T.T, np.transpose(a) @ b


def cross(a, b):
    return a.T @ b


def both_transposed(a, c):
    return a.T @ c.T


def data(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return (x * 4).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128,
                                   np.int32])
@pytest.mark.parametrize("k,m,n", [(MIN, MIN, MIN), (3, 5, 7), (70, 40, 30), (200, 1, 9)])
def test_transposed_products_match_numpy(dtype, k, m, n, rng):
    a, b = data(rng, (k, m), dtype), data(rng, (k, n), dtype)
    c = data(rng, (n, k), dtype)
    tol = 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12
    assert_same(jit_ps(gram)(a), gram(a), rtol=tol, atol=tol)
    if n >= 3:
        assert_same(jit_ps(cross_products)(a, b), cross_products(a, b), rtol=tol, atol=tol)
    assert_same(jit_ps(both_transposed)(a, c), both_transposed(a, c), rtol=tol, atol=tol)


def test_the_left_matrix_is_transposed_behind_a_barrier(rng):
    a, b = rng.standard_normal((60, 50)), rng.standard_normal((60, 40))
    f = jit_ps(cross)
    text = f.lower(a, b)
    assert text.count('"stablehlo.optimization_barrier"') == 1
    optimized = f.compile(a, b).as_hlo_text()
    assert "lhs_contracting_dims={1}" in optimized
    assert "lhs_contracting_dims={0}" not in optimized


@pytest.mark.parametrize("shapes", [((60, MIN - 1), (60, 40)), ((60, 50), (60,)),
                                    ((MIN - 1, 50), (MIN - 1, 40))])
def test_small_or_vector_products_are_left_alone(shapes, rng):
    a, b = (rng.standard_normal(s) for s in shapes)
    f = jit_ps(cross)
    assert_same(f(a, b), a.T @ b, rtol=1e-12)
    assert '"stablehlo.optimization_barrier"' not in f.lower(a, b)


def loss(a, b):
    return np.sum((a.T @ b) ** 2)


def test_gradients_through_transposed_products_match_jax(rng, jax_x64):
    a, b = rng.standard_normal((30, 20)), rng.standard_normal((30, 10))
    expected = jax.grad(lambda a, b: jnp.sum((a.T @ b) ** 2), argnums=(0, 1))(a, b)
    actual = grad(loss, argnums=(0, 1))(a, b)
    assert_same(actual, tuple(np.asarray(e) for e in expected), rtol=1e-10)
