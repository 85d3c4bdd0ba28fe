"""``scipy.linalg`` on traced arrays (`runtime.numpy_rules.scipy_linalg`), differential
against SciPy: values, dtypes and shapes of solve_triangular, cho_factor/cho_solve,
lu_factor/lu_solve, expm and eigh over float32/float64/complex/int inputs and stacks, the
errors SciPy raises (a `PSCError`), and ``grad`` through solve_triangular, cho_solve,
lu_solve and expm against jax.scipy.linalg and central differences."""
from __future__ import annotations

import jax
import jax.scipy.linalg as jsl
import numpy as np
import pytest
import scipy.linalg
from scipy.linalg import cho_factor, cho_solve, expm, lu_factor, lu_solve, solve_triangular

from ad_corpus.oracles import jax_x64  # noqa: F401  (JAX in float64 while this module runs)
from runtime import PSCError, StagedFunction, translate
from runtime.errors import PSCShapeError, PSCTracedValueError, PSCValueError
from runtime.translation import lookup_rule
from transpiler import grad, jit_ps

F32, F64, C64, C128, I64 = np.float32, np.float64, np.complex64, np.complex128, np.int64


def arr(shape, dtype=F64, seed=0):
    rng = np.random.default_rng(seed + 13 * len(shape) + sum(shape))
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        return rng.integers(-3, 4, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def square(shape, dtype=F64, seed=0):
    n = shape[-1]
    return (arr(shape, dtype, seed) + 4 * np.eye(n)).astype(dtype)


def spd(shape, dtype=F64, seed=0):
    x = arr(shape, dtype, seed)
    return (x @ np.conj(np.swapaxes(x, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def run(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` through its rule: positional arrays traced."""
    return StagedFunction(lambda b, *v: translate(b, fn, *v, **kwargs))(*args)


@jit_ps(static_argnames=("lower",))
def _cho_factor(a, lower=False):
    return cho_factor(a, lower=lower)[0]


@jit_ps(static_argnames=("lower",))
def _cho_solve(c, y, lower):
    return cho_solve((c, lower), y)


@jit_ps
def _lu_factor(a):
    lu, piv = lu_factor(a)
    return lu, piv


@jit_ps(static_argnames=("trans",))
def _lu_solve(lu, piv, y, trans=0):
    return lu_solve((lu, piv), y, trans=trans)


def close(actual, expected, dtype=None):
    low = np.dtype(np.asarray(expected).dtype) in (np.dtype(F32), np.dtype(C64))
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype, \
        (actual.shape, actual.dtype, expected.shape, expected.dtype)
    np.testing.assert_allclose(actual, expected, **(dict(rtol=1e-4, atol=1e-5) if low else
                                                    dict(rtol=1e-9, atol=1e-11)))


# --- solve_triangular ---------------------------------------------------------------------


@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
def test_solve_triangular_options(trans):
    a, y = square((4, 4), C128), arr((4, 2), C128, 1)
    for lower in (False, True):
        for unit in (False, True):
            kw = dict(trans=trans, lower=lower, unit_diagonal=unit)
            close(run(solve_triangular, a, y, **kw), solve_triangular(a, y, **kw))


@pytest.mark.parametrize("da,db", [(F32, F32), (F64, F32), (I64, I64), (C64, F32),
                                   (np.bool_, F32), (np.float16, np.float16)])
def test_solve_triangular_dtypes(da, db):
    a, y = square((3, 3), F64).astype(da), arr((3,), db, 1)
    close(run(solve_triangular, a, y, lower=True), solve_triangular(a, y, lower=True))


def test_solve_triangular_stacks_and_empty():
    a, y = square((2, 3, 3)), arr((4, 1, 3, 2), seed=1)
    close(run(solve_triangular, a, y), solve_triangular(a, y))
    close(run(solve_triangular, a, arr((3,))), solve_triangular(a, arr((3,))))
    close(run(solve_triangular, square((3, 3), F32), np.ones((3, 0), F32)),
          solve_triangular(square((3, 3), F32), np.ones((3, 0), F32)))


def test_solve_triangular_singular_is_nan_and_errors():
    a = np.triu(square((3, 3)))
    a[1, 1] = 0.0   # SciPy: LinAlgError; here the whole result is NaN
    assert np.isnan(run(solve_triangular, a, arr((3,)))).all()
    assert np.isfinite(run(solve_triangular, a, arr((3,)), unit_diagonal=True)).all()
    with pytest.raises(PSCShapeError, match="square"):
        run(solve_triangular, arr((2, 3)), arr((2,)))
    with pytest.raises(PSCShapeError, match="incompatible"):
        run(solve_triangular, arr((3, 3)), arr((2,)))
    with pytest.raises(PSCValueError, match="trans"):
        run(solve_triangular, arr((3, 3)), arr((3,)), trans=3)
    with pytest.raises(PSCTracedValueError):
        StagedFunction(lambda b, a, y, t: translate(b, solve_triangular, a, y, lower=t))(
            arr((3, 3)), arr((3,)), True)


# --- Cholesky and LU ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [F32, F64, C128, I64])
def test_cho_factor_and_solve(dtype):
    a = spd((4, 4), C128 if dtype == C128 else F64).astype(dtype)
    if dtype == I64:
        a = np.array([[4, 2, 0], [2, 5, 1], [0, 1, 3]], I64)
    n = a.shape[-1]
    for lower in (False, True):
        c, flag = cho_factor(a, lower=lower)
        close(_cho_factor(a, lower=lower), c)
        for y in (arr((n,), dtype, 1), arr((n, 2), dtype, 2)):
            close(_cho_solve(c, y, flag), cho_solve((c, flag), y))


def test_cho_stacks_and_errors():
    a, y = spd((2, 3, 3)), arr((2, 3, 2), seed=1)
    c = cho_factor(a)
    close(_cho_factor(a), c[0])
    close(_cho_solve(c[0], y, False), cho_solve(c, y))
    with pytest.raises(PSCShapeError, match="square"):
        _cho_factor(arr((2, 3)))
    with pytest.raises(PSCShapeError, match="incompatible"):
        _cho_solve(arr((3, 3)), arr((2,)), True)
    not_pd = -np.eye(3)   # SciPy: LinAlgError; here NaN
    assert np.isnan(_cho_factor(not_pd)).any()


@pytest.mark.parametrize("dtype", [F32, F64, C64, I64])
def test_lu_factor_and_solve(dtype):
    a = square((5, 5), dtype) if dtype != I64 else arr((5, 5), I64) + 9 * np.eye(5, dtype=I64)
    a = a[[3, 0, 4, 1, 2]]   # row interchanges for the pivots to do
    lu, piv = lu_factor(a)
    got_lu, got_piv = _lu_factor(a)
    close(got_lu, lu)
    np.testing.assert_array_equal(got_piv, piv)
    assert got_piv.dtype == piv.dtype == np.int32
    y = arr((5, 2), dtype, 1)
    for trans in (0, 1, 2):
        expected = lu_solve((lu, piv), y, trans=trans)
        close(_lu_solve(lu, piv, y, trans=trans), expected)
    close(_lu_solve(lu, piv, y[:, 0]), lu_solve((lu, piv), y[:, 0]))


def test_lu_stacks_and_errors():
    a = square((2, 4, 4))[:, [2, 0, 3, 1]]
    lu, piv = lu_factor(a)
    got = _lu_factor(a)
    close(got[0], lu)
    np.testing.assert_array_equal(got[1], piv)
    y = arr((3, 1, 4, 2), seed=1)
    close(_lu_solve(lu, piv, y, trans=1), lu_solve((lu, piv), y, trans=1))
    with pytest.raises(PSCError):
        _lu_factor(arr((3, 4)))
    with pytest.raises(PSCShapeError, match="incompatible"):
        _lu_solve(lu[0], piv[0], arr((3,)))
    with pytest.raises(PSCValueError, match="trans"):
        _lu_solve(lu[0], piv[0], arr((4,)), trans="T")


# --- expm ---------------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [1e-3, 0.5, 3.0, 40.0, 900.0])
def test_expm_scales(scale):
    a = arr((2, 4, 4)) * scale / 4
    a[1] *= 0.01   # the two matrices of the stack need different squaring counts
    close(run(expm, a), expm(a))


@pytest.mark.parametrize("dtype", [F32, C64, C128, I64, np.float16, np.int8])
def test_expm_dtypes(dtype):
    a = (arr((3, 3), C128 if np.dtype(dtype).kind == "c" else F64) * 2).astype(dtype)
    close(run(expm, a), expm(a))


def test_expm_edge_cases_and_errors():
    for a in (np.array([[1.5]]), np.array([2.0]), np.array(0.5, F32), np.ones((2, 1, 1), F32),
              np.ones((2, 1, 1), np.int8), np.zeros((0, 0)), np.zeros((2, 0, 0), np.int64)):
        close(run(expm, a), expm(a))
    nilpotent = np.triu(arr((4, 4)) * 50, 1)
    close(run(expm, nilpotent), expm(nilpotent))
    with pytest.raises(PSCShapeError, match="two-dimensional"):
        run(expm, arr((3,)))
    with pytest.raises(PSCShapeError, match="square"):
        run(expm, arr((2, 3)))


# --- eigh (the numpy.linalg.eigh rule, from another module) --------------------------------


@pytest.mark.xfail(lookup_rule("numpy.linalg.eigh") is None, strict=False,
                   reason="numpy.linalg.eigh has no rule in this build")
def test_eigh_delegates_to_the_numpy_rule():
    a = spd((4, 4))
    w, v = run(scipy.linalg.eigh, a)
    ew, _ = scipy.linalg.eigh(a)
    close(w, ew)
    np.testing.assert_allclose(a @ v, v * w, atol=1e-10)
    close(run(scipy.linalg.eigh, a, lower=False, eigvals_only=True),
          scipy.linalg.eigh(a, lower=False, eigvals_only=True))


def test_eigh_refuses_what_it_does_not_support():
    with pytest.raises(PSCError):
        run(scipy.linalg.eigh, spd((3, 3)), spd((3, 3), seed=1))


# --- derivatives against jax.scipy.linalg and central differences --------------------------


def _losses(sl, xp):
    """The same four losses written against scipy.linalg (or jax.scipy.linalg)."""
    def triangular(a, y):
        return xp.sum(sl.solve_triangular(a, y, lower=True) ** 2) + \
            xp.sum(sl.solve_triangular(a, y, trans=1, unit_diagonal=True) ** 3)

    def cholesky(a, y):
        return xp.sum(sl.cho_solve(sl.cho_factor(a @ a.T + 4 * xp.eye(3)), y) ** 2)

    def lu(a, y):   # a as the packed factors (lu_factor itself has no derivative)
        factors = (a, _PIVOTS)
        return xp.sum(sl.lu_solve(factors, y) ** 2) + xp.sum(sl.lu_solve(factors, y, 1))

    def exponential(a, y):
        return xp.sum(sl.expm(a * 3.0) @ y)
    return triangular, cholesky, lu, exponential


_PIVOTS = np.array([2, 2, 2], np.int32)   # 0-based row interchanges
_LOSSES = _losses(scipy.linalg, np)


@jit_ps
def _grads(a, y):
    return [grad(loss, argnums=(0, 1))(a, y) for loss in _LOSSES]


def _central_difference(loss, x, *rest, step=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = step
        g[i] = (loss(x + e, *rest) - loss(x - e, *rest)) / (2 * step)
    return g


def test_grads_against_jax_and_central_differences():
    a, y = square((3, 3)), arr((3, 2), seed=1)
    mine = _grads(a, y)
    jax_losses = _losses(jsl, jax.numpy)
    for (ga, gy), loss, jax_loss in zip(mine, _LOSSES, jax_losses):
        ja, jy = jax.grad(jax_loss, argnums=(0, 1))(a, y)
        np.testing.assert_allclose(ga, ja, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(gy, jy, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(ga, _central_difference(loss, a, y), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(gy, _central_difference(lambda v, u: loss(u, v), y, a),
                                   rtol=1e-5, atol=1e-6)
