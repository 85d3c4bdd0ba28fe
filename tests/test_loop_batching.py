"""A counted loop's matrix-vector products that depend only on the loop index and on values
the loop does not change are computed before the loop, for all iterations at once
(`runtime.loop_batching`): results against plain NumPy and against the same program with
nothing hoisted; which loops the finished program shows changed; derivatives against jax;
vmap.  Never timed."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from runtime import loop_batching
from runtime.ir import Region
from transpiler import grad, jit_ps, lax, vmap

from ad_corpus.oracles import jax_x64  # noqa: F401  (the fixture)
from conftest import assert_same


def covariance(M, float_n, data):   # NPBench's covariance kernel, as written there
    mean = np.mean(data, axis=0)
    data -= mean
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)
    return cov


def rows_from(A, B, start, step):
    n = A.shape[0]
    out = np.zeros((n, B.shape[1]))
    for i in range(start, start + step * n, step):   # a counter not 0, 1, 2, ...
        k = (i - start) // step
        out[k] = np.tanh(A[k] @ B) + i
    return out


def backwards(A, B):
    out = np.zeros((A.shape[0], B.shape[1]))
    for i in range(A.shape[0] - 1, -1, -1):
        out[i] = A[i] @ B
    return out


def power_iteration(A, x):
    for _ in range(20):           # the product reads the loop's state: stays in the loop
        x = A @ x
        x = x / np.linalg.norm(x)
    return x


def weighted_rows(W, X):
    total = 0.0
    for i in range(X.shape[0]):
        total = total + np.sum(np.sin(X[i] @ W) ** 2)
    return total


def fori_rows(A, B):
    def body(i, acc):
        return acc + (A[i] @ B) * i
    return lax.fori_loop(0, A.shape[0], body, np.zeros(B.shape[1]))


def loops_with_products(executable) -> list[int]:
    """For every ``while`` of the compiled program, the ``dot_general``s its body holds."""
    found = []

    def walk(region: Region):
        for op in region.operations:
            if op.name == "while":
                found.append(sum(_count(r, "dot_general") for r in op.regions))
            for inner in op.regions:
                walk(inner)
    walk(executable.computation.region)
    return found


def _count(region: Region, name: str) -> int:
    return sum((op.name == name) + sum(_count(r, name) for r in op.regions)
               for op in region.operations)


@pytest.fixture
def nothing_hoisted(monkeypatch):
    """Run the pass with a threshold no product reaches."""
    def off():
        monkeypatch.setattr(loop_batching, "MIN_MULTIPLY_ADDS", 1 << 62)
    return off


@pytest.mark.parametrize("M,N", [(3, 4), (40, 30), (64, 80)])
def test_covariance_matches_numpy(M, N, rng):
    data = rng.random((N, M))
    expected_data = data.copy()
    expected = covariance(M, float(N), expected_data)
    compiled = jit_ps(covariance, static_argnums=(0, 1))
    got_data = data.copy()
    assert_same(compiled(M, float(N), got_data), expected, rtol=1e-10, atol=1e-12)
    assert_same(got_data, expected_data)   # the in-place update written back
    products = loops_with_products(compiled.compile(M, float(N), data.copy()))
    big = N * M >= loop_batching.MIN_MULTIPLY_ADDS and M >= loop_batching.MIN_TRIPS
    assert products == ([0] if big else [1])


def test_same_as_the_loop_not_batched(rng, nothing_hoisted):
    A, B = rng.normal(size=(50, 400)), rng.normal(size=(400, 60))
    batched = jit_ps(rows_from, static_argnums=(2, 3))
    got = batched(A, B, 7, 3)
    assert loops_with_products(batched.compile(A, B, 7, 3)) == [0]
    nothing_hoisted()
    looped = jit_ps(rows_from, static_argnums=(2, 3))
    assert loops_with_products(looped.compile(A, B, 7, 3)) == [1]
    assert_same(got, looped(A, B, 7, 3), rtol=1e-12, atol=1e-12)
    assert_same(got, rows_from(A, B, 7, 3), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn", [backwards, fori_rows])
def test_counters_of_every_kind(fn, rng):
    A, B = rng.normal(size=(33, 300)), rng.normal(size=(300, 70))
    compiled = jit_ps(fn)
    assert_same(compiled(A, B), fn(A, B), rtol=1e-12, atol=1e-11)
    assert loops_with_products(compiled.compile(A, B)) == [0]


def test_products_of_the_loop_state_stay(rng):
    A, x = rng.normal(size=(200, 200)), rng.normal(size=200)
    compiled = jit_ps(power_iteration)
    assert_same(compiled(A, x), power_iteration(A, x), rtol=1e-9, atol=1e-12)
    assert loops_with_products(compiled.compile(A, x)) == [1]


def test_stacked_results_are_bounded(rng, monkeypatch):
    A, B = rng.normal(size=(40, 500)), rng.normal(size=(500, 50))
    monkeypatch.setattr(loop_batching, "MAX_STACKED_BYTES", 40 * 50 * 8 - 1)
    compiled = jit_ps(backwards)
    assert loops_with_products(compiled.compile(A, B)) == [1]
    assert_same(compiled(A, B), backwards(A, B), rtol=1e-12, atol=1e-11)


def test_too_few_iterations_or_too_small(rng):
    small = jit_ps(backwards)
    A, B = rng.normal(size=(loop_batching.MIN_TRIPS - 1, 500)), rng.normal(size=(500, 60))
    assert loops_with_products(small.compile(A, B)) == [1]
    A, B = rng.normal(size=(20, 8)), rng.normal(size=(8, 8))
    assert loops_with_products(small.compile(A, B)) == [1]
    assert_same(small(A, B), backwards(A, B), rtol=1e-12)


def test_gradient_against_jax(rng, jax_x64):
    W, X = rng.normal(size=(60, 300)) * 0.1, rng.normal(size=(25, 60))

    def reference(W, X):
        X = jnp.asarray(X)

        def body(i, total):
            return total + jnp.sum(jnp.sin(X[i] @ W) ** 2)
        return jax.lax.fori_loop(0, X.shape[0], body, 0.0)
    compiled = jit_ps(weighted_rows)
    assert_same(compiled(W, X), np.asarray(reference(W, X)), rtol=1e-10)
    got = jit_ps(grad(weighted_rows, argnums=(0, 1)))(W, X)
    expected = jax.grad(reference, argnums=(0, 1))(W, X)
    assert_same(got, tuple(np.asarray(e) for e in expected), rtol=1e-9, atol=1e-11)


def test_under_vmap(rng):
    Ws, X = rng.normal(size=(3, 60, 300)) * 0.1, rng.normal(size=(25, 60))
    compiled = jit_ps(vmap(weighted_rows, in_axes=(0, None)))
    assert_same(compiled(Ws, X), np.array([weighted_rows(W, X) for W in Ws]), rtol=1e-10)


def test_vmapped_dynamic_slice_of_one_array_clamps(rng, jax_x64):
    x = rng.normal(size=(10, 6))
    starts = np.array([-30, -3, 0, 4, 7, 9, 100])

    def window(x, i):
        return lax.dynamic_slice(x, (i, 2), (4, 3))
    got = jit_ps(vmap(window, in_axes=(None, 0)))(x, starts)
    expected = [jax.lax.dynamic_slice(x, (i, 2), (4, 3)) for i in starts]
    assert_same(got, np.stack([np.asarray(e) for e in expected]))
