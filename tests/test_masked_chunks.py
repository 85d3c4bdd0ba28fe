"""Sums and dot products of long 1-d windows with traced bounds go chunk by chunk
(`runtime.numpy_rules.masked_chunks`): results against plain NumPy, derivatives against
jax, and the staged form (a ``while`` over chunks) in the program text; never timed."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from runtime import vmap
from runtime.numpy_rules import masked_chunks
from transpiler import grad, jit_ps

from ad_corpus.oracles import jax_x64  # noqa: F401  (the fixture)
from conftest import assert_same
from test_masked_values import spmv   # NPBench's CSR row loop

CHUNK = masked_chunks.CHUNK
LONG = masked_chunks.CHUNKED_FROM


def window_reductions(a, w, lo, hi):
    return (np.sum(a[lo:hi]), a[lo:hi].sum(dtype=np.float32), a[lo:hi] @ w[lo:hi],
            np.dot(a[:hi], w[:hi]), np.sum(a[lo:]), a[hi:].sum())


BOUNDS = [(0, 0), (3, 5), (5, 3), (0, CHUNK), (1, CHUNK + 1), (7, 7 + 2 * CHUNK + 1),
          (-10, 10**6), (-1, None), (130, 900), (LONG - 1, LONG + 1)]


@pytest.mark.parametrize("n", [LONG - 1, LONG, 2000])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_window_sums_match_numpy(n, dtype, rng):
    a = (rng.standard_normal(n) * 10).astype(dtype)
    w = (rng.standard_normal(n) * 10).astype(dtype)
    f = jit_ps(window_reductions)
    for lo, hi in BOUNDS:
        hi = n if hi is None else hi
        lo, hi = np.int64(lo), np.int64(hi)
        assert_same(f(a, w, lo, hi), window_reductions(a, w, lo, hi), rtol=1e-5, atol=1e-9)


def test_bool_dot_of_windows_matches_numpy(rng):
    a, w = rng.random(LONG) < 0.01, rng.random(LONG) < 0.5
    f = jit_ps(lambda a, w, k: (a[k:] @ w[k:], np.sum(a[k:])))
    for k in (0, 300, LONG - 3, LONG):
        assert_same(f(a, w, np.int64(k)), (a[k:] @ w[k:], np.sum(a[k:])))


def trisolv(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


def test_csr_rows_match_numpy_and_go_chunk_by_chunk(rng):
    rows, nnz = 300, 2000
    counts = rng.multinomial(nnz - 400, np.ones(rows) / rows)
    counts[7] += 400   # one row longer than several chunks
    A_row = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    A_col = rng.integers(0, rows, nnz)
    A_val, x = rng.standard_normal(nnz), rng.standard_normal(rows)
    f = jit_ps(spmv)
    assert_same(f(A_row, A_col, A_val, x), spmv(A_row, A_col, A_val, x), rtol=1e-12)
    text = f.lower(A_row, A_col, A_val, x)
    assert text.count('"stablehlo.while"') == 2   # the row loop and one chunk loop


def test_triangular_solve_matches_numpy_reading_rows_in_chunks(rng):
    n = 700
    L = np.tril(rng.standard_normal((n, n))) + n * np.eye(n)
    b = rng.standard_normal(n)
    x, expected = np.zeros(n), np.zeros(n)
    f = jit_ps(trisolv)
    f(L, x, b)
    trisolv(L, expected, b)
    assert_same(x, expected, rtol=1e-12)
    text = f.lower(L, np.zeros(n), b)
    assert text.count('"stablehlo.while"') == 2
    # chunks are read from L itself: no row of L is copied out whole
    optimized = f.compile(L, np.zeros(n), b).as_hlo_text()
    assert f"f64[1,{CHUNK}]" in optimized and f"f64[1,{n}]" not in optimized


def test_short_windows_stay_one_masked_pass(rng):
    a = rng.standard_normal(LONG - 1)
    text = jit_ps(window_reductions).lower(a, a, np.int64(1), np.int64(9))
    assert '"stablehlo.while"' not in text


@pytest.mark.parametrize("begin,length", [(0, 0), (0, 1), (5, CHUNK), (5, CHUNK + 1),
                                          (LONG - 130, 130), (0, LONG)])
def test_reference_semantics(begin, length, rng):
    u, v = rng.standard_normal(LONG), rng.standard_normal(LONG)
    expected = masked_chunks.reference(np.dot, [u, v], begin, length)
    f = jit_ps(lambda u, v, lo, hi: u[lo:hi] @ v[lo:hi])
    actual = f(u, v, np.int64(begin), np.int64(begin + length))
    assert_same(actual, expected, rtol=1e-12)
    assert_same(actual, u[begin:begin + length] @ v[begin:begin + length], rtol=1e-12)


def weighted_prefix(a, w, k):
    return a[:k] @ w[:k] + np.sum(a[k:] ** 2)


def test_gradients_match_jax(rng, jax_x64):
    n, k = 900, 300
    a, w = rng.standard_normal(n), rng.standard_normal(n)

    def reference(a, w):
        inside = jnp.arange(n) < k
        return jnp.dot(jnp.where(inside, a, 0.0), w) + jnp.sum(jnp.where(inside, 0.0, a) ** 2)
    expected = jax.jit(jax.grad(reference, argnums=(0, 1)))(a, w)
    actual = grad(weighted_prefix, argnums=(0, 1))(a, w, np.int64(k))
    assert_same(actual, tuple(np.asarray(e) for e in expected), rtol=1e-12)


def test_vmap_over_window_bounds_matches_numpy(rng):
    n = 800
    a, w = rng.standard_normal(n), rng.standard_normal(n)
    ks = np.array([0, 1, 129, 500, 800], np.int64)
    batched = vmap(weighted_prefix, in_axes=(None, None, 0))(a, w, ks)
    assert_same(batched, np.array([weighted_prefix(a, w, k) for k in ks]), rtol=1e-12)
