"""The SVD family of numpy.linalg (runtime/numpy_rules/svd.py, the ``svd`` primitive of
runtime/primitives/svd.py) against NumPy: svd, svdvals, matrix_rank, pinv, lstsq, cond,
norm (ord 2, -2, 'nuc'), matrix_norm and vector_norm over float32/64, complex64/128 and
integer inputs, stacks, tall/wide/square and empty matrices.  Singular vectors are
compared up to sign/phase (reconstruction, orthonormality, |U| against NumPy's).
Derivatives against jax.grad (float64) and central differences; vmap against a loop."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ad_corpus.oracles import jax_x64  # noqa: F401  (a fixture)
from conftest import assert_same, run_rule
from runtime.errors import (PSCShapeError, PSCTypeError, PSCUnsupportedCallError,
                            PSCValueError)
from transpiler import grad, jit_ps, jvp, vmap

F32, F64, C64, C128, I64 = np.float32, np.float64, np.complex64, np.complex128, np.int64
DTYPES = [F32, F64, C64, C128, I64]


def data(shape, dtype=F64, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iub":
        return rng.integers(-4, 5, shape).astype(dtype)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def tol(dtype):
    single = np.dtype(dtype) in (np.dtype(F32), np.dtype(C64))
    return dict(rtol=2e-4, atol=2e-5) if single else dict(rtol=1e-10, atol=1e-11)


def check(fn, *args, **kwargs):
    expected = fn(*args, **kwargs)
    actual = run_rule(fn, *args, **kwargs)
    dtype = np.asarray(expected[0] if isinstance(expected, tuple) else expected).dtype
    assert_same(actual, expected, **tol(dtype))


# --- svd -------------------------------------------------------------------------------------

SHAPES = [(4, 3), (3, 4), (3, 3), (1, 4), (2, 4, 3), (2, 1, 3, 5)]


def _check_factors(a, got, want, full):
    u, s, vh = (np.asarray(x) for x in got)
    for g, w in zip((u, s, vh), want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
    t = tol(s.dtype)
    np.testing.assert_allclose(s, want.S, **t)
    k = s.shape[-1]
    a = a.astype(u.dtype)
    rebuilt = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
    np.testing.assert_allclose(rebuilt, a, rtol=10 * t["rtol"], atol=10 * t["atol"])
    for q in (u, np.swapaxes(vh, -1, -2)):
        gram = np.swapaxes(q.conj(), -1, -2) @ q
        np.testing.assert_allclose(gram, np.broadcast_to(np.eye(q.shape[-1]), gram.shape),
                                   atol=10 * t["atol"] + 1e-5 * (t["rtol"] > 1e-6))
    # distinct singular values: the vectors agree with NumPy's up to sign/phase
    np.testing.assert_allclose(np.abs(u[..., :k]), np.abs(want.U[..., :k]), **t)
    np.testing.assert_allclose(np.abs(vh[..., :k, :]), np.abs(want.Vh[..., :k, :]), **t)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_svd_matches_numpy_up_to_signs(dtype, shape):
    a = data(shape, dtype)
    for full in (True, False):
        got = run_rule(np.linalg.svd, a, full_matrices=full)
        assert type(got).__name__ == "SVDResult"
        _check_factors(a, got, np.linalg.svd(a, full_matrices=full), full)
    check(np.linalg.svd, a, compute_uv=False)
    check(np.linalg.svdvals, a)


def test_svd_result_fields_under_jit():
    @jit_ps
    def f(a):
        result = np.linalg.svd(a, full_matrices=False)
        return result.U, result.S, result.Vh
    a = data((5, 3))
    _check_factors(a, f(a), np.linalg.svd(a, full_matrices=False), False)


@pytest.mark.parametrize("dtype", [F64, C128, F32])
def test_svd_hermitian_reads_the_lower_triangle(dtype):
    a = data((2, 4, 4), dtype)
    h = np.tril(a, -1) + np.swapaxes(np.tril(a, -1), -1, -2).conj()
    h = h + np.real(np.diagonal(a, axis1=-2, axis2=-1))[..., None] * np.eye(4)
    h = h.astype(dtype)
    a = a + np.triu(np.full((4, 4), 9.0), 1).astype(dtype)   # ignored, as by NumPy's eigh
    want = np.linalg.svd(a, hermitian=True)
    u, s, vh = (np.asarray(x) for x in run_rule(np.linalg.svd, a, hermitian=True))
    assert_same(s, want.S, **tol(dtype))
    assert u.dtype == want.U.dtype and u.shape == want.U.shape
    np.testing.assert_allclose((u * s[..., None, :]) @ vh, h, rtol=1e-3, atol=1e-4)
    check(np.linalg.svd, a, compute_uv=False, hermitian=True)
    check(np.linalg.matrix_rank, a, hermitian=True)
    check(np.linalg.pinv, a, hermitian=True)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 3), (0, 0), (0, 3, 3), (0, 2, 3)])
def test_empty_matrices_match_numpy(shape):
    a = np.zeros(shape)
    for full in (True, False):
        check(np.linalg.svd, a, full_matrices=full)
    check(np.linalg.svd, a, compute_uv=False)
    check(np.linalg.matrix_rank, a)
    check(np.linalg.pinv, a)
    check(np.linalg.pinv, a.astype(I64))        # empty pinv keeps the input dtype
    check(np.linalg.norm, a, ord=2, axis=(-2, -1))
    check(np.linalg.norm, a, ord="nuc", axis=(-2, -1))


# --- norm, matrix_norm, vector_norm --------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_norm_orders_match_numpy(dtype):
    a = data((2, 3, 4), dtype)
    for ord in (None, "fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf):
        check(np.linalg.matrix_norm, a, ord="fro" if ord is None else ord)
        check(np.linalg.norm, a, ord=ord, axis=(2, 0))
        check(np.linalg.norm, a, ord=ord, axis=(-1, -2), keepdims=True)
    check(np.linalg.norm, data((3, 3), dtype), ord=2)
    check(np.linalg.matrix_norm, data((3, 3), dtype), ord="nuc", keepdims=True)


def test_norm_2_errors_match_numpy():
    with pytest.raises(TypeError):
        np.linalg.norm(np.eye(2, dtype=np.float16), 2)
    with pytest.raises(PSCTypeError):
        run_rule(np.linalg.norm, np.eye(2, dtype=np.float16), ord=2)
    with pytest.raises(ValueError):
        np.linalg.norm(np.zeros((0, 3)), -2)
    with pytest.raises(PSCValueError):
        run_rule(np.linalg.norm, np.zeros((0, 3)), ord=-2)


@pytest.mark.parametrize("dtype", [F32, F64, C128, I64])
def test_vector_norm_matches_numpy(dtype):
    x = data((2, 3, 4), dtype)
    for ord in (2, 1, np.inf, -np.inf, 0, 3, -1):
        check(np.linalg.vector_norm, x, ord=ord)
        check(np.linalg.vector_norm, x, axis=1, ord=ord, keepdims=True)
        check(np.linalg.vector_norm, x, axis=(0, 2), ord=ord)
    check(np.linalg.vector_norm, x, axis=(-1, 0), keepdims=True)
    check(np.linalg.vector_norm, data((), dtype))


# --- cond ------------------------------------------------------------------------------------

COND_PS = [None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf]


@pytest.mark.parametrize("dtype", DTYPES)
def test_cond_every_p_matches_numpy(dtype):
    a = data((2, 3, 3), dtype) + 3 * np.eye(3, dtype=dtype)
    for p in COND_PS:
        check(np.linalg.cond, a, p=p)
    check(np.linalg.cond, data((3, 5), dtype))      # p None/2/-2 accept rectangles
    check(np.linalg.cond, data((4, 2), dtype), p=-2)


def test_cond_singular_and_nan_matrices():
    # singular: inf (or a huge ratio where rounding leaves s_min > 0)
    a = np.stack([np.ones((3, 3)), np.eye(3), np.zeros((3, 3))])
    for p in COND_PS:
        with np.errstate(all="ignore"):
            want = np.linalg.cond(a, p)
        got = np.asarray(run_rule(np.linalg.cond, a, p=p))
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got[1] == pytest.approx(want[1])
        for i in (0, 2):   # (p=-2: s_min/s_max, 0 or tiny; 0/0 becomes inf)
            for r in (got[i], want[i]):
                assert r > 1e15 or (p == -2 and r < 1e-15), (p, i, got[i], want[i])
    # a NaN in the input stays NaN (NumPy's SVD raises LinAlgError for p None, 2, -2:
    # the compiled program gives NaN there, see runtime/numpy_rules/svd.py)
    a = np.stack([np.full((2, 2), np.nan), np.eye(2)])
    for p in ("fro", 1, np.inf, None):
        got = np.asarray(run_rule(np.linalg.cond, a, p=p))
        assert np.isnan(got[0]) and got[1] == pytest.approx(2.0 if p == "fro" else 1.0)


def test_cond_errors():
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cond(np.zeros((0, 3)))
    with pytest.raises(PSCValueError):
        run_rule(np.linalg.cond, np.zeros((0, 3)))
    with pytest.raises(PSCShapeError):
        run_rule(np.linalg.cond, np.ones((2, 3)), p=1)


# --- matrix_rank -----------------------------------------------------------------------------

def _low_rank(shape, rank, dtype=F64, seed=3):
    left = data(shape[:-1] + (rank,), dtype, seed)
    return (left @ data(shape[:-2] + (rank, shape[-1]), dtype, seed + 1)).astype(dtype)


@jit_ps
def _rank_with_rtol(a, r):
    return np.linalg.matrix_rank(a, rtol=r)


@jit_ps
def _lstsq_traced_rcond(a, r, c):
    return np.linalg.lstsq(a, r, c)


@pytest.mark.parametrize("dtype", [F32, F64, C64, C128])
def test_matrix_rank_matches_numpy(dtype):
    a = np.concatenate([_low_rank((2, 5, 4), 2, dtype), _low_rank((1, 5, 4), 4, dtype)])
    check(np.linalg.matrix_rank, a)
    check(np.linalg.matrix_rank, a, 1e-3)
    check(np.linalg.matrix_rank, a, rtol=0.5)
    check(np.linalg.matrix_rank, a, np.array([1e-3, 1e3, 1e-3]))     # tol per matrix
    assert_same(_rank_with_rtol(a, np.array([0.5, 1e-8, 0.9])),
                np.linalg.matrix_rank(a, rtol=np.array([0.5, 1e-8, 0.9])))
    check(np.linalg.matrix_rank, np.round(np.real(a)).astype(I64))


def test_matrix_rank_of_vectors_and_errors():
    for x in (np.zeros(3), np.array([0.0, 2.0]), np.float64(3.0)):
        assert int(np.asarray(run_rule(np.linalg.matrix_rank, x))) == np.linalg.matrix_rank(x)
    with pytest.raises(PSCValueError):
        run_rule(np.linalg.matrix_rank, np.eye(2), 1e-3, rtol=1e-3)


# --- pinv ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
def test_pinv_matches_numpy(dtype, shape):
    check(np.linalg.pinv, data(shape, dtype))


def test_pinv_cutoffs_match_numpy():
    a = np.concatenate([_low_rank((2, 5, 4), 2), _low_rank((1, 5, 4), 4)])
    check(np.linalg.pinv, a)
    check(np.linalg.pinv, a, 0.3)
    check(np.linalg.pinv, a, np.array([0.3, 1e-15, 0.9]))
    check(np.linalg.pinv, a, rtol=None)
    check(np.linalg.pinv, a, rtol=0.2)
    check(np.linalg.pinv, _low_rank((4, 4), 2, F32), 1e-3)
    with pytest.raises(PSCValueError):
        run_rule(np.linalg.pinv, a, 0.1, rtol=0.1)
    with pytest.raises(PSCShapeError):
        run_rule(np.linalg.pinv, np.ones(3))


# --- lstsq -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("a_shape, b_shape", [((5, 3), (5,)), ((5, 3), (5, 2)), ((3, 3), (3,)),
                                              ((2, 4), (2, 3)), ((4, 1), (4, 1))])
def test_lstsq_matches_numpy(dtype, a_shape, b_shape):
    check(np.linalg.lstsq, data(a_shape, dtype), data(b_shape, dtype, seed=1))


def test_lstsq_rcond_rank_and_mixed_dtypes():
    a, rhs = _low_rank((6, 4), 2), data((6, 2), seed=1)
    x, residuals, rank, s = run_rule(np.linalg.lstsq, a, rhs)
    want = np.linalg.lstsq(a, rhs)
    assert_same([x, rank, s], [want[0], want[2], want[3]], rtol=1e-8, atol=1e-10)
    # NumPy's residuals of a rank-deficient tall a are empty (a shape known only at run
    # time): the compiled program keeps the full-rank shape and gives NaN
    assert want[1].shape == (0,) and np.isnan(np.asarray(residuals)).all()
    x, _, rank, s = _lstsq_traced_rcond(a, rhs, 0.5)
    want = np.linalg.lstsq(a, rhs, 0.5)
    assert_same([x, rank, s], [want[0], want[2], want[3]], rtol=1e-8, atol=1e-10)
    full = data((6, 4))
    check(np.linalg.lstsq, full, rhs, 1e-3)
    check(np.linalg.lstsq, full, rhs, -1)
    assert_same(_lstsq_traced_rcond(full, rhs, -1.0), np.linalg.lstsq(full, rhs, -1.0))
    check(np.linalg.lstsq, data((5, 2), F32), data((5,), I64, seed=1))
    check(np.linalg.lstsq, data((5, 2), I64), data((5,), C64, seed=1))


def test_lstsq_empty_and_errors():
    check(np.linalg.lstsq, np.zeros((0, 3)), np.zeros((0, 2)))
    check(np.linalg.lstsq, np.zeros((3, 0)), np.ones(3))
    check(np.linalg.lstsq, data((4, 2)), np.zeros((4, 0)))
    with pytest.raises(PSCShapeError):
        run_rule(np.linalg.lstsq, np.ones((3, 2)), np.ones(4))
    with pytest.raises(PSCShapeError):
        run_rule(np.linalg.lstsq, np.ones((2, 3, 2)), np.ones(3))


# --- derivatives -----------------------------------------------------------------------------

def _jax_fn(loss):
    """``loss`` written with ``np``: the same expression in jax.numpy."""
    return lambda *a: loss(jnp, *a)


def _against_jax(loss, *args, rtol=1e-8, atol=1e-10):
    argnums = tuple(range(len(args)))
    want = jax.grad(_jax_fn(loss), argnums=argnums)(*args)
    got = grad(lambda *a: loss(np, *a), argnums=argnums)(*args)
    for g, w in zip(got, want):
        assert_same(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


def _against_central_differences(loss, a, step=1e-6, seed=9):
    t = data(a.shape, a.dtype, seed)
    g = np.asarray(grad(lambda x: loss(np, x))(a))
    slope = (loss(np, a + step * t) - loss(np, a - step * t)) / (2 * step)
    np.testing.assert_allclose(np.real(np.vdot(np.conj(g), t)), slope, rtol=1e-6, atol=1e-8)


W = data((5, 5), seed=7)


def _svd_loss(np_, a):
    u, s, vh = np_.linalg.svd(a, full_matrices=False)
    k = s.shape[-1]
    return (np_.sum(s * W[0, :k]) + np_.sum(np_.abs(u) ** 2 * W[:u.shape[-2], :k])
            + np_.sum(np_.abs(vh) ** 2 * W[:k, :vh.shape[-1]]))


def _phase_free_loss(np_, a):   # |u_ij|² and s: phase-free for complex a too
    u, s, vh = np_.linalg.svd(a, full_matrices=False)
    k = s.shape[-1]
    return np_.sum(np_.abs(u * s[..., None, :]) ** 2 * W[:u.shape[-2], :k]) + \
        np_.sum(np_.abs(vh) ** 2 * W[:k, :vh.shape[-1]])


@pytest.mark.usefixtures("jax_x64")
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 3, 2)])
def test_grad_of_svd_matches_jax_and_central_differences(shape):
    a = data(shape)
    _against_jax(_svd_loss, a)
    _against_central_differences(_svd_loss, a)
    values = lambda np_, a: np_.sum(np_.linalg.svd(a, compute_uv=False) * W[0, :min(shape[-2:])])  # noqa: E731,E501
    _against_jax(values, a)
    _against_jax(lambda np_, a: np_.sum(np_.linalg.svdvals(a) ** 3), a)


@pytest.mark.usefixtures("jax_x64")
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
def test_grad_of_complex_svd_matches_jax(shape):
    a = data(shape, C128)
    _against_jax(_phase_free_loss, a)
    _against_central_differences(_phase_free_loss, a)
    _against_jax(lambda np_, a: np_.sum(np_.linalg.svd(a, compute_uv=False) ** 2), a)


def test_jvp_of_svd_matches_central_differences():
    a, t = data((4, 3)), data((4, 3), seed=2)

    def f(a):
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return s, u * u, vh * vh
    _, tangent = jvp(f, (a,), (t,))
    step = 1e-6
    for got, plus, minus in zip(tangent, f(a + step * t), f(a - step * t)):
        np.testing.assert_allclose(got, (plus - minus) / (2 * step), rtol=1e-6, atol=1e-8)


def test_full_matrices_derivatives():
    a = data((4, 3))
    # S alone from a full SVD: reverse mode works (the extra columns get no cotangent)
    got = grad(lambda a: np.sum(np.linalg.svd(a)[1]))(a)
    want = grad(lambda a: np.sum(np.linalg.svd(a, full_matrices=False)[1]))(a)
    assert_same(np.asarray(got), np.asarray(want))
    with pytest.raises(PSCUnsupportedCallError, match="full_matrices"):
        grad(lambda a: np.sum(np.linalg.svd(a)[0]))(a)
    with pytest.raises(PSCUnsupportedCallError, match="full_matrices"):
        jvp(lambda a: np.linalg.svd(a)[1], (a,), (a,))
    square = data((3, 3))   # square: full and reduced are one decomposition
    _against_central_differences(lambda np_, a: np_.sum(np_.linalg.svd(a)[0] ** 2 * W[:3, :3]),
                                 square)


@pytest.mark.usefixtures("jax_x64")
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
def test_grad_of_pinv_matches_jax(shape):
    loss = lambda np_, a: np_.sum(np_.linalg.pinv(a) * W[:shape[-1], :shape[-2]])  # noqa: E731
    a = data(shape)
    _against_jax(loss, a)
    _against_central_differences(loss, a)


@pytest.mark.usefixtures("jax_x64")
def test_grad_of_pinv_at_repeated_and_dropped_singular_values_matches_jax():
    # an orthogonal matrix (all s = 1) and a rank-2 one: jax's pinv rule is finite there
    q = np.linalg.qr(data((4, 4)))[0]
    for a in (q, _low_rank((4, 4), 2)):
        _against_jax(lambda np_, a: np_.sum(np_.linalg.pinv(a) * W[:4, :4]), a,
                     rtol=1e-7, atol=1e-9)
    _against_jax(lambda np_, a: np_.sum(np_.abs(np_.linalg.pinv(a)) ** 2),
                 data((3, 2), C128))


@pytest.mark.usefixtures("jax_x64")
@pytest.mark.parametrize("a_shape, b_shape", [((5, 3), (5,)), ((5, 3), (5, 2)), ((2, 4), (2,))])
def test_grad_of_lstsq_matches_jax(a_shape, b_shape):
    a, rhs = data(a_shape), data(b_shape, seed=1)

    def loss(np_, a, r):
        return np_.sum(np_.linalg.lstsq(a, r)[0] * W[:a_shape[1], 0].reshape(
            (-1,) + (1,) * (len(b_shape) - 1)))
    _against_jax(loss, a, rhs)
    _against_central_differences(lambda np_, x: loss(np_, x, rhs), a)


@pytest.mark.usefixtures("jax_x64")
def test_grad_of_spectral_and_nuclear_norms_and_cond_match_jax():
    a = data((2, 4, 3))
    for ord in (2, -2, "nuc"):
        _against_jax(lambda np_, a: np_.sum(np_.linalg.norm(a, ord, (-2, -1))), a)
    _against_jax(lambda np_, a: np_.sum(np_.linalg.matrix_norm(a, ord="nuc")), a)
    _against_jax(lambda np_, a: np_.sum(np_.linalg.cond(a)), a)
    _against_central_differences(lambda np_, a: np_.sum(np_.linalg.norm(a, 2, (-2, -1))), a)


# --- vmap ------------------------------------------------------------------------------------

def test_vmap_matches_a_loop():
    stack = data((3, 4, 3))

    def f(a):
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return s, np.abs(u), np.linalg.pinv(a), np.linalg.norm(a, 2), np.linalg.cond(a)
    batched = vmap(f)(stack)
    looped = [f(a) for a in stack]
    for i, got in enumerate(batched):
        assert_same(np.asarray(got), np.stack([np.asarray(r[i]) for r in looped]),
                    rtol=1e-10, atol=1e-12)
    want = np.stack([np.linalg.lstsq(a, data((4,)))[0] for a in stack])
    assert_same(np.asarray(vmap(lambda a, r: np.linalg.lstsq(a, r)[0],
                                in_axes=(0, None))(stack, data((4,)))), want)
