"""Autodiff on small models: the README's MLP (gradients and an SGD loop), a log-space
HMM forward pass, logistic regression (gradient and Hessian-vector product), a convex
quadratic (exact gradient and Hessian), and gradients through gradient descent.

The PSC programs are in `ad_corpus.functions`; the JAX oracles below are the same programs
written with ``jax.numpy`` (float64), used only as oracles.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ad_corpus import functions as F
from ad_corpus.oracles import close, close_tree, jax_x64  # noqa: F401
from transpiler import grad, hessian, jacfwd, jit_ps, value_and_grad


# --- MLP -------------------------------------------------------------------------------------

def jax_predict(params, inputs):
    for W, b in params:
        outputs = jnp.dot(inputs, W) + b
        inputs = jnp.tanh(outputs)
    return outputs


def jax_mlp_loss(params, batch):
    inputs, targets = batch
    return jnp.sum((jax_predict(params, inputs) - targets) ** 2)


def mlp_problem(seed=0, sizes=(4, 8, 3), n=16):
    rng = np.random.default_rng(seed)
    params = [(rng.standard_normal((m, k)) * 0.5, rng.standard_normal(k) * 0.1)
              for m, k in zip(sizes[:-1], sizes[1:])]
    inputs = rng.standard_normal((n, sizes[0]))
    targets = np.sin(inputs[:, :sizes[-1]])
    return params, (inputs, targets)


@jit_ps
def mlp_value_and_grad(params, batch):
    return value_and_grad(F.mlp_loss)(params, batch)


update = jit_ps(F.sgd_update)
mlp_loss = jit_ps(F.mlp_loss)


def test_mlp_gradient_matches_jax():
    params, batch = mlp_problem()
    value, g = mlp_value_and_grad(params, batch)
    jvalue, jg = jax.value_and_grad(jax_mlp_loss)(params, batch)
    close(value, jvalue)
    assert isinstance(g, list) and all(isinstance(layer, tuple) for layer in g)
    close_tree(g, jg)
    # the same from plain Python
    close_tree(grad(F.mlp_loss)(params, batch), jg)


def test_mlp_gradient_by_finite_differences():
    params, batch = mlp_problem(seed=1, sizes=(3, 4, 2), n=5)
    g = grad(F.mlp_loss)(params, batch)
    h = 1e-6
    for layer in range(2):
        for leaf in range(2):
            x = params[layer][leaf]
            for k in np.ndindex(x.shape):
                def moved(delta):
                    y = x.copy()
                    y[k] += delta
                    p = [list(t) for t in params]
                    p[layer][leaf] = y
                    return F.mlp_loss([tuple(t) for t in p], batch)
                fd = (moved(h) - moved(-h)) / (2 * h)
                np.testing.assert_allclose(np.asarray(g[layer][leaf])[k], fd, rtol=1e-6,
                                           atol=1e-7)


def test_sgd_loop_decreases_loss_and_matches_jax():
    params, batch = mlp_problem(seed=2)
    jax_update = jax.jit(lambda p, b: [(W - F.STEP * dW, c - F.STEP * dc) for (W, c), (dW, dc)
                                       in zip(p, jax.grad(jax_mlp_loss)(p, b))])
    ours, theirs = params, params
    losses = [float(np.asarray(mlp_loss(ours, batch)))]
    for _ in range(3):
        ours = update(ours, batch)
        theirs = jax_update(theirs, batch)
        losses.append(float(np.asarray(mlp_loss(ours, batch))))
    assert all(later < earlier for earlier, later in zip(losses, losses[1:])), losses
    assert isinstance(ours, list) and len(ours) == 2
    close_tree(ours, theirs, rtol=1e-9, atol=1e-11)
    close(losses[-1], jax_mlp_loss(theirs, batch), 1e-9, 1e-11)
    assert update.cache_info().misses == 1     # one compilation for the three steps


# --- HMM forward algorithm ----------------------------------------------------------------------

S, V, T = 10, 20, 30


def jax_log_softmax_rows(z):
    m = jnp.max(z, axis=-1, keepdims=True)
    return z - (m + jnp.log(jnp.sum(jnp.exp(z - m), axis=-1, keepdims=True)))


def jax_logsumexp_first_axis(a):
    m = jnp.max(a, axis=0)
    return m + jnp.log(jnp.sum(jnp.exp(a - m), axis=0))


def jax_hmm_log_likelihood(params, obs):
    init_logits, trans_logits, emit_logits = params
    log_pi = jax_log_softmax_rows(init_logits)
    log_A = jax_log_softmax_rows(trans_logits)
    log_B = jax_log_softmax_rows(emit_logits)

    def step(t, alpha):
        return jax_logsumexp_first_axis(alpha[:, None] + log_A) + log_B[:, obs[t]]
    alpha = jax.lax.fori_loop(1, obs.shape[0], step, log_pi + log_B[:, obs[0]])
    m = jnp.max(alpha)
    return m + jnp.log(jnp.sum(jnp.exp(alpha - m)))


def hmm_problem(seed=3):
    rng = np.random.default_rng(seed)
    params = (rng.standard_normal(S), rng.standard_normal((S, S)),
              rng.standard_normal((S, V)))
    obs = rng.integers(0, V, T).astype(np.int32)
    return params, obs


def brute_force_likelihood(params, obs):
    """p(obs) by the forward recursion in probability space (plain NumPy)."""
    def softmax(z):
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    pi, A, B = (softmax(p) for p in params)
    alpha = pi * B[:, obs[0]]
    for o in obs[1:]:
        alpha = (alpha @ A) * B[:, o]
    return np.log(alpha.sum())


@jit_ps
def hmm_value_and_grad(params, obs):
    return value_and_grad(F.hmm_log_likelihood)(params, obs)


@jit_ps
def hmm_value_and_grad_fori(params, obs):
    return value_and_grad(F.hmm_log_likelihood_fori)(params, obs)


@pytest.mark.parametrize("fn", [hmm_value_and_grad, hmm_value_and_grad_fori],
                         ids=["for_range", "fori_loop"])
def test_hmm_value_and_gradient_match_jax(fn):
    params, obs = hmm_problem()
    value, g = fn(params, obs)
    jvalue, jg = jax.jit(jax.value_and_grad(jax_hmm_log_likelihood))(params, obs)
    close(value, jvalue)
    close(value, brute_force_likelihood(params, obs), 1e-10, 0)
    assert isinstance(g, tuple) and len(g) == 3
    close_tree(g, jg, rtol=1e-9, atol=1e-11)
    # softmax logits: each row's gradient sums to zero (shift invariance)
    np.testing.assert_allclose(np.asarray(g[1]).sum(axis=1), 0.0, atol=1e-10)
    np.testing.assert_allclose(np.asarray(g[2]).sum(axis=1), 0.0, atol=1e-10)


def test_hmm_gradient_by_finite_differences_along_a_direction():
    params, obs = hmm_problem(seed=4)
    _, g = hmm_value_and_grad(params, obs)
    rng = np.random.default_rng(5)
    direction = tuple(rng.standard_normal(p.shape) for p in params)
    h = 1e-6
    plus = tuple(p + h * d for p, d in zip(params, direction))
    minus = tuple(p - h * d for p, d in zip(params, direction))
    fd = (F.hmm_log_likelihood(plus, obs) - F.hmm_log_likelihood(minus, obs)) / (2 * h)
    ours = sum(float(np.sum(np.asarray(gi) * d)) for gi, d in zip(g, direction))
    np.testing.assert_allclose(ours, fd, rtol=1e-6)


# --- logistic regression ----------------------------------------------------------------------------

def jax_logistic_loss(w, X, y, lam):
    z = X @ w
    return jnp.mean(jnp.logaddexp(0.0, -y * z)) + lam * jnp.sum(w * w)


def logistic_problem(seed=6, n=40, d=5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return rng.standard_normal(d) * 0.5, X, y, 0.1


logistic_hvp = jit_ps(F.logistic_hvp)


def test_logistic_regression_gradient():
    w, X, y, lam = logistic_problem()
    g = grad(F.logistic_loss)(w, X, y, lam)
    close(g, jax.grad(jax_logistic_loss)(w, X, y, lam))
    margin = y * (X @ w)
    analytic = X.T @ (-y / (1.0 + np.exp(margin))) / len(y) + 2 * lam * w
    close(g, analytic, 1e-12, 1e-14)


def test_logistic_regression_hessian_vector_product():
    w, X, y, lam = logistic_problem()
    v = np.random.default_rng(7).standard_normal(w.shape)
    g, hv = logistic_hvp(w, X, y, lam, v)
    jg, jhv = jax.jvp(lambda u: jax.grad(jax_logistic_loss)(u, X, y, lam), (w,), (v,))
    close(g, jg)
    close(hv, jhv)
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    H = X.T @ (X * (p * (1 - p))[:, None]) / len(y) + 2 * lam * np.eye(len(w))
    close(hv, H @ v, 1e-10, 1e-12)
    close(hessian(F.logistic_loss)(w, X, y, lam), H, 1e-10, 1e-12)


# --- convex quadratic ------------------------------------------------------------------------------

def quadratic_problem(seed=8, d=6):
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((d, d))
    A = M @ M.T + d * np.eye(d)
    return rng.standard_normal(d), A, rng.standard_normal(d)


def test_quadratic_gradient_and_hessian_exact():
    x, A, b = quadratic_problem()
    g = grad(F.quadratic)(x, A, b)
    close(g, A @ x - b, 1e-13, 1e-13)
    H = hessian(F.quadratic)(x, A, b)
    close(H, A, 1e-15, 0)
    close(jacfwd(grad(F.quadratic))(x, A, b), A, 1e-15, 0)
    # the minimiser: the gradient vanishes at A^-1 b
    close(grad(F.quadratic)(np.linalg.solve(A, b), A, b), np.zeros_like(b), 0, 1e-12)


# --- gradients through gradient descent ------------------------------------------------------------

@jit_ps(static_argnames=("steps",))
def descend(x, steps):
    return F.descend(x, steps)


@jit_ps(static_argnames=("steps",))
def meta_gradient(x0, steps):
    return value_and_grad(F.meta_loss)(x0, steps)


def jax_bowl(x):
    return jnp.sum(x ** 4) + jnp.sum(jnp.cos(x) * x)


def jax_descend(x, steps):
    for _ in range(steps):
        x = x - 0.05 * jax.grad(jax_bowl)(x)
    return x


def test_gradient_descent_inside_jit():
    x = np.array([0.9, -0.6, 0.3])
    close(descend(x, 4), jax_descend(x, 4))
    assert "stablehlo.while" in descend.lower(x, 4)


def test_gradient_through_gradient_descent():
    """Reverse mode through a staged loop whose body is itself a backward pass (needs the
    second derivative of the loss)."""
    x = np.array([0.9, -0.6, 0.3])
    value, g = meta_gradient(x, 3)
    jvalue, jg = jax.value_and_grad(lambda x0: jnp.sum(jax_descend(x0, 3) ** 2))(x)
    close(value, jvalue)
    close(g, jg, 1e-9, 1e-11)
