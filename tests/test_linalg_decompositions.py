"""np.linalg.qr, eigh, eigvalsh, eig, eigvals, np.roots and the derivatives of det/slogdet
(runtime/numpy_rules/factorizations.py, runtime/primitives/decompositions.py) against
NumPy: values, dtypes and shapes over the LAPACK dtypes and integers, stacks, empty
matrices, every qr mode and UPLO; eigenvectors up to a sign/phase per column; derivatives
against jax (the oracle only) and central differences; vmap against a loop; user errors.
The primitives' own rules are also checked by tests/primitive_cases.py."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ad_corpus.oracles import jax_x64  # noqa: F401  (a fixture)
from conftest import assert_same, run_rule
from runtime.errors import PSCShapeError, PSCTypeError, PSCUnsupportedCallError, PSCValueError
from runtime.numpy_rules.factorizations import PSCDtypeDeviationWarning
from transpiler import grad, jit_ps, jvp, vmap

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def data(shape, dtype=np.float64, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def integers(shape, seed=1):
    return np.random.default_rng(seed).integers(-4, 5, shape)


def hermitian(shape, dtype=np.float64, seed=2):
    x = data(shape, dtype, seed)
    n = shape[-1]
    spread = np.diag(np.arange(n) * 3.0).astype(dtype)   # distinct eigenvalues
    return (x + np.swapaxes(x.conj(), -1, -2) + spread).astype(dtype)


def tol(dtype):
    single = np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.complex64))
    return dict(rtol=2e-4, atol=2e-5) if single else dict(rtol=1e-10, atol=1e-11)


# --- qr ---------------------------------------------------------------------------------------

QR_SHAPES = [(4, 3), (3, 4), (3, 3), (1, 1), (2, 5, 2), (2, 1, 2, 4)]


@pytest.mark.parametrize("dtype", DTYPES + [np.int64])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r", "raw"])
def test_qr_matches_numpy(dtype, mode):
    for shape in QR_SHAPES:
        a = integers(shape) if dtype == np.int64 else data(shape, dtype)
        if mode == "raw" and a.ndim > 2:
            continue   # (NumPy's raw mode of a stack: checked below)
        want = np.linalg.qr(a, mode=mode)
        got = run_rule(np.linalg.qr, a, mode=mode)
        expected = want if mode == "r" else list(want)
        assert_same(got if mode == "r" else list(got), expected,
                    **tol(np.asarray(expected[0] if mode != "r" else want).dtype))


def test_qr_raw_of_a_stack_and_result_fields():
    a = data((2, 4, 3))
    assert_same(list(run_rule(np.linalg.qr, a, mode="raw")), list(np.linalg.qr(a, mode="raw")),
                **tol(np.float64))

    def f(a):
        result = np.linalg.qr(a)
        q, r = result
        return result.Q, result.R, q @ r
    assert_same(jit_ps(f)(a), f(a), **tol(np.float64))


@pytest.mark.parametrize("mode", ["reduced", "complete", "r", "raw"])
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0), (2, 0, 4), (0, 3, 3)])
def test_qr_of_empty_matrices(mode, shape):
    a = np.zeros(shape, np.float32)
    want = np.linalg.qr(a, mode=mode)
    got = run_rule(np.linalg.qr, a, mode=mode)
    assert_same(got if mode == "r" else list(got), want if mode == "r" else list(want))


def test_qr_deprecated_full_mode_is_reduced():
    a = data((4, 3))
    with pytest.warns(DeprecationWarning):
        got = run_rule(np.linalg.qr, a, mode="full")
    assert_same(list(got), list(np.linalg.qr(a)), **tol(np.float64))


# --- eigh, eigvalsh -----------------------------------------------------------------------------


def _assert_eigenvectors(v, w, a, want_v, lower=True):
    """``v`` has NumPy's magnitudes, dtype and shape; ``A v = v w`` with A the matrix
    LAPACK reads; the columns are orthonormal."""
    v, w = np.asarray(v), np.asarray(w)
    assert v.dtype == want_v.dtype and v.shape == want_v.shape
    t = tol(v.dtype)
    part = np.tril(a, -1) if lower else np.triu(a, 1)
    full = part + np.swapaxes(part.conj(), -1, -2) + np.eye(a.shape[-1]) * \
        np.diagonal(a, axis1=-2, axis2=-1).real[..., None, :]
    scale = dict(rtol=0, atol=100 * t["atol"] * max(1.0, np.abs(full).max()))
    np.testing.assert_allclose(full @ v, v * w[..., None, :], **scale)
    np.testing.assert_allclose(np.swapaxes(v.conj(), -1, -2) @ v,
                               np.broadcast_to(np.eye(v.shape[-1]), v.shape), **scale)
    np.testing.assert_allclose(np.abs(v), np.abs(want_v), **scale)


@pytest.mark.parametrize("dtype", DTYPES + [np.int64])
@pytest.mark.parametrize("uplo", ["L", "U", "u"])
def test_eigh_matches_numpy(dtype, uplo):
    for shape in [(1, 1), (4, 4), (2, 3, 3)]:
        a = hermitian(shape) if dtype == np.int64 else hermitian(shape, dtype)
        if dtype == np.int64:
            a = np.round(a).astype(np.int64)
        a = a + np.triu(np.full(shape, 7), 1).astype(a.dtype) * (uplo == "L")  # unread
        want = np.linalg.eigh(a, UPLO=uplo)
        got = run_rule(np.linalg.eigh, a, UPLO=uplo)
        assert_same(got.eigenvalues, want.eigenvalues, **tol(want.eigenvalues.dtype))
        _assert_eigenvectors(got.eigenvectors, got.eigenvalues, a, want.eigenvectors,
                             lower=uplo == "L")
        assert_same(run_rule(np.linalg.eigvalsh, a, UPLO=uplo), np.linalg.eigvalsh(a, UPLO=uplo),
                    **tol(want.eigenvalues.dtype))


def test_eigh_unpacks_like_numpy_and_empty_matrices():
    def f(a):
        w, v = np.linalg.eigh(a)
        result = np.linalg.eigh(a)
        return w, result.eigenvalues, np.abs(v), np.abs(result.eigenvectors)
    a = hermitian((3, 3))
    assert_same(jit_ps(f)(a), f(a), **tol(np.float64))
    for shape, dtype in [((0, 0), np.float64), ((2, 0, 0), np.complex64), ((0, 3, 3), np.float32)]:
        a = np.zeros(shape, dtype)
        assert_same(list(run_rule(np.linalg.eigh, a)), list(np.linalg.eigh(a)))
        assert_same(run_rule(np.linalg.eigvalsh, a), np.linalg.eigvalsh(a))


# --- eig, eigvals, roots ------------------------------------------------------------------


def _sorted(w):
    w = np.asarray(w)
    return np.take_along_axis(w, np.lexsort((w.imag.round(4), w.real.round(4)), axis=-1), -1)


@pytest.mark.parametrize("dtype", DTYPES + [np.int64])
def test_eig_and_eigvals_are_numpys_as_complex(dtype):
    for shape in [(1, 1), (4, 4), (2, 3, 3)]:
        a = integers(shape) if dtype == np.int64 else data(shape, dtype)
        want = np.linalg.eig(a)
        complex_ = np.result_type(want.eigenvalues.dtype, np.complex64)
        with pytest.warns(PSCDtypeDeviationWarning) if np.dtype(dtype).kind != "c" else \
                _no_warning():
            got = run_rule(np.linalg.eig, a)
            values = run_rule(np.linalg.eigvals, a)
        t = tol(complex_)
        assert_same(_sorted(got.eigenvalues), _sorted(want.eigenvalues.astype(complex_)), **t)
        assert_same(_sorted(values), _sorted(np.linalg.eigvals(a).astype(complex_)), **t)
        v, w = np.asarray(got.eigenvectors), np.asarray(got.eigenvalues)
        assert v.dtype == complex_ and v.shape == a.shape
        np.testing.assert_allclose(a @ v, v * w[..., None, :], rtol=0, atol=100 * t["atol"])
        np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, **t)


class _no_warning:
    def __enter__(self):
        import warnings
        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("error", PSCDtypeDeviationWarning)

    def __exit__(self, *exc):
        self._catch.__exit__(*exc)


def test_eig_of_empty_matrices_keeps_the_type():
    for shape, dtype in [((0, 0), np.float64), ((2, 0, 0), np.complex64)]:
        a = np.zeros(shape, dtype)
        assert_same(list(run_rule(np.linalg.eig, a)), list(np.linalg.eig(a)))
        assert_same(run_rule(np.linalg.eigvals, a), np.linalg.eigvals(a))


@pytest.mark.filterwarnings("ignore::runtime.numpy_rules.factorizations.PSCDtypeDeviationWarning")
def test_roots_match_numpy():
    for p in [[1.0, -3.0, 2.0], [2, 0, 1], np.array([1.0, 2.0, 3.0, 4.0], np.float32),
              [1.0, 0.5j, 2.0], [3.0, 1.0], [1.0, 2.0, 0.0]]:
        want = np.roots(p)
        got = run_rule(np.roots, np.asarray(p))
        complex_ = np.result_type(want.dtype, np.complex64)
        assert_same(_sorted(got), _sorted(want.astype(complex_)), **tol(complex_))
    assert_same(run_rule(np.roots, np.array([2.0])), np.roots([2.0]))
    got = np.asarray(run_rule(np.roots, np.array([0.0, 1.0, 2.0])))   # p[0] == 0: NaN
    assert got.shape == (2,) and np.isnan(got).all()


# --- derivatives: det and slogdet ---------------------------------------------------------


def _well_conditioned(shape, seed=0):
    return data(shape, seed=seed) + 2 * np.eye(shape[-1])


def _central(f, a, direction, step=1e-6):
    return (f(a + step * direction) - f(a - step * direction)) / (2 * step)


@pytest.mark.usefixtures("jax_x64")
def test_grad_of_det_and_slogdet_matches_jax_and_central_differences():
    a = np.stack([_well_conditioned((4, 4)), data((4, 4), seed=3)])   # a pivoting one
    w = data((2,), seed=4)

    def loss(a):
        sign, logdet = np.linalg.slogdet(a)
        return np.sum(np.linalg.det(a) * w) + np.sum(logdet * w) + np.sum(sign)

    def jax_loss(a):
        sign, logdet = jnp.linalg.slogdet(a)
        return jnp.sum(jnp.linalg.det(a) * w) + jnp.sum(logdet * w) + jnp.sum(sign)
    got = np.asarray(grad(loss)(a))
    assert_same(got, np.asarray(jax.grad(jax_loss)(a)), rtol=1e-9, atol=1e-11)
    direction = data(a.shape, seed=5)
    np.testing.assert_allclose(np.vdot(got, direction), _central(loss, a, direction),
                               rtol=1e-6)
    near_singular = np.array([[1.0, 2.0], [2.0, 4.0 + 1e-9]])
    assert_same(np.asarray(grad(lambda a: np.linalg.det(a))(near_singular)),
                np.asarray(jax.grad(jnp.linalg.det)(near_singular)), rtol=1e-6, atol=1e-9)


@pytest.mark.usefixtures("jax_x64")
def test_jvp_of_complex_det_matches_jax():
    a, t = _well_conditioned((3, 3)).astype(complex) + 0.5j, data((3, 3), np.complex128, 6)
    got = jvp(lambda a: np.linalg.det(a), (a,), (t,))
    want = jax.jvp(jnp.linalg.det, (a,), (t,))
    assert_same([np.asarray(g) for g in got], [np.asarray(e) for e in want],
                rtol=1e-9, atol=1e-11)


# --- derivatives: qr, eigh, eigvals ---------------------------------------------------------


@pytest.mark.usefixtures("jax_x64")
@pytest.mark.parametrize("shape, mode", [((5, 3), "reduced"), ((3, 3), "reduced"),
                                         ((3, 5), "reduced"), ((5, 3), "complete"),
                                         ((2, 4, 3), "r")])
def test_grad_of_qr_matches_jax(shape, mode):
    a = data(shape, seed=7)
    qshape = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    wq, wr = data(qshape[0].shape, seed=8), data(qshape[1].shape, seed=9)

    def loss(a):
        if mode == "r":
            return np.sum(np.linalg.qr(a, mode="r") * wr)
        q, r = np.linalg.qr(a, mode=mode)
        return np.sum(q * wq) + np.sum(r * wr)

    def jax_loss(a):
        if mode == "r":
            return jnp.sum(jnp.linalg.qr(a, mode="r") * wr)
        q, r = jnp.linalg.qr(a, mode=mode)
        return jnp.sum(q * wq) + jnp.sum(r * wr)
    got = np.asarray(grad(loss)(a))
    assert_same(got, np.asarray(jax.grad(jax_loss)(a)), rtol=1e-8, atol=1e-10)
    direction = data(shape, seed=10)
    np.testing.assert_allclose(np.vdot(got, direction), _central(loss, a, direction),
                               rtol=1e-6)


@pytest.mark.usefixtures("jax_x64")
def test_jvp_of_complex_qr_matches_jax():
    a, t = data((4, 3), np.complex128, 11), data((4, 3), np.complex128, 12)
    got = jvp(lambda a: tuple(np.linalg.qr(a)), (a,), (t,))
    want = jax.jvp(lambda a: tuple(jnp.linalg.qr(a)), (a,), (t,))
    for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert_same(np.asarray(g), np.asarray(e), rtol=1e-9, atol=1e-11)


def _read(a, lower):   # the matrix NumPy's eigh reads, for jax (which symmetrizes)
    part = jnp.tril(a, -1) if lower else jnp.triu(a, 1)
    return part + jnp.swapaxes(part.conj(), -1, -2) + \
        jnp.eye(a.shape[-1]) * jnp.diagonal(a, axis1=-2, axis2=-1).real[..., None, :]


@pytest.mark.usefixtures("jax_x64")
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_grad_of_eigh_matches_jax(uplo):
    a = hermitian((2, 4, 4)) + np.triu(data((4, 4), seed=13), 1)   # not symmetric
    ww, wv = data((2, 4), seed=14), data((2, 4, 4), seed=15)

    def loss(a):
        w, v = np.linalg.eigh(a, UPLO=uplo)   # (v squared: the sign does not matter)
        return np.sum(w * ww) + np.sum(v ** 2 * wv) + np.sum(np.linalg.eigvalsh(a, uplo) ** 2)

    def jax_loss(a):
        w, v = jnp.linalg.eigh(_read(a, uplo == "L"), symmetrize_input=False)
        return jnp.sum(w * ww) + jnp.sum(v ** 2 * wv) + jnp.sum(w ** 2)
    got = np.asarray(grad(loss)(a))
    assert_same(got, np.asarray(jax.grad(jax_loss)(a)), rtol=1e-8, atol=1e-10)
    direction = data(a.shape, seed=16)
    np.testing.assert_allclose(np.vdot(got, direction), _central(loss, a, direction),
                               rtol=1e-6)


@pytest.mark.usefixtures("jax_x64")
def test_jvp_of_complex_eigh_and_eigvalsh_of_repeated_eigenvalues():
    a, t = hermitian((3, 3), np.complex128), data((3, 3), np.complex128, 17)
    got = jvp(lambda a: (np.linalg.eigvalsh(a), np.abs(np.linalg.eigh(a)[1])), (a,), (t,))
    want = jax.jvp(lambda a: (jnp.linalg.eigvalsh(_read(a, True)),
                              jnp.abs(jnp.linalg.eigh(_read(a, True),
                                                      symmetrize_input=False)[1])), (a,), (t,))
    for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert_same(np.asarray(g), np.asarray(e), rtol=1e-8, atol=1e-10)
    # repeated eigenvalues: the eigenvalues' derivative stays finite (the vectors' is not)
    g = np.asarray(grad(lambda a: np.sum(np.linalg.eigvalsh(a) * np.arange(3.0)))(np.eye(3)))
    assert np.isfinite(g).all()


@pytest.mark.usefixtures("jax_x64")
@pytest.mark.filterwarnings("ignore::runtime.numpy_rules.factorizations.PSCDtypeDeviationWarning")
def test_grad_of_eigvals_matches_jax_and_eigenvectors_are_refused():
    a, c = data((2, 3, 3), seed=18), data((2, 3), np.complex128, 19)

    def loss(a):   # (sorted by LAPACK's order, the same in both)
        return np.sum(np.abs(np.linalg.eigvals(a) * c + 1.0) ** 2) + \
            np.sum(np.abs(np.linalg.eig(a).eigenvalues))

    def jax_loss(a):
        return jnp.sum(jnp.abs(jnp.linalg.eigvals(a) * c + 1.0) ** 2) + \
            jnp.sum(jnp.abs(jnp.linalg.eigvals(a)))   # (jax refuses eig(a)[0])
    got = np.asarray(grad(loss)(a))
    assert_same(got, np.asarray(jax.grad(jax_loss)(a)), rtol=1e-8, atol=1e-10)
    with pytest.raises(PSCUnsupportedCallError, match="eigenvectors"):
        grad(lambda a: np.sum(np.abs(np.linalg.eig(a).eigenvectors)))(a)
    with pytest.raises(PSCUnsupportedCallError, match="raw"):
        grad(lambda a: np.sum(np.linalg.qr(a, mode="raw")[1]))(a)


# --- vmap -------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::runtime.numpy_rules.factorizations.PSCDtypeDeviationWarning")
def test_vmap_matches_a_loop():
    def f(a):
        q, r = np.linalg.qr(a, mode="complete")
        w, v = np.linalg.eigh(a[:3, :3] @ a[:3, :3].T)
        return q, r, w, np.abs(v), np.linalg.eigvals(a[:3, :3]), \
            np.linalg.det(a[:3, :3])
    stack = data((3, 4, 3), seed=20)
    got = vmap(f, in_axes=1)(np.swapaxes(stack, 0, 1))
    want = [np.stack(parts) for parts in zip(*[jit_ps(f)(x) for x in stack])]
    assert_same(list(got), want, **tol(np.float64))


# --- user errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("fn, args, kwargs, error", [
    (np.linalg.qr, (np.ones(3),), {}, PSCShapeError),
    (np.linalg.qr, (np.ones((2, 2)),), {"mode": "bad"}, PSCValueError),
    (np.linalg.eigh, (np.ones((2, 3)),), {}, PSCShapeError),
    (np.linalg.eigh, (np.eye(2),), {"UPLO": "X"}, PSCValueError),
    (np.linalg.eigvalsh, (np.ones(2),), {}, PSCShapeError),
    (np.linalg.eig, (np.ones((3, 2)),), {}, PSCShapeError),
    (np.linalg.eigvals, (np.eye(2, dtype=np.float16),), {}, PSCTypeError),
    (np.roots, (np.ones((2, 2)),), {}, PSCValueError),
])
def test_user_errors_match_numpy_kind(fn, args, kwargs, error):
    with pytest.raises((ValueError, TypeError)):
        fn(*args, **kwargs)
    with pytest.raises(error):
        run_rule(fn, *args, **kwargs)


def test_failed_eigh_gives_nan_for_that_matrix_only():
    a = np.stack([np.full((3, 3), np.nan), np.diag([3.0, 1.0, 2.0])])
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.eigh(a)
    w, v = run_rule(np.linalg.eigh, a)
    assert np.isnan(np.asarray(w)[0]).all() and np.isnan(np.asarray(v)[0]).all()
    assert_same(np.asarray(w)[1], np.array([1.0, 2.0, 3.0]))
