"""``transpiler.nn`` against ``jax.nn`` (the oracle) on the same inputs: values, derivatives
(``jax.grad``), inside ``jit_ps`` and from plain Python; ``max_pool``/``avg_pool`` against
flax's definitions, re-expressed here with ``jax.lax.reduce_window`` (flax is not
installed).  jax runs with 64-bit types inside each test only."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax as jlax

import transpiler
from transpiler import PSCTypeError, PSCValueError, jit_ps, nn

RNG = np.random.default_rng(2)
# kinks (0, 6), large magnitudes (softplus/logsumexp must not overflow) and ordinary values
X = np.concatenate([[0.0, 6.0, -800.0, 800.0, 1e-3], RNG.normal(size=7) * 3]).reshape(3, 4)

ELEMENTWISE = ["relu", "relu6", "sigmoid", "silu", "swish", "softplus", "log_sigmoid",
               "elu", "selu", "gelu"]


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def assert_close(ours, theirs, tol=1e-12):
    theirs = np.asarray(theirs)
    assert np.asarray(ours).dtype == theirs.dtype and np.shape(ours) == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_activations_and_their_gradients_match_jax(name):
    ours, theirs = getattr(nn, name), getattr(jax.nn, name)
    assert_close(ours(X), theirs(X))
    # relu's and relu6's derivative at the kinks is jax's (0)
    assert_close(transpiler.grad(lambda x: ours(x).sum())(X),
                 jax.grad(lambda x: theirs(x).sum())(X))


def test_gelu_exact_elu_alpha_and_float32():
    assert_close(nn.gelu(X, approximate=False), jax.nn.gelu(X, approximate=False))
    assert_close(transpiler.grad(lambda x: nn.gelu(x, False).sum())(X),
                 jax.grad(lambda x: jax.nn.gelu(x, False).sum())(X))
    assert_close(nn.elu(X, 0.5), jax.nn.elu(X, 0.5))
    x32 = X.astype(np.float32)
    for name in ("gelu", "softplus", "sigmoid"):
        assert_close(getattr(nn, name)(x32), getattr(jax.nn, name)(x32), tol=1e-6)


@pytest.mark.parametrize("axis", [-1, (0, 1)])
def test_softmax_and_log_softmax_match_jax(axis):
    w = RNG.normal(size=X.shape)
    for name in ("softmax", "log_softmax"):
        ours, theirs = getattr(nn, name), getattr(jax.nn, name)
        assert_close(ours(X, axis=axis), theirs(X, axis=axis))
        assert_close(transpiler.grad(lambda x: (ours(x, axis) * w).sum())(X),
                     jax.grad(lambda x: (theirs(x, axis) * w).sum())(X))


def test_softmax_where_masks():
    mask = X > -1
    for name in ("softmax", "log_softmax"):
        assert_close(getattr(nn, name)(X, axis=1, where=mask),
                     getattr(jax.nn, name)(X, axis=1, where=mask))


def test_logsumexp_matches_jax():
    b = RNG.normal(size=X.shape)
    assert_close(nn.logsumexp(X), jax.nn.logsumexp(X))
    assert_close(nn.logsumexp(X, axis=1, keepdims=True), jax.nn.logsumexp(X, 1, keepdims=True))
    assert_close(nn.logsumexp(X, axis=0, b=b), jax.nn.logsumexp(X, 0, b=b))  # NaN where < 0
    for o, t in zip(nn.logsumexp(X, 1, b, return_sign=True),
                    jax.nn.logsumexp(X, 1, b, return_sign=True)):
        assert_close(o, t)
    mask = X < 100
    assert_close(nn.logsumexp(X, 1, where=mask), jax.nn.logsumexp(X, 1, where=mask))
    assert_close(transpiler.grad(lambda x: nn.logsumexp(x, 1).sum())(X),
                 jax.grad(lambda x: jax.nn.logsumexp(x, 1).sum())(X))


def test_standardize_and_one_hot_match_jax():
    y = RNG.normal(size=(3, 5))
    assert_close(nn.standardize(y), jax.nn.standardize(y))
    assert_close(nn.standardize(y, axis=0, where=y > -1), jax.nn.standardize(y, 0, where=y > -1))
    assert_close(nn.standardize(y, mean=0.5, variance=2.0), jax.nn.standardize(y, mean=0.5,
                                                                              variance=2.0))
    assert_close(transpiler.grad(lambda v: (nn.standardize(v) * y).sum())(y),
                 jax.grad(lambda v: (jax.nn.standardize(v) * y).sum())(y))
    labels = np.array([[0, 3], [2, -1]])
    assert_close(nn.one_hot(labels, 4), jax.nn.one_hot(labels, 4))
    assert_close(nn.one_hot(labels, 4, dtype=np.int32, axis=0),
                 jax.nn.one_hot(labels, 4, dtype=np.int32, axis=0))


def test_inside_jit_ps_and_differentiated():
    w = RNG.normal(size=(4, 3))

    @jit_ps
    def loss(x, labels):
        logits = nn.gelu(x @ w) + nn.relu(x).sum() * 0.1
        return -(nn.log_softmax(logits) * nn.one_hot(labels, 3)).sum() + nn.logsumexp(x)

    def reference(x, labels):
        logits = jax.nn.gelu(x @ w) + jax.nn.relu(x).sum() * 0.1
        return -(jax.nn.log_softmax(logits) * jax.nn.one_hot(labels, 3)).sum() + \
            jax.nn.logsumexp(x)
    x, labels = RNG.normal(size=(5, 4)), np.array([0, 2, 1, 1, 0])
    assert_close(loss(x, labels), reference(x, labels))
    assert_close(transpiler.grad(loss)(x, labels), jax.grad(reference)(x, labels))


# --- pooling: flax.linen.pooling's definitions, re-expressed with jax.lax ------------------

def flax_pool(inputs, init, reduce_fn, window_shape, strides, padding):
    batch_dims = inputs.ndim - (len(window_shape) + 1)
    strides = strides or (1,) * len(window_shape)
    strides = (1,) * batch_dims + tuple(strides) + (1,)
    dims = (1,) * batch_dims + tuple(window_shape) + (1,)
    if not isinstance(padding, str):
        padding = ((0, 0),) * batch_dims + tuple(map(tuple, padding)) + ((0, 0),)
    return jlax.reduce_window(inputs, init, reduce_fn, dims, strides, padding)


def flax_max_pool(inputs, window_shape, strides=None, padding="VALID"):
    return flax_pool(inputs, -jnp.inf, jlax.max, window_shape, strides, padding)


def flax_avg_pool(inputs, window_shape, strides=None, padding="VALID", count_include_pad=True):
    y = flax_pool(inputs, 0.0, jlax.add, window_shape, strides, padding)
    if count_include_pad:
        return y / np.prod(window_shape)
    div_shape = inputs.shape[:-1] + (1,)
    if len(div_shape) - 2 == len(window_shape):
        div_shape = (1,) + div_shape[1:]
    return y / flax_pool(jnp.ones(div_shape), 0.0, jlax.add, window_shape, strides, padding)


IMAGES = RNG.normal(size=(2, 5, 6, 3))


@pytest.mark.parametrize("window,strides,padding", [
    ((2, 2), None, "VALID"), ((3, 2), (2, 1), "SAME"), ((2, 3), (1, 2), ((1, 0), (1, 1)))])
def test_pools_match_flax(window, strides, padding):
    assert_close(nn.max_pool(IMAGES, window, strides, padding),
                 flax_max_pool(IMAGES, window, strides, padding))
    for include in (True, False):
        assert_close(nn.avg_pool(IMAGES, window, strides, padding, include),
                     flax_avg_pool(IMAGES, window, strides, padding, include))
    ct = RNG.normal(size=flax_max_pool(IMAGES, window, strides, padding).shape)
    assert_close(transpiler.grad(lambda v: (nn.max_pool(v, window, strides, padding)
                                            * ct).sum())(IMAGES),
                 jax.grad(lambda v: (flax_max_pool(v, window, strides, padding)
                                     * ct).sum())(IMAGES))
    assert_close(transpiler.grad(lambda v: (nn.avg_pool(v, window, strides, padding, False)
                                            * ct).sum())(IMAGES),
                 jax.grad(lambda v: (flax_avg_pool(v, window, strides, padding, False)
                                     * ct).sum())(IMAGES))


def test_unbatched_pool_inside_jit_ps():
    image = IMAGES[0]

    @jit_ps
    def pooled(x):
        return nn.max_pool(x, (2, 2), (2, 2), "SAME"), nn.avg_pool(x, (2, 2))
    for o, t in zip(pooled(image), [flax_max_pool(image, (2, 2), (2, 2), "SAME"),
                                    flax_avg_pool(image, (2, 2))]):
        assert_close(o, t)


def test_errors():
    with pytest.raises(PSCTypeError, match="num_classes must be a static"):
        nn.one_hot(np.array([1, 2]), 3.0)
    with pytest.raises(PSCValueError, match="one \\(low, high\\) pair per window"):
        nn.max_pool(IMAGES, (2, 2), padding=((1, 1),))
    with pytest.raises(PSCValueError, match="no room for a window"):
        nn.avg_pool(IMAGES[0, 0], (2, 2))
