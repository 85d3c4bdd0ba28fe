"""``scipy.special`` rules against scipy (values, dtypes, NaN/inf, empty arrays) and their
derivatives against ``jax.scipy.special`` (64-bit) and central differences."""
from __future__ import annotations

import warnings

import jax
import jax.scipy.special as jsp
import numpy as np
import pytest
import scipy.special as sc

import transpiler
from ad_corpus.oracles import jax_x64  # noqa: F401
from conftest import assert_same
from runtime import PSCTypeError, StagedFunction, translate
from transpiler import jit_ps

RNG = np.random.default_rng(7)
SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 30.0, -30.0, np.inf, -np.inf,
                    np.nan])
UNIT = np.array([0.0, 1.0, 0.5, 1e-10, 1 - 1e-10, 0.025, 0.975, 0.3, -0.5, 1.5, np.nan])
UNARY = {"erf": SPECIAL, "erfc": SPECIAL, "erfinv": np.concatenate([2 * UNIT - 1, [-1.0]]),
         "gammaln": np.array([0.5, 1.0, 2.0, 3.7, 10.0, 170.0, -1.5, -0.3, 0.0, np.inf]),
         "digamma": np.array([0.5, 1.0, 2.0, 3.7, 10.0, 170.0, -1.5, -0.3, np.inf]),
         "psi": np.array([0.1, 4.0]),
         "expit": SPECIAL, "logit": UNIT, "ndtr": SPECIAL, "ndtri": UNIT}
TOL = {np.float32: 3e-6, np.float64: 1e-12}


def _scipy(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def check(fn, groups, rtol, atol=0.0, **kwargs):
    expected = [_scipy(fn, *args, **kwargs) for args in groups]

    def build(b, groups):
        return [translate(b, fn, *args, **kwargs) for args in groups]
    assert_same(StagedFunction(build)(groups), expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_special_functions_match_scipy(name):
    fn, points = getattr(sc, name), UNARY[name]
    for dtype in (np.float32, np.float64):
        finite = points[np.isfinite(points)]
        sample = RNG.uniform(finite.min(), finite.max(), (2, 5)).astype(dtype)
        groups = [(points.astype(dtype),), (sample,), (np.zeros((0,), dtype),),
                  (dtype(points[-1]),)]
        # (XLA's float64 erf_inv and float32 lgamma are a little less exact than scipy's)
        rtol = TOL[dtype] * {"digamma": 30, "psi": 30, "erfinv": 10}.get(name, 1)
        atol = 1e-6 if name == "gammaln" and dtype == np.float32 else TOL[dtype] * 1e-3
        check(fn, groups, rtol=rtol, atol=atol)
    ints = np.array([1, 2, 3]) if name not in ("logit", "ndtri", "erfinv") else np.array([0, 1])
    check(fn, [(ints,), (ints.astype(np.int8),), (ints > 1,)], rtol=1e-12)


def test_binary_special_functions_match_scipy():
    x = np.array([0.0, 0.0, 0.0, 0.0, 1.0, 2.5, -1.0, np.nan, 3.0, 0.0])
    y = np.array([0.0, np.nan, -1.0, 2.0, 0.0, 3.0, 2.0, 1.0, np.inf, np.inf])
    for fn in (sc.xlogy, sc.xlog1py):
        check(fn, [(x, y), (x.astype(np.float32), y.astype(np.float32)),
                   (np.array([1, 0, 2]), np.array([3, 4, 5])), (x.astype(np.float32), 2.0),
                   (np.zeros((0,)), np.zeros((0,)))], rtol=1e-6)


def test_complex_arguments_are_refused():
    with pytest.raises(PSCTypeError, match="complex"):
        StagedFunction(lambda b, z: translate(b, sc.erf, z))(np.array([1j]))


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)])
def test_logsumexp_softmax_log_softmax_match_scipy(axis):
    x = np.array([[1.0, -np.inf, 3.0], [800.0, 799.0, -800.0]])
    for a in (x, x.astype(np.float32), np.array([[1, 2, 3], [4, 5, 6]])):
        check(sc.logsumexp, [(a,)], rtol=3e-6, axis=axis)
        check(sc.logsumexp, [(a,)], rtol=3e-6, axis=axis, keepdims=True)
        check(sc.softmax, [(a,)], rtol=3e-6, atol=1e-30, axis=axis)
        check(sc.log_softmax, [(a,)], rtol=3e-6, axis=axis)
    weights = np.array([[1.0, 2.0, -1.0], [0.5, -3.0, 0.0]])
    for sign in (False, True):
        actual = StagedFunction(lambda bb, a, w: translate(bb, sc.logsumexp, a, axis, w,
                                                           return_sign=sign))(x, weights)
        assert_same(actual, _scipy(sc.logsumexp, x, axis, weights, return_sign=sign),
                    rtol=1e-12)
    if isinstance(axis, int):   # (scipy 1.17 fails on empty arrays with other axes)
        check(sc.logsumexp, [(np.zeros((0, 3)),)], rtol=0, axis=axis)


def test_special_functions_under_jit_ps():
    def f(x, p):
        return sc.erf(x) + sc.gammaln(x + 3.0) + sc.xlogy(x, p) + sc.ndtri(p), \
            sc.logsumexp(x, axis=0), sc.softmax(x)
    x, p = np.array([0.5, -1.0, 2.0]), np.array([0.1, 0.5, 0.9])
    assert_same(jit_ps(f)(x, p), f(x, p), rtol=1e-12)

# --- derivatives -----------------------------------------------------------------------------


def _loss(name, jax_module):
    fn = getattr(jax_module, name)
    weights = np.linspace(0.5, 1.5, 6)

    def loss(x):
        return (fn(x) * weights).sum()
    return loss


POINTS = {"erf": np.linspace(-2, 2, 6), "erfc": np.linspace(-2, 2, 6),
          "erfinv": np.linspace(-0.9, 0.9, 6), "gammaln": np.linspace(0.3, 6, 6),
          "digamma": np.linspace(0.3, 6, 6), "expit": np.linspace(-5, 5, 6),
          "logit": np.linspace(0.05, 0.95, 6), "ndtr": np.linspace(-4, 4, 6),
          "ndtri": np.array([1e-6, 0.02, 0.3, 0.5, 0.8, 0.999])}


@pytest.mark.parametrize("name", sorted(POINTS))
def test_gradients_match_jax_and_central_differences(name, jax_x64):  # noqa: F811
    x = POINTS[name]
    ours = transpiler.grad(_loss(name, sc))(x)
    theirs = np.asarray(jax.grad(_loss(name, jsp))(x))
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)
    step = 1e-6 * np.maximum(1e-3, np.minimum(x, 1 - x)) if name == "ndtri" else 1e-6
    loss = _loss(name, sc)
    central = [(loss(x + step * e) - loss(x - step * e)) / (2 * step)
               for e in np.eye(len(x))]
    central = np.array([c if np.ndim(c) == 0 else c[i] for i, c in enumerate(central)])
    np.testing.assert_allclose(ours, central, rtol=1e-5)


def test_xlogy_and_logsumexp_gradients_match_jax(jax_x64):  # noqa: F811
    x = np.array([0.0, 0.5, 2.0, 0.0])
    y = np.array([2.0, 0.3, 1.5, 0.7])
    for fn, jfn in ((sc.xlogy, jsp.xlogy), (sc.xlog1py, jsp.xlog1py)):
        ours = transpiler.grad(lambda a, c: fn(a, c).sum(), argnums=(0, 1))(x, y)
        theirs = jax.grad(lambda a, c: jfn(a, c).sum(), argnums=(0, 1))(x, y)
        for o, t in zip(ours, theirs):
            np.testing.assert_allclose(o, np.asarray(t), rtol=1e-12)
    a = RNG.normal(size=(3, 4))
    ours = transpiler.grad(lambda v: (sc.log_softmax(v, axis=1) * a).sum()
                           + sc.logsumexp(v))(a)
    theirs = jax.grad(lambda v: (jax.nn.log_softmax(v, axis=1) * a).sum()
                      + jsp.logsumexp(v))(a)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-12)
