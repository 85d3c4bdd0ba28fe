"""The SVD family of numpy.linalg (runtime/numpy_rules/svd.py, the ``svd`` primitive of
runtime/primitives/svd.py) against NumPy: svd, svdvals, matrix_rank, pinv, lstsq, cond,
norm (ord 2, -2, 'nuc'), matrix_norm and vector_norm over float32/64, complex64/128 and
integer inputs, stacks, tall/wide/square and empty matrices.

Each test runs one plain Python + NumPy function twice, with NumPy and compiled by
``jit_ps`` (many cases per program: compiling is what costs).  Singular vectors are
compared up to sign/phase: the programs return S, |U|, |Vh| and U S Vh, and the raw
factors are checked for orthonormality.  Derivatives against jax.grad (float64, the same
function in jax.numpy) and central differences; vmap against a loop."""
from __future__ import annotations

import jax
import numpy as np
import pytest

from ad_corpus.oracles import as_jax, jax_x64  # noqa: F401  (jax_x64: a fixture)
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


def low_rank(shape, rank, dtype=F64, seed=3):
    left = data(shape[:-1] + (rank,), dtype, seed)
    return (left @ data(shape[:-2] + (rank, shape[-1]), dtype, seed + 1)).astype(dtype)


def tol(dtype):
    single = np.dtype(dtype) in (np.dtype(F32), np.dtype(C64))
    return dict(rtol=2e-4, atol=2e-5) if single else dict(rtol=1e-9, atol=1e-10)


def same(fn, *args, dtype=F64):
    """``jit_ps(fn)(*args)`` equals ``fn(*args)`` (NumPy), values, dtypes and shapes."""
    with np.errstate(all="ignore"):
        expected = fn(*args)
    assert_same(jit_ps(fn)(*args), expected, **tol(dtype))


# --- svd, svdvals ------------------------------------------------------------------------------

SHAPES = [(4, 3), (3, 4), (3, 3), (2, 1, 3, 5)]


def _svd_summary(a, full, hermitian=False):
    """Sign-free parts of the SVD (S, |U|, |Vh|, U S Vh), and the raw factors."""
    u, s, vh = np.linalg.svd(a, full_matrices=full, hermitian=hermitian)
    k = s.shape[-1]
    uk, vk = u[..., :k], vh[..., :k, :]
    return (s, np.abs(uk), np.abs(vk), (uk * s[..., None, :]) @ vk), (u, vh)


def svd_everything(arrays):
    out = []
    for a in arrays:
        out.append([_svd_summary(a, True), _svd_summary(a, False),
                    np.linalg.svd(a, compute_uv=False), np.linalg.svdvals(a)])
    return out


def _orthonormal(q, dtype):
    gram = np.swapaxes(q.conj(), -1, -2) @ q
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(q.shape[-1]), gram.shape),
                               atol=1e-5 if tol(dtype)["rtol"] > 1e-6 else 1e-12)


def _check_svd_program(fn, *args, dtype):
    got, want = jit_ps(fn)(*args), fn(*args)
    for g_case, w_case in zip(got, want):
        for g, w in zip(g_case, w_case):
            if isinstance(w, tuple):      # (summary, raw factors)
                assert_same(g[0], w[0], **tol(dtype))
                for j, (q, wq) in enumerate(zip(g[1], w[1])):
                    q = np.asarray(q)
                    assert q.shape == wq.shape and q.dtype == wq.dtype
                    _orthonormal(np.swapaxes(q, -1, -2) if j else q, dtype)
            else:
                assert_same(g, w, **tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_and_svdvals_match_numpy(dtype):
    arrays = tuple(data(shape, dtype, seed=i) for i, shape in enumerate(SHAPES))
    _check_svd_program(svd_everything, arrays, dtype=dtype)


def svd_fields(a):
    result = np.linalg.svd(a, full_matrices=False)
    return result.S, np.abs(result.U), np.abs(result.Vh)


def test_svd_result_is_a_named_tuple():
    same(svd_fields, data((5, 3)))
    assert type(run_rule(np.linalg.svd, data((2, 2)))).__name__ == "SVDResult"


def hermitian_cases(a):
    return (_svd_summary(a, True, True)[0][:3], np.linalg.svd(a, compute_uv=False,
                                                              hermitian=True),
            np.linalg.matrix_rank(a, hermitian=True), np.linalg.pinv(a, hermitian=True))


@pytest.mark.parametrize("dtype", [F64, C128, F32])
def test_hermitian_reads_the_lower_triangle(dtype):
    a = data((2, 4, 4), dtype) + np.triu(np.full((4, 4), 9.0), 1).astype(dtype)
    same(hermitian_cases, a, dtype=dtype)       # (NumPy's eigh ignores the upper part)
    h = np.tril(a, -1) + np.swapaxes(np.tril(a, -1), -1, -2).conj()
    h = (h + np.real(np.diagonal(a, axis1=-2, axis2=-1))[..., None] * np.eye(4)).astype(dtype)
    u, s, vh = (np.asarray(x) for x in run_rule(np.linalg.svd, a, hermitian=True))
    np.testing.assert_allclose((u * s[..., None, :]) @ vh, h, rtol=1e-3, atol=1e-4)


EMPTY_SHAPES = [(0, 3), (3, 0), (2, 0, 3), (0, 0), (0, 3, 3), (0, 2, 3)]


def empty_cases(arrays, integers):
    out = []
    for a in arrays:
        out.append([np.linalg.svd(a), np.linalg.svd(a, full_matrices=False),
                    np.linalg.svd(a, compute_uv=False), np.linalg.matrix_rank(a),
                    np.linalg.pinv(a), np.linalg.norm(a, 2, (-2, -1)),
                    np.linalg.norm(a, "nuc", (-2, -1))])
    out.append([np.linalg.pinv(x) for x in integers])   # the input dtype is kept
    return out


def test_empty_matrices_match_numpy():
    arrays = tuple(np.zeros(s) for s in EMPTY_SHAPES)
    same(empty_cases, arrays, tuple(np.zeros(s, I64) for s in EMPTY_SHAPES))


# --- norm, matrix_norm, vector_norm --------------------------------------------------------------

MATRIX_ORDS = (None, "fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf)
VECTOR_ORDS = (2, 1, np.inf, -np.inf, 0, 3, -1)


def norms(a, square, scalar):
    out = []
    for ord in MATRIX_ORDS:
        out.append([np.linalg.matrix_norm(a, ord="fro" if ord is None else ord),
                    np.linalg.norm(a, ord, (2, 0), ord in (2, "nuc"))])
    out.append([np.linalg.norm(square, 2), np.linalg.matrix_norm(square, ord="nuc",
                                                                 keepdims=True)])
    for ord in VECTOR_ORDS:
        out.append([np.linalg.vector_norm(a, ord=ord),
                    np.linalg.vector_norm(a, axis=1, ord=ord, keepdims=True),
                    np.linalg.vector_norm(a, axis=(0, 2), ord=ord)])
    out.append([np.linalg.vector_norm(a, axis=(-1, 0), keepdims=True),
                np.linalg.vector_norm(scalar)])
    return out


@pytest.mark.parametrize("dtype", DTYPES)
def test_norms_of_every_order_match_numpy(dtype):
    same(norms, data((2, 3, 4), dtype), data((3, 3), dtype, 1), data((), dtype, 2),
         dtype=dtype)


def test_norm_errors_match_numpy():
    with pytest.raises(TypeError):
        np.linalg.norm(np.eye(2, dtype=np.float16), 2)
    with pytest.raises(PSCTypeError):
        run_rule(np.linalg.norm, np.eye(2, dtype=np.float16), ord=2)
    with pytest.raises(ValueError):
        np.linalg.norm(np.zeros((0, 3)), -2)
    with pytest.raises(PSCValueError):
        run_rule(np.linalg.norm, np.zeros((0, 3)), ord=-2)


# --- cond ------------------------------------------------------------------------------------

COND_PS = (None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf)


def conds(a, wide, tall):
    return ([np.linalg.cond(a, p) for p in COND_PS], np.linalg.cond(wide),
            np.linalg.cond(tall, -2))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cond_of_every_p_matches_numpy(dtype):
    a = data((2, 3, 3), dtype) + 3 * np.eye(3, dtype=dtype)
    same(conds, a, data((3, 5), dtype, 1), data((4, 2), dtype, 2), dtype=dtype)


SINGULAR_PS = tuple(p for p in COND_PS if p != "nuc")   # (NumPy: the SVD of inv's NaNs
                                                       # raises LinAlgError; inf here)


def singular_conds(a):
    return [np.linalg.cond(a, p) for p in SINGULAR_PS]


def nan_conds(a):
    return [np.linalg.cond(a, p) for p in ("fro", 1, np.inf, None)]


def test_cond_of_singular_and_nan_matrices():
    # singular: inf, or a huge ratio where rounding leaves s_min > 0 (p=-2: 0 or tiny)
    a = np.stack([np.ones((3, 3)), np.eye(3), np.zeros((3, 3))])
    got = jit_ps(singular_conds)(a)
    with np.errstate(all="ignore"):
        want = singular_conds(a)
    for p, g, w in zip(SINGULAR_PS, got, want):
        g = np.asarray(g)
        assert g.dtype == w.dtype and g.shape == w.shape and g[1] == pytest.approx(w[1])
        for r in (g[0], g[2], w[0], w[2]):
            assert r > 1e15 or (p == -2 and r < 1e-15), (p, g, w)
    # a NaN input stays NaN (NumPy's SVD raises LinAlgError for p None: NaN here)
    for g, expected in zip(jit_ps(nan_conds)(np.stack([np.full((2, 2), np.nan), np.eye(2)])),
                           (2.0, 1.0, 1.0, 1.0)):
        assert np.isnan(g[0]) and g[1] == pytest.approx(expected)


def test_cond_errors():
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cond(np.zeros((0, 3)))
    with pytest.raises(PSCValueError):
        run_rule(np.linalg.cond, np.zeros((0, 3)))
    with pytest.raises(PSCShapeError):
        run_rule(np.linalg.cond, np.ones((2, 3)), p=1)


# --- matrix_rank -----------------------------------------------------------------------------

def ranks(a, traced_rtol, integers):
    return (np.linalg.matrix_rank(a), np.linalg.matrix_rank(a, 1e-3),
            np.linalg.matrix_rank(a, rtol=0.5),
            np.linalg.matrix_rank(a, np.array([1e-3, 1e3, 1e-3])),
            np.linalg.matrix_rank(a, rtol=traced_rtol), np.linalg.matrix_rank(integers))


@pytest.mark.parametrize("dtype", [F32, F64, C64, C128])
def test_matrix_rank_matches_numpy(dtype):
    a = np.concatenate([low_rank((2, 5, 4), 2, dtype), low_rank((1, 5, 4), 4, dtype)])
    # A tolerance above the rounding noise of the dtype's SVD: the rank-2 matrices' other
    # singular values are that noise (~1e-7 relative in single precision), which differs
    # between LAPACK builds and thread counts, so a tolerance under it decides nothing.
    small = 1e-4 if np.dtype(dtype) in (np.dtype(F32), np.dtype(C64)) else 1e-8
    same(ranks, a, np.array([0.5, small, 0.9]), np.round(np.real(a)).astype(I64))


def test_matrix_rank_of_vectors_and_errors():
    for x in (np.zeros(3), np.array([0.0, 2.0]), np.float64(3.0)):
        assert int(np.asarray(run_rule(np.linalg.matrix_rank, x))) == np.linalg.matrix_rank(x)
    with pytest.raises(PSCValueError):
        run_rule(np.linalg.matrix_rank, np.eye(2), tol=1e-3, rtol=1e-3)


# --- pinv ------------------------------------------------------------------------------------

def pinvs(arrays):
    return [np.linalg.pinv(a) for a in arrays]


@pytest.mark.parametrize("dtype", DTYPES)
def test_pinv_matches_numpy(dtype):
    same(pinvs, tuple(data(s, dtype, i) for i, s in enumerate([(4, 3), (3, 4), (2, 3, 3)])),
         dtype=dtype)


def pinv_cutoffs(a, rconds):
    return (np.linalg.pinv(a), np.linalg.pinv(a, 0.3), np.linalg.pinv(a, rconds),
            np.linalg.pinv(a, rtol=None), np.linalg.pinv(a, rtol=0.2))


def pinv_single(a):
    return np.linalg.pinv(a, 1e-3)


def test_pinv_cutoffs_match_numpy():
    a = np.concatenate([low_rank((2, 5, 4), 2), low_rank((1, 5, 4), 4)])
    same(pinv_cutoffs, a, np.array([0.3, 1e-15, 0.9]))
    same(pinv_single, low_rank((4, 4), 2, F32), dtype=F32)
    with pytest.raises(PSCValueError):
        run_rule(np.linalg.pinv, a, rcond=0.1, rtol=0.1)
    with pytest.raises(PSCShapeError):
        run_rule(np.linalg.pinv, np.ones(3))


# --- lstsq -----------------------------------------------------------------------------------

LSTSQ_SHAPES = [((5, 3), (5,)), ((5, 3), (5, 2)), ((3, 3), (3,)), ((2, 4), (2, 3)),
                ((4, 1), (4, 1))]


def lstsqs(pairs):
    return [np.linalg.lstsq(a, r) for a, r in pairs]


@pytest.mark.parametrize("dtype", DTYPES)
def test_lstsq_matches_numpy(dtype):
    pairs = tuple((data(sa, dtype, i), data(sb, dtype, 10 + i))
                  for i, (sa, sb) in enumerate(LSTSQ_SHAPES))
    same(lstsqs, pairs, dtype=dtype)


def lstsq_options(a, rhs, rcond, full, single, integers, empties):
    return (np.linalg.lstsq(a, rhs, rcond)[::2], np.linalg.lstsq(a, rhs)[::2],
            np.linalg.lstsq(full, rhs, 1e-3), np.linalg.lstsq(full, rhs, -1),
            np.linalg.lstsq(full, rhs, rcond * 0 - 1), np.linalg.lstsq(single, integers[:5]),
            np.linalg.lstsq(integers[:5, None], single[:, 0]),
            [np.linalg.lstsq(x, r) for x, r in empties])


def test_lstsq_rcond_rank_dtypes_and_empties():
    a, rhs = low_rank((6, 4), 2), data((6, 2), seed=1)
    empties = ((np.zeros((0, 3)), np.zeros((0, 2))), (np.zeros((3, 0)), np.ones(3)),
               (data((4, 2)), np.zeros((4, 0))))
    same(lstsq_options, a, rhs, np.float64(0.5), data((6, 4)), data((5, 2), F32),
         data((6,), I64, 2), empties)
    # NumPy's residuals of a rank-deficient tall a are empty (a shape known only at run
    # time): the compiled program keeps the full-rank shape and gives NaN
    assert np.linalg.lstsq(a, rhs)[1].shape == (0,)
    assert np.isnan(np.asarray(run_rule(np.linalg.lstsq, a, rhs)[1])).all()
    with pytest.raises(PSCShapeError):
        run_rule(np.linalg.lstsq, np.ones((3, 2)), np.ones(4))
    with pytest.raises(PSCShapeError):
        run_rule(np.linalg.lstsq, np.ones((2, 3, 2)), np.ones(3))


# --- derivatives -----------------------------------------------------------------------------

W = data((5, 5), seed=7)


def _against_jax_and_central_differences(loss, *args, rtol=1e-8, atol=1e-10, central=True):
    argnums = tuple(range(len(args)))
    want = jax.grad(as_jax(loss), argnums=argnums)(*args)
    got = grad(loss, argnums=argnums)(*args)
    step = 1e-6
    for i, (g, w) in enumerate(zip(got, want)):
        assert_same(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)
        if not central:
            continue
        t = data(args[i].shape, args[i].dtype, seed=20 + i)
        plus, minus = list(args), list(args)
        plus[i], minus[i] = args[i] + step * t, args[i] - step * t
        slope = (loss(*plus) - loss(*minus)) / (2 * step)
        np.testing.assert_allclose(np.real(np.vdot(np.conj(np.asarray(g)), t)), slope,
                                   rtol=1e-6, atol=1e-8)


def _svd_loss(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    k = s.shape[-1]
    return (np.sum(s * W[0, :k]) + np.sum(np.abs(u * s[..., None, :]) ** 2 * W[:u.shape[-2], :k])
            + np.sum(np.abs(vh) ** 2 * W[:k, :vh.shape[-1]]))


def svd_losses(a, b, c, d):
    return (_svd_loss(a) + _svd_loss(b) + _svd_loss(c) + _svd_loss(d)
            + np.sum(np.linalg.svd(a, compute_uv=False) ** 3) + np.sum(np.linalg.svdvals(b)))


def complex_svd_losses(a, b, c):   # |u s|², |vh|² and s: phase-free
    return _svd_loss(a) + _svd_loss(b) + _svd_loss(c) + np.sum(np.linalg.svdvals(c) ** 3)


@pytest.mark.usefixtures("jax_x64")
def test_grad_of_complex_svd_matches_jax():
    _against_jax_and_central_differences(complex_svd_losses, data((4, 3), C128),
                                         data((3, 4), C128, 1), data((3, 3), C128, 2))


def svd_parts(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return s, u * u, vh * vh


def s_of_full(a):
    return np.sum(np.linalg.svd(a)[1])


def s_of_reduced(a):
    return np.sum(np.linalg.svd(a, full_matrices=False)[1])


def u_of_full(a):
    return np.sum(np.linalg.svd(a)[0])


def s_of_full_vector(a):
    return np.linalg.svd(a)[1]


def test_forward_mode_and_full_matrices():
    a, t = data((4, 3)), data((4, 3), seed=2)
    _, tangent = jvp(svd_parts, (a,), (t,))
    step = 1e-6
    for got, plus, minus in zip(tangent, svd_parts(a + step * t), svd_parts(a - step * t)):
        np.testing.assert_allclose(got, (plus - minus) / (2 * step), rtol=1e-6, atol=1e-8)
    # S alone from a full SVD: reverse mode works (the extra columns get no cotangent)
    assert_same(np.asarray(grad(s_of_full)(a)), np.asarray(grad(s_of_reduced)(a)))
    with pytest.raises(PSCUnsupportedCallError, match="full_matrices"):
        grad(u_of_full)(a)
    with pytest.raises(PSCUnsupportedCallError, match="full_matrices"):
        jvp(s_of_full_vector, (a,), (a,))


def _pinv_loss(a):
    return np.sum(np.linalg.pinv(a) * W[:a.shape[-1], :a.shape[-2]])


def pinv_losses(a, b, c, orthogonal):
    # (an orthogonal matrix: all s = 1, where the SVD's derivative is NaN)
    return _pinv_loss(a) + _pinv_loss(b) + _pinv_loss(c) + _pinv_loss(orthogonal)


def complex_pinv_loss(a):
    return np.sum(np.abs(np.linalg.pinv(a)) ** 2)


@pytest.mark.usefixtures("jax_x64")
def test_grad_of_pinv_matches_jax():
    q = np.linalg.qr(data((4, 4)))[0]
    _against_jax_and_central_differences(pinv_losses, data((4, 3)), data((3, 4), seed=1),
                                         data((2, 3, 3), seed=2), q, rtol=1e-7, atol=1e-9)
    # rank 2 of 4: the derivative at constant rank (pinv jumps when the rank changes, so
    # central differences do not apply)
    _against_jax_and_central_differences(_pinv_loss, low_rank((4, 4), 2), rtol=1e-7,
                                         atol=1e-9, central=False)
    _against_jax_and_central_differences(complex_pinv_loss, data((3, 2), C128))


def lstsq_losses(a, r, b, s, c, t):
    return (np.sum(np.linalg.lstsq(a, r)[0] * W[:3, 0]) +
            np.sum(np.linalg.lstsq(b, s)[0] * W[:3, :2]) +
            np.sum(np.linalg.lstsq(c, t)[0] * W[:4, 0]))


@pytest.mark.usefixtures("jax_x64")
def test_grad_of_lstsq_matches_jax():
    _against_jax_and_central_differences(
        lstsq_losses, data((5, 3)), data((5,), seed=1), data((5, 3), seed=2),
        data((5, 2), seed=3), data((2, 4), seed=4), data((2,), seed=5))


def norm_losses(a):
    return (np.sum(np.linalg.norm(a, 2, (-2, -1))) + np.sum(np.linalg.norm(a, -2, (-2, -1)))
            + np.sum(np.linalg.norm(a, "nuc", (-2, -1)))
            + np.sum(np.linalg.matrix_norm(a, ord="nuc")) + np.sum(np.linalg.cond(a)))


@pytest.mark.usefixtures("jax_x64")
def test_grad_of_spectral_and_nuclear_norms_and_cond_match_jax():
    _against_jax_and_central_differences(norm_losses, data((2, 4, 3)))


# --- vmap ------------------------------------------------------------------------------------

def lane(a, rhs):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return (s, np.abs(u), np.linalg.pinv(a), np.linalg.norm(a, 2), np.linalg.cond(a),
            np.linalg.lstsq(a, rhs)[0], np.linalg.matrix_rank(a))


def test_vmap_matches_a_loop():
    stack, rhs = data((3, 4, 3)), data((4,), seed=1)
    batched = vmap(lane, in_axes=(0, None))(stack, rhs)
    looped = [lane(a, rhs) for a in stack]
    for i, got in enumerate(batched):
        assert_same(np.asarray(got), np.stack([np.asarray(r[i]) for r in looped]),
                    rtol=1e-10, atol=1e-12)
