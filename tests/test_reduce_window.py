"""``lax.reduce_window`` and its reducers against ``jax.lax`` (the oracle): values for
every padding form, strides and dilations, from plain Python and inside ``jit_ps``;
derivatives against ``jax.jvp``/``jax.vjp`` and central differences; errors.

jax runs with 64-bit types inside each test only (`jax.enable_x64`), so other test files
still see the flag off."""
from __future__ import annotations

import jax
import numpy as np
import pytest
from jax import lax as jlax

import transpiler
from transpiler import PSCShapeError, PSCTypeError, PSCUnsupportedCallError, PSCValueError
from transpiler import jit_ps, lax

JAX_REDUCERS = {lax.add: jlax.add, lax.max: jlax.max, lax.min: jlax.min, lax.mul: jlax.mul}
RNG = np.random.default_rng(15)
X = RNG.normal(size=(5, 6))
T = RNG.normal(size=(5, 6))

# (window, strides, padding, base dilation, window dilation)
WINDOWS = [
    ((2, 3), (1, 2), "VALID", None, None),
    ((2, 2), (2, 1), "SAME", None, None),
    ((3, 2), (1, 1), "SAME_LOWER", None, None),
    ((2, 2), (1, 2), ((1, 2), (0, 1)), (2, 1), None),
    ((2, 2), (1, 1), ((0, 1), (2, 0)), None, (2, 2)),
    ((2, 3), (2, 2), "SAME", (1, 2), (2, 1)),
]


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def assert_close(ours, theirs):
    theirs = np.asarray(theirs)
    assert np.asarray(ours).dtype == theirs.dtype and np.shape(ours) == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("window", WINDOWS, ids=lambda w: str(w[2]) + str(w[3:]))
@pytest.mark.parametrize("computation,init", [(lax.add, 0.0), (lax.max, -np.inf),
                                              (lax.min, np.inf), (lax.mul, 1.0)],
                         ids=["add", "max", "min", "mul"])
def test_monoids_match_jax(computation, init, window):
    ours = lax.reduce_window(X, init, computation, *window)
    assert_close(ours, jlax.reduce_window(X, init, JAX_REDUCERS[computation], *window))


@pytest.mark.parametrize("computation,init", [(lax.add, 1.5), (lax.max, 0.25),
                                              (lax.min, -0.5), (lax.mul, 2.0)],
                         ids=["add", "max", "min", "mul"])
def test_other_init_values_start_each_window_once(computation, init):
    window = WINDOWS[3]
    ours = lax.reduce_window(X, init, computation, *window)
    assert_close(ours, jlax.reduce_window(X, init, JAX_REDUCERS[computation], *window))


def weighted(a, b):
    return a * 0.5 + b


def sum_and_max(a, b):
    return a[0] + b[0], lax.max(a[1], b[1])


def test_python_reducers_are_traced_into_the_region():
    window = WINDOWS[1]
    assert_close(lax.reduce_window(X, 0.0, weighted, *window),
                 jlax.reduce_window(X, 0.0, weighted, *window))
    ours = lax.reduce_window((X, T), (0.0, -np.inf), sum_and_max, *window)
    theirs = jlax.reduce_window((X, T), (0.0, -np.inf),
                                lambda a, b: (a[0] + b[0], jlax.max(a[1], b[1])), *window)
    for o, t in zip(ours, theirs):
        assert_close(o, t)


def test_integer_operands_and_defaults():
    x = RNG.integers(-9, 9, (4, 5)).astype(np.int32)
    for computation, init in [(lax.add, np.int32(0)), (lax.max, np.int32(-2**31))]:
        assert_close(lax.reduce_window(x, init, computation, (2, 2)),
                     jlax.reduce_window(x, init, JAX_REDUCERS[computation], (2, 2)))


def test_inside_jit_ps_with_traced_init_and_region():
    @jit_ps
    def pooled(x, floor):
        top = lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1), "SAME")
        floored = lax.reduce_window(x, floor, lax.max, (2, 3), (2, 1), "VALID")
        return top, floored, lax.reduce_window(x, 0.0, weighted, (3, 1), None, "VALID")
    floor = np.float64(0.3)
    ours = pooled(X, floor)
    theirs = [jlax.reduce_window(X, -np.inf, jlax.max, (2, 2), (1, 1), "SAME"),
              jlax.reduce_window(X, floor, jlax.max, (2, 3), (2, 1), "VALID"),
              jlax.reduce_window(X, 0.0, weighted, (3, 1), None, "VALID")]
    for o, t in zip(ours, theirs):
        assert_close(o, t)


def test_reducers_have_jax_lax_strict_dtypes():
    a, b = RNG.normal(size=3), RNG.normal(size=3)
    for ours, theirs in JAX_REDUCERS.items():
        assert_close(ours(a, b), theirs(a, b))
        assert_close(ours(a, np.float64(2.0)), theirs(a, np.float64(2.0)))

    @jit_ps
    def combined(x, y):
        return lax.add(x, y), lax.mul(x, 2.0), lax.max(x, y[0]), lax.min(x, y)
    for o, t in zip(combined(a, b), [jlax.add(a, b), jlax.mul(a, 2.0), jlax.max(a, b[0]),
                                     jlax.min(a, b)]):
        assert_close(o, t)
    with pytest.raises(PSCTypeError, match="same dtypes"):
        lax.add(a.astype(np.float32), a)
    with pytest.raises(PSCTypeError, match="same dtypes"):
        jit_ps(lambda x: lax.max(x, 1))(a)
    with pytest.raises(PSCShapeError, match="incompatible shapes"):
        lax.add(a, np.ones(2))


def test_padtype_to_pads_matches_jax():
    for padding in ("VALID", "SAME", "SAME_LOWER", "same"):
        assert lax.padtype_to_pads((7, 4, 1), (3, 2, 2), (2, 3, 1), padding) == \
            [tuple(p) for p in jlax.padtype_to_pads((7, 4, 1), (3, 2, 2), (2, 3, 1), padding)]


# --- derivatives ------------------------------------------------------------------------

@pytest.mark.parametrize("computation,init,window", [
    (lax.add, 0.0, WINDOWS[0]), (lax.add, 0.0, WINDOWS[3]), (lax.max, -np.inf, WINDOWS[1]),
    (lax.max, -np.inf, WINDOWS[3]), (lax.min, np.inf, WINDOWS[2])],
    ids=["add-valid", "add-dilated", "max-same", "max-dilated", "min-same-lower"])
def test_jvp_and_vjp_match_jax(computation, init, window):
    def ours(x):
        return lax.reduce_window(x, init, computation, *window)

    def theirs(x):
        return jlax.reduce_window(x, init, JAX_REDUCERS[computation], *window)
    value, tangent = transpiler.jvp(ours, (X,), (T,))
    expected_value, expected_tangent = jax.jvp(theirs, (X,), (T,))
    assert_close(value, expected_value)
    assert_close(tangent, expected_tangent)
    ct = RNG.normal(size=np.shape(expected_value))
    assert_close(transpiler.grad(lambda x: (ours(x) * ct).sum())(X),
                 jax.vjp(theirs, X)[1](ct)[0])


def test_window_dilation_differentiates_forward_for_max_and_both_ways_for_sum():
    window = WINDOWS[4]
    for computation, init in [(lax.max, -np.inf), (lax.add, 0.0)]:
        jfn = JAX_REDUCERS[computation]
        _, tangent = transpiler.jvp(lambda x: lax.reduce_window(x, init, computation, *window),
                                    (X,), (T,))
        assert_close(tangent, jax.jvp(lambda x: jlax.reduce_window(x, init, jfn, *window),
                                      (X,), (T,))[1])
    ct = RNG.normal(size=jlax.reduce_window(X, 0.0, jlax.add, *window).shape)
    assert_close(transpiler.grad(lambda x: (lax.reduce_window(x, 0.0, lax.add, *window)
                                            * ct).sum())(X),
                 jax.grad(lambda x: (jlax.reduce_window(x, 0.0, jlax.add, *window)
                                     * ct).sum())(X))
    with pytest.raises(PSCUnsupportedCallError, match="window dilation"):
        transpiler.grad(lambda x: lax.reduce_window(x, -np.inf, lax.max, *window).sum())(X)


def central_difference(f, x, t, step=1e-6):
    return (f(x + step * t) - f(x - step * t)) / (2 * step)


def test_non_identity_init_values_are_differentiated_in_both_operands():
    window = WINDOWS[3]
    ct = RNG.normal(size=jlax.reduce_window(X, 0.0, jlax.add, *window).shape)
    for computation in (lax.add, lax.max):
        def scalar(x, init):
            return (lax.reduce_window(x, init, computation, *window) * ct).sum()
        gx, ginit = transpiler.grad(scalar, argnums=(0, 1))(X, 0.25)
        fx = lambda x: float(scalar(x, 0.25))   # noqa: E731
        fi = lambda c: float(scalar(X, c))   # noqa: E731
        np.testing.assert_allclose((gx * T).sum(), central_difference(fx, X, T), rtol=1e-6)
        np.testing.assert_allclose(ginit, central_difference(fi, 0.25, 1.0), rtol=1e-6)


def test_max_pool_second_derivatives_match_jax():
    window = WINDOWS[1]
    w = RNG.normal(size=jlax.reduce_window(X, 0.0, jlax.add, *window).shape)

    def ours(x):
        return (lax.reduce_window(x * x, -np.inf, lax.max, *window) * w).sum()

    def theirs(x):
        return (jlax.reduce_window(x * x, -np.inf, jlax.max, *window) * w).sum()
    hvp = transpiler.jvp(transpiler.grad(ours), (X,), (T,))[1]
    assert_close(hvp, jax.jvp(jax.grad(theirs), (X,), (T,))[1])
    assert_close(transpiler.grad(lambda x: (transpiler.grad(ours)(x) * T).sum())(X),
                 jax.grad(lambda x: (jax.grad(theirs)(x) * T).sum())(X))


# --- errors ---------------------------------------------------------------------------

def test_bad_windows_are_psc_errors():
    with pytest.raises(PSCShapeError, match="window_dimensions has 1 entries"):
        lax.reduce_window(X, 0.0, lax.add, (2,))
    with pytest.raises(PSCValueError, match="window_strides must be positive"):
        lax.reduce_window(X, 0.0, lax.add, (2, 2), (0, 1))
    with pytest.raises(PSCValueError, match="unrecognized padding"):
        lax.reduce_window(X, 0.0, lax.add, (2, 2), (1, 1), "FULL")
    with pytest.raises(PSCTypeError, match="init value dtype"):
        lax.reduce_window(X, np.float32(0.5), lax.add, (2, 2))
    with pytest.raises(PSCValueError, match="tree structure"):
        lax.reduce_window((X, X), 0.0, lax.add, (2, 2))


def test_undifferentiable_reducers_say_so():
    with pytest.raises(PSCUnsupportedCallError, match="general reducer"):
        transpiler.grad(lambda x: lax.reduce_window(x, 0.0, weighted, (2, 2)).sum())(X)
    with pytest.raises(PSCUnsupportedCallError, match="windowed product"):
        transpiler.grad(lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 2)).sum())(X)


def test_a_reducer_reading_a_traced_value_is_refused():
    @jit_ps
    def leaky(x, scale):
        def scaled(a, b):
            return a + b * scale
        return lax.reduce_window(x, 0.0, scaled, (2, 2))
    with pytest.raises(PSCValueError, match="reads a traced value"):
        leaky(X, 2.0)


def test_ties_choose_the_element_jax_chooses():
    """A max pool after a relu sees many equal elements: the tangent and the cotangent go
    to the same element of each window as in jax (the first in window order)."""
    x = np.zeros((4, 5))
    x[1, 1] = 1.0
    window = ((3, 3), (2, 2), "SAME")

    def ours(v):
        return lax.reduce_window(v, -np.inf, lax.max, *window)

    def theirs(v):
        return jlax.reduce_window(v, -np.inf, jlax.max, *window)
    assert_close(transpiler.jvp(ours, (x,), (T[:4, :5],))[1],
                 jax.jvp(theirs, (x,), (T[:4, :5],))[1])
    assert_close(transpiler.grad(lambda v: ours(v).sum())(x),
                 jax.grad(lambda v: theirs(v).sum())(x))
